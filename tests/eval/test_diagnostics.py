"""Retrieval diagnostics on hand-made traces: recall, first rank, coverage, attribution, missed evidence."""

from __future__ import annotations

import pytest

from memcore.eval.diagnostics import (
    all_evidence_hit,
    attribute_failure,
    content_words,
    coverage,
    evidence_recall,
    first_evidence_rank,
    locate_missed_evidence,
    split_evidence,
)
from memcore.eval.metrics import count_tokens
from memcore.types import Candidate, Trace, TraceItem


def test_split_evidence_repairs_malformed_ids():
    assert split_evidence(["D8:6; D9:17", "D1:2", "D1:2 "]) == ["D8:6", "D9:17", "D1:2"]
    assert split_evidence("D3:1,D3:2") == ["D3:1", "D3:2"]
    assert split_evidence(None) == []


def test_evidence_recall_and_all_hit():
    ctx = ["D1:1", "D1:2", "D3:4"]
    assert evidence_recall(ctx, ["D1:2", "D5:5"]) == pytest.approx(0.5)
    assert evidence_recall(ctx, ["D3:4"], k=2) == 0.0  # recall@2 sees only the first two turns
    assert evidence_recall(ctx, ["D1:2; D3:4"]) == 1.0
    assert evidence_recall(ctx, []) is None
    assert all_evidence_hit(ctx, ["D1:2", "D3:4"]) is True
    assert all_evidence_hit(ctx, ["D1:2", "D5:5"]) is False
    assert all_evidence_hit(ctx, []) is None


def test_first_evidence_rank_is_one_based():
    ranked = ["D1:1", "D2:2", "D3:3"]
    assert first_evidence_rank(ranked, ["D3:3", "D2:2"]) == 2
    assert first_evidence_rank(ranked, ["D9:9"]) is None
    assert first_evidence_rank(ranked, []) is None


def test_coverage_counts_blocks_and_tokens_until_all_content_words_seen():
    blocks = [
        "Caroline went hiking on Sunday.",
        "She loves her pottery classes.",
        "Melanie painted a sunset by the lake.",
        "Pottery and painting are her hobbies.",
    ]
    # content words of "pottery, painting" -> {potteri, paint}; block 2 adds potteri,
    # block 3 adds paint ("painted" -> paint): covered after 3 blocks (block 4 is not needed).
    assert content_words("pottery, painting") == {"potteri", "paint"}
    n, tokens = coverage(blocks, "pottery, painting")
    assert n == 3
    assert tokens == sum(count_tokens(b) for b in blocks[:3])
    assert coverage(blocks, "She went to the beach") == (None, None)  # "beach" never appears
    assert coverage(blocks, "the") == (0, 0)  # no content words at all


def test_coverage_ignores_stopwords_and_order_of_answer():
    # "She was at the lake" -> content words {lake}: only block 1 needed.
    assert coverage(["the lake", "she was at home"], "She was at the lake")[0] == 1


def test_attribute_failure_rule():
    assert attribute_failure(True, 0.0) == "correct"
    assert attribute_failure(False, None) == "no_evidence"
    assert attribute_failure(False, 0.5) == "retrieval_failure"
    assert attribute_failure(False, 1.0) == "reasoning_failure"


def _trace() -> Trace:
    cands = [
        Candidate("dense", "m1", 0.91, 1, True, ["D1:1"]),
        Candidate("dense", "m2", 0.80, 2, True, ["D2:5", "D2:6"]),
        Candidate("dense", "m3", 0.75, 3, True, ["D4:1"]),
        Candidate("dense", "m4", 0.40, 21, False, ["D6:2"], reason="below top-20"),
        Candidate("chain", "m1", 0.91, 1, True, ["D1:1"]),
        Candidate("chain", "m3", 0.62, 2, True, ["D4:1"]),
        Candidate("chain", "m2", 0.31, 4, False, ["D2:5", "D2:6"], reason="gate 0.31 < beta * 0.70"),
        Candidate("chain", "m6", 0.50, 3, True, ["D6:2"]),
    ]
    items = [
        TraceItem("m1", "turn", "a", 0.91, ["D1:1"], rank=1),
        TraceItem("m3", "turn", "c", 0.62, ["D4:1"], rank=2),
    ]
    return Trace("com", "q?", items=items, candidates=cands, stages=["dense", "chain"])


def test_locate_missed_evidence_dropped_and_not_in_pool():
    trace = _trace()
    assert evidence_recall(trace, ["D1:1", "D2:5", "D9:9"]) == pytest.approx(1 / 3)
    missed = locate_missed_evidence(trace, ["D1:1", "D2:5", "D9:9"])
    assert [m["turn_id"] for m in missed] == ["D2:5", "D9:9"]  # D1:1 reached the context
    dropped, absent = missed
    assert dropped["status"] == "dropped"
    assert dropped["stage"] == "chain"  # kept by "dense", rejected at stage 2
    assert dropped["rank"] == 4
    assert dropped["score"] == pytest.approx(0.31)
    assert dropped["candidate_id"] == "m2"
    assert dropped["reason"] == "gate 0.31 < beta * 0.70"
    assert absent["status"] == "not_in_pool"
    assert absent["stage"] is None and absent["rank"] is None and absent["score"] is None


def test_locate_missed_evidence_rescued_later_then_lost_at_render():
    # D6:2 was dropped by "dense" but kept by "chain", yet is not in the context items.
    missed = locate_missed_evidence(_trace(), ["D6:2"])
    assert len(missed) == 1
    assert missed[0]["status"] == "not_in_context"
    assert missed[0]["stage"] == "chain" and missed[0]["rank"] == 3


def test_locate_missed_evidence_roundtrips_through_trace_dict():
    trace = Trace.from_dict(_trace().to_dict())
    assert [m["status"] for m in locate_missed_evidence(trace, "D2:6; D9:9")] == ["dropped", "not_in_pool"]


def test_stored_trace_keeps_candidates_as_one_table_and_reads_the_older_form():
    """Results and exports store candidates as columns + rows (not one dict each); both forms read back."""
    import dataclasses
    import json

    trace = _trace()
    d = json.loads(json.dumps(trace.to_dict()))
    assert d["candidates"]["columns"][:3] == ["stage", "id", "score"] and len(d["candidates"]["rows"]) == 8
    assert d["candidates"]["rows"][3][:2] == ["dense", "m4"]
    assert Trace.from_dict(d) == trace
    older = json.loads(json.dumps(dataclasses.asdict(trace)))  # rows stored before the table form
    assert isinstance(older["candidates"], list) and Trace.from_dict(older) == trace
    assert len(json.dumps(d)) < len(json.dumps(older))
