"""A run names the limits it met: long turns (embedded whole), the context window, prompts that did not fit."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from memcore.embed import HashingEmbedder
from memcore.eval.limits import limit_lines
from memcore.eval.report import format_table
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.workbench import Workbench


class WindowedHashing(HashingEmbedder):
    """The hashing embedder declaring a 12-word window (its tokens: words), so some demo turns exceed it."""

    window = 12

    def text_tokens(self, texts: Sequence[str]) -> list[int]:
        """Words per text."""
        return [len(re.findall(r"[a-z0-9]+", t.lower())) for t in texts]


def test_results_count_long_turns_and_prompts_that_do_not_fit(tmp_path: Path) -> None:
    s = Settings(store_uri=str(tmp_path / "s"), embedder="hashing", llm_provider="offline", llm_context_window=900)
    emb = WindowedHashing()
    wb = Workbench(s, embedder=emb)
    conv = wb.load_demo()
    long = sum(len(re.findall(r"[a-z0-9]+", t.embed_text.lower())) > 12 for t in conv.turns)
    assert 0 < long < len(conv.turns)
    res = run_eval(s, "demo", systems=["full_context", "naive_rag[k=60]"], limit=2, judge=False, workbench=wb)
    lim = res["limits"]
    assert lim["long_turns"] == {"window": 12, "rule": "mean-of-chunks", "over": long, "of": len(conv.turns)}
    assert lim["context_window"] == {"tokens": 900, "source": "setting"}
    # naive_rag's 60 turns do not fit 900 tokens: not sent, counted; full_context cut its context instead
    assert lim["does_not_fit"] == {"naive_rag[k=60]": 2} and res["systems"]["naive_rag[k=60]"]["overall"]["n"] == 0
    assert res["systems"]["full_context"]["fallbacks"]["context_cut"] == 2
    text = format_table(res)
    assert f"long turns: {long} of {len(conv.turns)} turns exceed the embedder's 12-token window" in text
    assert "context window: 900 tokens (setting)" in text and "naive_rag[k=60] 2" in text
    assert limit_lines({}) == []  # results from before limits existed say nothing


def test_the_cost_preview_simulates_the_models_window(tmp_path: Path) -> None:
    from memcore.eval.estimate import estimate_eval

    s = Settings(store_uri=str(tmp_path / "s"), embedder="hashing", llm_provider="simulated", llm_model="gpt-4",
                 cache_dir=str(tmp_path / "c"), llm_context_window=1200)
    est = estimate_eval(s, dataset="demo", systems=["full_context", "naive_rag[k=60]"], limit=2, judge=False)
    notes = " | ".join(est.notes)
    # the demo's whole transcript (~2,300 tokens) does not fit 1,200: full_context's context is cut, and
    # naive_rag's 60 turns are not sent (no tokens counted for them)
    assert "context is cut to fit" in notes and "full_context 2" in notes, notes
    assert "(does not fit) the context window of gpt-4" in notes and "naive_rag[k=60] 2" in notes, notes
    answers = {r.system: r for r in est.rows if r.stage == "answer"}
    assert 0 < answers["full_context"].prompt_tokens <= 2 * 1200 and answers["naive_rag"].prompt_tokens == 0
