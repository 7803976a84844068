"""Run and system comparisons (memcore.eval.compare, compare_export, memcore.cli.compare) on hand-made rows."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.eval.compare import compare_runs, rank_systems
from memcore.eval.compare_export import comparison_html


def row(system: str, qid: str, correct: bool, f1: float, cat: int = 1, **kw) -> dict:
    return {"system": system, "conv_id": "c1", "question_id": qid, "category": cat, "category_name": f"cat{cat}",
            "question": f"question {qid}?", "gold": "gold", "prediction": "right" if correct else "wrong",
            "correct": correct, "f1": f1, "evidence": ["D1:1"], "context_turn_ids": ["D1:1"] if correct else [],
            "content_present": {"D1:1": correct}, "context_tokens": 100,
            "usage": {"answer": {"prompt_tokens": 90, "completion_tokens": 10}}, **kw}


# run A: q1..q10 right, q11..q20 wrong; run B: q1..q8 lose (right -> wrong), q11, q12 gain
A = [row("s", f"c1:q{i}", i <= 10, 1.0 if i <= 10 else 0.0) for i in range(1, 21)]
B = [row("s", f"c1:q{i}", (8 < i <= 10) or i in (11, 12), 1.0 if (8 < i <= 10) or i in (11, 12) else 0.0)
     for i in range(1, 21)]


def test_compare_runs_hand_computed() -> None:
    rep = compare_runs(A, B)["s"]
    o = rep["overall"]
    assert o["n"] == 20
    assert o["f1"]["a"] == 0.5 and o["f1"]["b"] == 0.2 and o["f1"]["delta"] == pytest.approx(-0.3)
    # McNemar: 8 right->wrong, 2 wrong->right: 2 * (1 + 10 + 45) / 1024
    assert o["mcnemar"] == {"n": 20, "right_to_wrong": 8, "wrong_to_right": 2, "p_value": 0.109375}
    assert o["query_tokens"]["delta"] == 0.0
    assert len(rep["flips"]) == 10
    first = rep["flips"][0]
    assert first["direction"] == "right_to_wrong"
    assert first["a"]["evidence"] == {"D1:1": {"cited": True, "content": True}}
    assert first["b"]["evidence"] == {"D1:1": {"cited": False, "content": False}}


def test_cost_deltas_for_priced_models() -> None:
    priced = [dict(r, model="gpt-4o-mini", provider="openai") for r in A]
    dearer = [dict(r, model="gpt-4o-mini", provider="openai",
                   usage={"answer": {"prompt_tokens": 1_000_090, "completion_tokens": 10}}) for r in B]
    o = compare_runs(priced, dearer)["s"]["overall"]
    # 1M more prompt tokens per question at gpt-4o-mini's $0.15 per 1M prompt tokens (memcore/eval/prices.json)
    assert o["query_cost_usd"]["delta"] == pytest.approx(0.15, abs=1e-6) and o["query_cost_usd"]["n"] == 20
    assert "query_cost_usd" not in compare_runs(A, B)["s"]["overall"]  # the offline engine has no price


def test_unpaired_questions_are_counted_not_compared() -> None:
    rep = compare_runs(A, B[:15])["s"]
    assert rep["overall"]["n"] == 15 and rep["only_a"] == 5 and rep["only_b"] == 0


def test_rank_systems_marks_ties() -> None:
    good = [row("good", f"c1:q{i}", True, 1.0) for i in range(40)]
    close = [row("close", f"c1:q{i}", i != 0, 0.0 if i == 0 else 1.0) for i in range(40)]
    bad = [row("bad", f"c1:q{i}", False, 0.0) for i in range(40)]
    ranked = rank_systems(good + close + bad, "f1")
    assert [r["system"] for r in ranked] == ["good", "close", "bad"]
    assert ranked[0]["tied_with_best"] and ranked[1]["tied_with_best"]  # one question apart: not separated
    assert not ranked[2]["tied_with_best"] and ranked[2]["delta_to_best"] == -1.0


def test_html_escapes_data_text() -> None:
    evil = [dict(r, question="<script>alert(1)</script>", prediction="<b>x</b>") for r in A]
    rep = {"a": {"label": "<i>a</i>"}, "b": {"label": "b"}, "systems": compare_runs(evil, B)}
    page = comparison_html(rep)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<i>a</i>" not in page and "<b>x</b>" not in page


def test_cli_compares_two_stored_runs(tmp_path) -> None:
    from memcore.store import LanceStore

    store = LanceStore(str(tmp_path / "store"))
    store.save_results("run-a", A)
    store.save_results("run-b", B)
    out, page = tmp_path / "cmp.json", tmp_path / "cmp.html"
    res = CliRunner().invoke(app, ["compare", "run-a", "run-b", "--store", str(tmp_path / "store"),
                                   "--out", str(out), "--html", str(page)])
    assert res.exit_code == 0, res.output
    assert "8 R->W, 2 W->R" in res.output
    data = json.loads(out.read_text())
    assert data["a"]["run_id"] == "run-a" and len(data["systems"]["s"]["flips"]) == 10
    assert "c1:q1" in page.read_text()
    res = CliRunner().invoke(app, ["compare", "run-a", "nope", "--store", str(tmp_path / "store"), "--out", "",
                                   "--html", ""])
    assert res.exit_code != 0 and "no stored rows for run 'nope'" in str(res.exception or res.output)
