"""Fallbacks in plain sight (memcore.eval.fallbacks): named per answer, in result rows and counted per system."""

from __future__ import annotations

from memcore.eval.fallbacks import answer_fallbacks, fallback_counts
from memcore.eval.report import aggregate, build_row, csv_rows, format_table
from memcore.types import Answer, Question, Trace, TraceItem


def _trace(**kw) -> Trace:
    return Trace("s", "q?", **kw)


def test_each_kind_is_recognised() -> None:
    assert answer_fallbacks(_trace(items=[TraceItem("a", "turn", "x", 1.0, origin="chain 1")])) == []
    assert answer_fallbacks(_trace(structure={"fallback": True, "answered_from": "full conversation"})) == \
        ["full_conversation"]
    assert answer_fallbacks(_trace(items=[TraceItem("a", "turn", "x", 1.0, origin="backfill")] * 2)) == \
        ["backfill_only"]
    mixed = [TraceItem("a", "turn", "x", 1.0, origin="backfill"), TraceItem("b", "turn", "y", 1.0, origin="chain 1")]
    assert answer_fallbacks(_trace(items=mixed)) == []
    err = "answer: unusable reply after one repair attempt (x); used the role's fallback (llm_unusable=fallback)"
    assert answer_fallbacks(_trace(errors=[err])) == ["unusable_reply"]


def test_rows_carry_them_and_results_count_them() -> None:
    q = Question("c:q1", "c", "What breed?", "retriever", ["D1:1"], 4)
    rows = []
    for i, structure in enumerate(({"fallback": True}, {}, {})):
        r = build_row(Question(f"c:q{i}", "c", q.text, q.answer, q.evidence, 4),
                      Answer("retriever", _trace(structure=structure)), {"system": "s"})
        rows.append(r)
    assert rows[0]["fallbacks"] == ["full_conversation"] and rows[1]["fallbacks"] == []
    assert fallback_counts(rows) == {"full_conversation": 1, "backfill_only": 0, "unusable_reply": 0, "context_cut": 0,
                                     "any": 1}
    res = aggregate(rows, judge=False, model="m", provider="offline")
    assert res["s"]["fallbacks"]["any"] == 1
    assert "answers from a fallback path: s 1/3" in format_table({"systems": res})
    overall = next(r for r in csv_rows({"systems": res}) if r["category"] == "overall")
    assert overall["fallback_answers"] == 1 and overall["gold_category_questions"] == 0
