"""MemWeaver's mechanism statistics: seed triples, forced passages, and the triples the Eq. 10 LLM selector
chose and those backfilled after it (None, with a note saying why, when no trace has the selector on)."""

from __future__ import annotations

from typing import Any

from memcore.systems.memweaver.structure import SELECTOR_KEY, MemWeaverStructure
from memcore.systems.parts import Mechanism, Stats, mean


def question(structure: dict[str, Any]) -> Stats:
    """One answer's seeds, forced passages and selected / backfilled triples."""
    st = MemWeaverStructure.from_dict(structure)
    return {"seeds": st.seed_triples, "passages_forced": st.forced_passages,
            "triples_selected": st.triples_selected, "triples_backfilled": st.triples_backfilled,
            "selector": st.has_selector_key}


def summarize(stats: list[Stats], _: dict[str, Any]) -> Stats:
    """Means over questions; `triples_selected_note` when there is no selector figure."""
    out = {"seeds_mean": mean([s["seeds"] for s in stats]),
           "passages_forced_mean": mean([s["passages_forced"] for s in stats]),
           "triples_selected_mean": mean([s["triples_selected"] for s in stats]),
           "triples_backfilled_mean": mean([s.get("triples_backfilled") for s in stats])}
    if out["triples_selected_mean"] is None:
        out["triples_selected_note"] = (
            "the LLM triple selector was off in these traces" if any(s["selector"] for s in stats) else
            f"no LLM triple selector in these traces (no structure.{SELECTOR_KEY})")
    return out


MECHANISM = Mechanism(question, summarize, {
    "seeds_mean": "seed triples per question",
    "passages_forced_mean": "passages forced from the global pool per question",
    "triples_selected_mean": "triples chosen by the Eq. 10 LLM selector per question",
    "triples_backfilled_mean": "triples added after the selector per question"})
