"""The papers' further metrics (memcore.eval.paper_metrics): memory footprint from the store (hand-computed
bytes), retrieval latency p50/p95 through the metric registry, and evidence density (Hu et al., Fig. 4)."""

from __future__ import annotations

import pytest

from memcore.eval.metric_registry import CSV, get_metric, metric_names
from memcore.eval.paper_metrics import density_block, density_counts, latency_block, memory_footprint
from memcore.eval.report import TIMING_KEYS, aggregate, build_row, csv_fields, format_table, strip_timing
from memcore.store import LanceStore
from memcore.types import Answer, MemoryItem, Question, Trace, TraceItem


def _item(iid: str, text: str, step: int, space_tag: str = "") -> MemoryItem:
    return MemoryItem(id=iid, kind="episode", text=text, system="s", conv_id="c", embedding=[0.0] * 4,
                      sources=["D1:1"], turn_ids=["D1:1"], created_step=step, updated_step=step)


def test_footprint_counts_current_rows_and_their_payload_bytes(tmp_path) -> None:
    store = LanceStore(str(tmp_path / "db"), dim=4)
    store.commit("sp", "s", "c", 3, [_item("e1", "abc", 3), _item("e2", "né", 3)], [], [], {})
    store.commit("sp", "s", "c", 5, [_item("e1", "abcdef", 5)], [], [], {})  # a new version of e1: the old one closed
    store.commit("other", "s", "c", 3, [_item("x", "not this memory", 3)], [], [], {})
    # one row: id + space "sp" + system "s" + conv "c" + kind "episode" + text + 4 float32 + sources ["D1:1"]
    # + turn_ids ["D1:1"] + 3 int32 (created_step, valid_from, valid_to) + timestamp "" + metadata "{}"
    fixed = 2 + 1 + 1 + 7 + 4 * 4 + 4 + 4 + 3 * 4 + 0 + 2
    e1, e2 = fixed + 2 + 6, fixed + 2 + 3  # "abcdef"; "né" is 3 UTF-8 bytes
    assert store.footprint("sp", "c") == {"episode": {"rows": 2, "bytes": e1 + e2}}
    assert store.footprint("sp", "other-conv") == {}
    fp = memory_footprint(store, {"sys": "sp"}, ["c"])["sys"]
    assert (fp["rows"], fp["bytes"], fp["space"]) == (2, e1 + e2, "sp")
    assert fp["conversations"]["c"]["kinds"] == {"episode": {"rows": 2, "bytes": e1 + e2}}
    assert fp["shared_turns"] == {"rows": 0, "bytes": 0}  # no turns stored: none, and never in the memory's bytes


def test_eval_results_carry_footprint_latency_and_density(workbench, tiny_conv) -> None:
    from memcore.eval.runs import assemble

    workbench.ingest("xmemory", tiny_conv)
    sys_ = workbench.system("xmemory", tiny_conv)
    rows = []
    for q in tiny_conv.questions:
        ans = sys_.answer(q)
        assert ans.retrieve_ms is not None and 0 < ans.retrieve_ms <= ans.latency_ms  # the answer call excluded
        rows.append(build_row(q, ans, {"system": "xmemory", "run_id": "r"}))
    workbench.store.save_results("r", rows)
    space = workbench.space("xmemory", tiny_conv)
    meta = {"model": "m", "provider": "offline", "memcore_version": "x", "engine": "e", "embedder": "h", "store": "s",
            "provider_name": "offline", "spaces": {"xmemory": space}}
    res = assemble(workbench.store, "r", [tiny_conv], {tiny_conv.id: tiny_conv.questions}, ["xmemory"], meta,
                   {"enabled": False}, {"retriever": "dense", "format": "x", "dataset_sha256": "0"}, "p", "demo")
    s = res["systems"]["xmemory"]
    kinds = workbench.memory("xmemory", tiny_conv).kind_counts()
    assert {k: v["rows"] for k, v in s["footprint"]["conversations"][tiny_conv.id]["kinds"].items()} == kinds
    assert s["memory_rows"] == sum(kinds.values()) and s["memory_bytes"] > 0
    assert s["footprint"]["shared_turns"]["rows"] == len(tiny_conv.turns)
    o = s["overall"]
    assert 0 < o["retrieve_ms_p50"] <= o["retrieve_ms_p95"]
    assert s["evidence_density"]["overall"]["blocks"] > 0
    text = format_table(res)
    assert "paper metrics:" in text and "retrieval p50" in text and "memory " in text and "density 1-hit" in text


