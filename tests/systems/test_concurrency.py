"""Results do not depend on the LLM concurrency: the same items, events (in order), traces, scores and
ledger at N=1 and N=16, with the latency simulator in front of the offline engine."""

from __future__ import annotations

import collections
import json

import pytest

from memcore.datasets import load_demo
from memcore.eval.report import diff_results
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.workbench import Workbench

SYSTEMS = ["xmemory", "memweaver", "memcot", "naive_rag"]


def run(tmp_path, n: int) -> dict:
    s = Settings(store_uri=str(tmp_path / f"store{n}"), llm_provider="simulated", embedder="hashing",
                 llm_concurrency=n, sim_delay_ms=2.0, sim_jitter_ms=2.0)
    wb = Workbench(s)
    res = run_eval(s, "demo", None, SYSTEMS, categories=["1", "2", "3", "4", "5"], workbench=wb)
    conv = load_demo()
    out: dict = {"results": res, "peak": wb.llm.scheduler.peak_in_flight}
    for name in SYSTEMS:
        space = wb.space(name, conv)
        out[f"{name}:events"] = [(e.step, e.kind, e.item_ids, e.reason, json.dumps(e.data, sort_keys=True))
                                 for e in wb.store.events(space, conv.id)]
        sys_ = wb.system(name, conv)
        out[f"{name}:items"] = sorted((it.id, it.kind, it.text, tuple(it.turn_ids), tuple(it.sources),
                                       json.dumps(it.metadata, sort_keys=True, default=str))
                                      for it in sys_.memory.items.values())
        recs = [r for r in wb.ledger.records if r.system == name]
        # program order of construction calls (booked at use), and the multiset of every call
        out[f"{name}:construction"] = [(r.role, r.step, r.prompt_tokens, r.completion_tokens)
                                       for r in recs if r.stage == "construction"]
        out[f"{name}:calls"] = sorted(collections.Counter(
            (r.role, r.stage, r.step, r.prompt_tokens, r.completion_tokens) for r in recs).items())
        out[f"{name}:depth"] = max((r.depth for r in recs), default=0)
    return out


@pytest.mark.slow
def test_results_independent_of_concurrency(tmp_path) -> None:
    one, many = run(tmp_path, 1), run(tmp_path, 16)
    assert one["peak"] == 1 and many["peak"] > 1  # the N=16 run really overlapped calls
    assert many["results"]["complete"] and many["results"]["questions_done"] > 0
    assert diff_results(one["results"], many["results"]) == []  # scores, rows, traces inside rows, usage
    for key in one:
        if key not in ("results", "peak"):
            assert one[key] == many[key], key
    # the measured critical path is structural: xMemory's boundary lane overlaps its episode writing
    xm = [r for r in one["xmemory:construction"]]
    assert 0 < one["xmemory:depth"] < len(xm)
