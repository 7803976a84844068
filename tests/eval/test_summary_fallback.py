"""Ask's summary table (issue 37): an answer from a fallback path is named in its row, and evidence its fallback
context holds is not credited to retrieval (no evidence recall); the exported row says the same."""

from __future__ import annotations

from memcore.eval.answer_rows import answer_summary, export_row
from memcore.types import Answer, Trace, TraceItem, Usage


def _answer(structure: dict, origin: str = "chain 1") -> Answer:
    tr = Trace(system="memcot", question="Where?", stages=["loop"], structure=structure,
               items=[TraceItem("D1:1", "turn", "Ana: the park", 0.0, ["D1:1"], origin)])
    return Answer("the park", tr, {"answer": Usage(100, 10, 1)}, 5.0)


def test_a_whole_conversation_fallback_is_named_and_not_credited() -> None:
    row = answer_summary("memcot", _answer({"fallback": True}), ["D1:1"], {"correct": True, "f1": 1.0})
    assert row["fallback"] == "whole conversation"
    assert row["evidence hits"] == "1/1 (fallback context)" and row["evidence recall"] is None
    assert list(row)[:5] == ["system", "retriever", "fallback", "evidence hits", "evidence recall"]
    assert export_row("memcot", _answer({"fallback": True}), ["D1:1"])["fallback"] == "whole conversation"


def test_backfill_only_is_named_and_own_retrieval_is_credited() -> None:
    back = answer_summary("com", _answer({}, origin="backfill"), ["D1:1"])
    assert back["fallback"] == "backfill only" and back["evidence recall"] is None
    own = answer_summary("com", _answer({}), ["D1:1"])
    assert own["fallback"] == "none" and own["evidence hits"] == "1/1" and own["evidence recall"] == 1.0