def test_latency_is_a_registered_metric_with_p50_and_p95() -> None:
    m = get_metric("retrieve_ms_p50")
    assert m is not None and "retrieve_ms_p50" in metric_names(CSV)
    assert {"retrieve_ms_p50", "retrieve_ms_p95"} <= set(csv_fields())
    rows = [{"retrieve_ms": v} for v in (1.0, 2.0, 3.0, 4.0, 100.0)] + [{"retrieve_ms": None}]
    assert latency_block(rows) == {"retrieve_ms_p50": 3.0, "retrieve_ms_p95": pytest.approx(80.8)}  # 4 + 0.8 * 96
    assert latency_block([{}]) == {"retrieve_ms_p50": None, "retrieve_ms_p95": None}
    # wall-clock: left out when results are compared across resumes
    assert {"retrieve_ms", "retrieve_ms_p50", "retrieve_ms_p95"} <= TIMING_KEYS
    assert strip_timing({"retrieve_ms_p95": 1.0, "f1": 0.5}) == {"f1": 0.5}


def _q(i: int, answer: str, category: int = 1) -> Question:
    return Question(f"c:q{i}", "c", "?", answer, ["D1:1"], category)


def _answer(blocks: list[str]) -> Answer:
    return Answer("x", Trace("s", "?", items=[TraceItem(f"i{n}", "turn", b, 1.0) for n, b in enumerate(blocks)]),
                  retrieve_ms=1.0)


def test_evidence_density_counts_distinct_answer_words_per_block() -> None:
    # "Pepper the beagle": content words {pepper, beagle} (stopword "the" removed)
    assert density_counts(["Maya's dog is Pepper", "a beagle named Pepper", "the dog slept", "Pepper, Pepper!"],
                          "Pepper the beagle") == {"blocks": 4, "hit1": 2, "hit2": 1, "multi": 0}
    assert density_counts(["a red, blue and green car"], "red blue green car") == \
        {"blocks": 1, "hit1": 0, "hit2": 0, "multi": 1}
    assert density_counts(["anything"], "the") is None  # no content words: nothing to hit


def test_evidence_density_per_system_and_category_over_all_blocks() -> None:
    rows = [build_row(_q(1, "Pepper the beagle", 1), _answer(["Pepper", "beagle Pepper", "nothing"]), {"system": "a"}),
            build_row(_q(2, "red blue green car", 2), _answer(["red blue green car"]), {"system": "a"}),
            build_row(_q(3, "not answerable", 5), _answer(["not answerable at all"]), {"system": "a"})]
    assert rows[2]["evidence_density"] is None  # an abstention question has no answer units
    d = aggregate(rows, judge=False, model="m", provider="offline")["a"]["evidence_density"]
    assert d["overall"] == {"questions": 2, "blocks": 4, "hit1": 0.25, "hit2": 0.25, "multi": 0.25}
    assert d["categories"]["1"] == {"questions": 1, "blocks": 3, "hit1": pytest.approx(1 / 3, abs=1e-6),
                                    "hit2": pytest.approx(1 / 3, abs=1e-6), "multi": 0.0}
    assert d["categories"]["5"]["blocks"] == 0 and d["categories"]["5"]["hit1"] is None
    assert density_block([{"category": 1}]) == {"questions": 0, "blocks": 0, "hit1": None, "hit2": None,
                                                "multi": None}  # rows stored before the field
