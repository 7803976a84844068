"""The offline engine writes the same memory under every string hash seed (issue 38).

RecMem's first builds of one BEAM chat gave two memories: a merge appended other sentences to an episode
because `narrative` summed keyword weights as floats over a set, whose order follows PYTHONHASHSEED, so
equally central sentences scored 14.15 or 14.149999999999999 by the run. The hash seed is fixed when a
process starts, so each seed runs in its own interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Five sentences of one message; the third and fourth are equally central (keyword weights 0.9 + 0.6 + 0.4 +
# 0.3 ... summed in another order round to another float): before the fix seeds 0 and 1 picked different ones.
TEXT = ("I bought the basil and the seeds and the soil and the sunlight and the water. I moved the ladder and the "
        "fence and the harvest and the soil. I cleaned the sunlight and the basil and the tomato and the garden "
        "and the ladder. I cleaned the sunlight and the water and the garden and the compost and the seeds. "
        "I checked the water and the sunlight and the shovel and the fence.")
FIRST_TIED = "user cleaned the sunlight and the basil and the tomato and the garden and the ladder."
SEEDS = ("0", "1", "9", "12")

PROBE = r"""
import json, sys
from memcore.llm.offline.memory_writing import narrative
from memcore.systems.recmem.offline import offline_merge
text = sys.argv[1]
msgs = [{"speaker": "user", "date": "2024-04-10", "turn_id": "D1:1", "text": text}]
merged = offline_merge({"title": "garden", "content": "user worked on the garden: basil, tomato, seeds, sunlight, water.",
                        "messages": msgs, "speakers": ["user", "assistant"]})
print(json.dumps({"narrative": [narrative(msgs, ["user", "assistant"], b) for b in (1, 2, 3)], "merge": merged}))
"""


def _run(seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", PROBE, TEXT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_narrative_and_recmem_merge_do_not_depend_on_the_hash_seed() -> None:
    runs = {seed: _run(seed) for seed in SEEDS}
    first = runs[SEEDS[0]]
    for seed, got in runs.items():
        assert got == first, f"PYTHONHASHSEED={seed} wrote another memory than PYTHONHASHSEED={SEEDS[0]}"
    # the tie breaks by position: the earlier of the two equally central sentences
    assert first["narrative"][0].endswith(FIRST_TIED), first["narrative"][0]
    assert first["merge"]["merge"] is True and FIRST_TIED in first["merge"]["content"]
