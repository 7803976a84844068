"""Exports hold what the page shows: a comparison's verdict, F1, judge and evidence hit / miss per system."""

from __future__ import annotations

import csv
import io
import json

from memcore.eval.bundles import answer_bundle, comparison_bundle
from memcore.types import Answer, Question, Trace, TraceItem, Usage
from memcore.viz.export import file_stem, standalone_html, to_csv, to_json

Q = Question("conv-26:q0", "conv-26", "What breed?", "poodle", ["D1:1", "D2:3"], 4)


def answer(text: str, turns: list[str]) -> Answer:
    tr = Trace("com", Q.text, items=[TraceItem(t, "turn", f"turn {t}", 0.9, [t]) for t in turns])
    return Answer(text, tr, {"answer": Usage(10, 2, 1)}, 5.0)


VERDICTS = {"com": {"correct": True, "reason": "names the breed", "error": "", "judge": "lexical judge (offline)",
                    "f1": 1.0},
            "naive_rag": {"correct": None, "reason": "", "error": "judge call failed: timeout",
                          "judge": "lexical judge (offline)", "f1": 0.0}}


def test_the_comparison_export_carries_verdict_f1_judge_and_evidence():
    answers = {"com": answer("poodle", ["D1:1", "D2:3"]), "naive_rag": answer("a dog", ["D1:1"])}
    obj, table, sections = comparison_bundle(Q, answers, "offline", VERDICTS)
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    com, rag = rows
    assert (com["verdict"], com["F1"], com["judge"]) == ("correct", "1.0", "lexical judge (offline)")
    assert com["judge reason"] == "names the breed" and com["evidence hit"] == "D1:1, D2:3"
    assert com["evidence missed"] == "" and com["evidence hits"] == "2/2"
    assert rag["verdict"] == "not judged" and rag["judge reason"] == "judge call failed: timeout"
    assert rag["evidence hit"] == "D1:1" and rag["evidence missed"] == "D2:3 (never retrieved)"
    data = json.loads(to_json(obj))
    assert [r["verdict"] for r in data["rows"]] == ["correct", "not judged"]
    html = standalone_html("comparison", sections, "offline")
    assert "evidence missed" in html and "lexical judge (offline)" in html and "not judged" in html


def test_a_free_text_comparison_has_evidence_but_no_verdict_columns():
    free = Question("adhoc", "conv-26", "anything?", "")
    _, table, _ = comparison_bundle(free, {"com": answer("x", ["D1:1"])}, "offline", {"com": None})
    assert "verdict" not in table.columns and "evidence hit" in table.columns


def test_the_answer_export_carries_the_pages_verdict():
    obj, _, sections = answer_bundle(Q, "com", answer("poodle", ["D1:1"]), "offline", verdict=VERDICTS["com"])
    assert obj["summary"]["verdict"] == "correct" and obj["summary"]["evidence missed"] == "D2:3 (never retrieved)"
    summary = dict(sections)["Summary"]
    assert summary.iloc[0]["judge"] == "lexical judge (offline)"


def test_export_file_names_are_safe():
    assert file_stem("comparison_conv-26:q0") == "comparison_conv-26_q0"
    assert file_stem("../../etc/passwd") == "etc_passwd"
    assert file_stem("¿?") == "export"
