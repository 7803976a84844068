"""Aggregation of hand-made result rows, the CSV/JSON writer, rows built from answers, and the cost table."""

from __future__ import annotations

import csv
import json

import pytest

from memcore.eval.cost import cost_usd, load_prices, price_for
from memcore.eval.report import (
    aggregate,
    build_row,
    csv_rows,
    diff_results,
    percentile,
    row_trace,
    strip_timing,
    system_summary,
    write_results,
)
from memcore.types import Answer, Question, Trace, TraceItem, Usage

PRICES = {"gpt-4o-mini": {"prompt_per_1m": 0.15, "completion_per_1m": 0.60},
          "gpt-4o": {"prompt_per_1m": 2.5, "completion_per_1m": 10.0}}


def row(system: str, qid: str, cat: int, f1: float, recall: float | None, failure: str, *, judge: bool | None = None,
        cov: int | None = None, ctx: int = 100, latency: float = 10.0, prompt: int = 100, completion: int = 10,
        judge_tokens: int = 0) -> dict:
    usage = {"retrieval": {"prompt_tokens": prompt // 2, "completion_tokens": 0, "calls": 1, "latency_ms": 1.0},
             "answer": {"prompt_tokens": prompt - prompt // 2, "completion_tokens": completion, "calls": 1,
                        "latency_ms": 2.0}}
    if judge_tokens:
        usage["judge"] = {"prompt_tokens": judge_tokens, "completion_tokens": 0, "calls": 1, "latency_ms": 3.0}
    return {"system": system, "conv_id": "c1", "question_id": qid, "category": cat, "category_name": f"cat{cat}",
            "f1": f1, "bleu1": f1 / 2, "em": float(f1 == 1.0), "judge": judge, "evidence_recall": recall,
            "all_evidence_hit": None if recall is None else recall >= 1.0, "coverable": True,
            "coverage_blocks": cov, "coverage_tokens": None if cov is None else cov * 10, "context_tokens": ctx,
            "failure": failure, "usage": usage, "latency_ms": latency}


ROWS = [
    row("a", "c1:q1", 1, 1.0, 1.0, "correct", judge=True, cov=2, latency=10, judge_tokens=7),
    row("a", "c1:q2", 1, 0.0, 0.5, "retrieval_failure", judge=False, latency=20, judge_tokens=7),
    row("a", "c1:q3", 2, 0.5, 1.0, "reasoning_failure", judge=False, cov=4, ctx=300, latency=30, judge_tokens=7),
    row("a", "c1:q10", 2, 0.25, None, "no_evidence", judge=None, latency=40, judge_tokens=7),
    row("b", "c1:q1", 1, 0.2, 0.0, "retrieval_failure", judge=False, prompt=1000, completion=0),
]


def test_calls_answered_by_the_cache_count_like_the_others() -> None:
    """A question redone after a resume finds its calls cached: the summary must not change."""
    cached = json.loads(json.dumps(ROWS[0]))
    for u in cached["usage"].values():
        u["cache_hits"], u["calls"] = u["calls"], 0
    fresh = aggregate([ROWS[0]], judge=True, model="gpt-4o-mini", provider="openai", prices=PRICES)["a"]
    again = aggregate([cached], judge=True, model="gpt-4o-mini", provider="openai", prices=PRICES)["a"]
    assert strip_timing(again) == strip_timing(fresh)
    assert again["query_calls"] == 2 and again["judge_calls"] == 1 and again["query_tokens"] == 110


def test_aggregate_means_counts_and_none_handling() -> None:
    out = aggregate(ROWS, {"a": {"prompt_tokens": 1000, "completion_tokens": 200, "calls": 3,
                                 "latencies_ms": [5.0, 15.0]}},
                    judge=True, model="gpt-4o-mini", provider="openai", prices=PRICES)
    a = out["a"]
    assert a["overall"]["n"] == 4
    assert a["overall"]["f1"] == pytest.approx((1 + 0 + 0.5 + 0.25) / 4)
    assert a["overall"]["judge"] == pytest.approx(1 / 3)  # None left out
    assert a["overall"]["evidence_recall"] == pytest.approx(2.5 / 3)
    assert a["overall"]["all_evidence_hit"] == pytest.approx(2 / 3)
    assert a["overall"]["coverage_blocks"] == pytest.approx(3.0)
    assert a["overall"]["coverage_found"] == pytest.approx(0.5)
    assert (a["overall"]["retrieval_failures"], a["overall"]["reasoning_failures"]) == (1, 1)
    assert a["overall"]["no_evidence_failures"] == 1
    assert list(a["categories"]) == ["1", "2"]
    assert a["categories"]["1"]["n"] == 2 and a["categories"]["1"]["name"] == "cat1"
    assert a["categories"]["2"]["context_tokens"] == pytest.approx(200.0)
    assert a["construction_tokens"] == 1200 and a["construction_calls"] == 3
    assert a["query_tokens"] == 4 * 110 and a["query_tokens_per_question"] == pytest.approx(110.0)
    assert a["query_calls"] == 8 and a["llm_calls"] == 11
    assert a["judge_tokens"] == 28 and a["judge_calls"] == 4
    assert a["latency_ms_p50"] == pytest.approx(25.0)
    assert a["latency_ms_p95"] == pytest.approx(38.5)
    assert a["latency_ms"]["construction_call"] == {"p50": 10.0, "p95": 14.5}
    assert a["latency_ms"]["judge"]["p50"] == pytest.approx(3.0)
    # cost: (1000 + 400) prompt and (200 + 40) completion tokens at gpt-4o-mini prices
    assert a["cost_usd_by_stage"]["construction"] == pytest.approx((1000 * 0.15 + 200 * 0.6) / 1e6)
    assert a["cost_usd"] == pytest.approx((1400 * 0.15 + 240 * 0.6) / 1e6)
    b = out["b"]
    assert b["construction_tokens"] == 0 and "1" in b["categories"] and "2" not in b["categories"]


def test_aggregate_without_judge_and_unknown_price() -> None:
    s = system_summary(ROWS[:2], None, judge=False, model="mystery-model", provider="openai", prices=PRICES)
    assert "judge" not in s["overall"]
    assert s["cost_usd"] is None and s["cost_usd_by_stage"]["query"] is None
    assert aggregate([], judge=False, model="m", provider="offline", systems=["x"])["x"]["overall"]["n"] == 0


def test_aggregation_is_order_independent() -> None:
    one = aggregate(ROWS, judge=True, model="m", provider="offline")
    two = aggregate(list(reversed(ROWS)), judge=True, model="m", provider="offline")
    assert one == two


def test_percentile_linear() -> None:
    assert percentile([], 50) is None
    assert percentile([7], 95) == 7
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile(range(1, 101), 95) == pytest.approx(95.05)


def test_csv_and_json_written(tmp_path) -> None:
    results = {"run_id": "r", "judge": {"enabled": True}, "created": 1.0,
               "systems": aggregate(ROWS, judge=True, model="m", provider="offline")}
    jpath, cpath = write_results(results, tmp_path / "out" / "res.json")
    assert json.loads(jpath.read_text())["run_id"] == "r"
    with cpath.open() as f:
        got = list(csv.DictReader(f))
    assert [(r["system"], r["category"]) for r in got] == [
        ("a", "1"), ("a", "2"), ("a", "overall"), ("b", "1"), ("b", "overall")]
    assert got[0]["n"] == "2" and float(got[0]["f1"]) == pytest.approx(0.5)
    assert len(csv_rows(results)) == 5
    assert "created" not in strip_timing(results)
    assert "latency_ms_p50" not in strip_timing(results)["systems"]["a"]


def test_build_row_scores_evidence_and_failure() -> None:
    q = Question("c1:q1", "c1", "What breed is Biscuit?", "golden retriever", ["D1:3", "D1:9"], 4)
    items = [TraceItem("t1", "turn", "Ben: what breed?", 0.9, ["D1:2"]),
             TraceItem("t2", "turn", "Ana: Biscuit is a golden retriever", 0.8, ["D1:3"])]
    trace = Trace(system="s", question=q.text, items=items, context="Ben: what breed?\nAna: golden retriever")
    ans = Answer("a golden retriever", trace, {"answer": Usage(50, 5, 1, 0, 2.0)}, latency_ms=12.5)
    r = build_row(q, ans, {"run_id": "r", "system": "s"})
    assert r["f1"] == 1.0 and r["judge"] is None and r["correct"] is True and r["failure"] == "correct"
    assert r["evidence_recall"] == 0.5 and r["all_evidence_hit"] is False and r["first_evidence_rank"] == 2
    assert (r["coverage_blocks"], r["context_items"]) == (2, 2) and r["coverage_tokens"] > 0
    assert r["usage"]["answer"]["prompt_tokens"] == 50 and r["trace"]["items"][1]["id"] == "t2"
    wrong = build_row(q, Answer("a poodle", trace), {}, {"correct": False, "label": "WRONG", "usage": None})
    assert wrong["failure"] == "retrieval_failure" and wrong["judge"] is False
    judged = build_row(q, Answer("a poodle", trace), {}, {"correct": True, "label": "CORRECT", "usage": None})
    assert judged["correct"] is True  # the judge wins over F1
    adv = Question("c1:q5", "c1", "What breed is Ben's cat?", "Not mentioned in the conversation", ["D1:3"], 5)
    r5 = build_row(adv, Answer("Not mentioned in the conversation", trace), {})
    assert r5["f1"] == 1.0 and r5["coverage_blocks"] is None and r5["coverable"] is False


def test_row_keeps_the_trace_once_and_reads_older_rows() -> None:
    # issue 28: the row stored the whole Answer under "trace", copying the row's prediction, usage, latency, error
    q = Question("c1:q1", "c1", "What breed is Biscuit?", "golden retriever", ["D1:3"], 4)
    trace = Trace(system="s", question=q.text, items=[TraceItem("t2", "turn", "Ana: a golden retriever", 0.8, ["D1:3"])],
                  context="Ana: a golden retriever")
    ans = Answer("a golden retriever", trace, {"answer": Usage(50, 5, 1, 0, 2.0)}, latency_ms=12.5, retrieve_ms=3.0)
    r = build_row(q, ans, {"system": "s"})
    assert r["trace"] == trace.to_dict()
    assert not {"text", "usage", "latency_ms", "error", "retrieve_ms"} & set(r["trace"])
    assert (r["prediction"], r["latency_ms"], r["retrieve_ms"], r["error"]) == ("a golden retriever", 12.5, 3.0, "")
    assert r["usage"] == {"answer": vars(Usage(50, 5, 1, 0, 2.0))}
    assert row_trace(r) == trace.to_dict()
    old = {**r, "trace": ans.to_dict()}  # a row stored before: the Answer with its trace inside
    assert row_trace(old) == trace.to_dict() and Trace.from_dict(row_trace(old)).items[0].id == "t2"
    assert row_trace({"question_id": "q"}) is None


def test_cost_table_math(tmp_path) -> None:
    assert cost_usd(1_000_000, 500_000, "gpt-4o-mini", "openai", PRICES) == pytest.approx(0.15 + 0.30)
    assert cost_usd(2000, 1000, "gpt-4o-mini-2024-07-18", "openai", PRICES) == pytest.approx(
        (2000 * 0.15 + 1000 * 0.6) / 1e6)  # longest prefix wins over "gpt-4o"
    assert price_for("gpt-4o-2024-08-06", "openai", PRICES)["prompt_per_1m"] == 2.5
    assert cost_usd(10**9, 10**9, "anything", "offline", PRICES) == 0.0
    assert cost_usd(10**9, 10**9, "smollm2", "local", PRICES) == 0.0
    assert cost_usd(10, 10, "unknown-model", "openai", PRICES) is None
    shipped = load_prices()
    assert shipped["offline-engine"]["prompt_per_1m"] == 0.0 and "gpt-4o-mini" in shipped
    p = tmp_path / "prices.json"
    p.write_text(json.dumps({"_note": "x", "m": {"prompt_per_1m": 1, "completion_per_1m": 2}}))
    assert load_prices(p) == {"m": {"prompt_per_1m": 1.0, "completion_per_1m": 2.0}}
    p.write_text(json.dumps({"m": {"prompt_per_1m": 1}}))
    with pytest.raises(ValueError, match="completion_per_1m"):
        load_prices(p)


def test_diff_results_names_differing_paths_but_not_timing() -> None:
    a = {"run_id": "r", "wall_seconds": 1.0, "store": "/a", "errors": [{"e": 1}],
         "systems": {"s": {"overall": {"f1": 0.5, "n": 3}, "latency_ms_p50": 3.0}}}
    b = json.loads(json.dumps(a))
    b.update(wall_seconds=9.0, store="/b")
    b["systems"]["s"]["latency_ms_p50"] = 7.0
    assert diff_results(a, b) == []
    b["systems"]["s"]["overall"]["f1"] = 0.5000001
    b["errors"].append({"e": 2})
    b["extra"] = 1
    assert diff_results(a, b) == ["errors", "systems.s.overall.f1", "extra"]
    assert diff_results(a, b, ignore=frozenset({"errors", "systems", "extra"})) == ["store"]


def test_every_score_carries_its_interval_and_n() -> None:
    res = aggregate(ROWS, judge=True, model="m", provider="offline", systems=["a", "b"])
    cat1 = res["a"]["categories"]["1"]
    # category 1 of system a: f1 1.0 and 0.0 -> the bootstrap percentiles are 0 and 1 (hand-computed)
    assert cat1["ci"]["f1"] == {"lo": 0.0, "hi": 1.0, "n": 2}
    overall = res["a"]["overall"]["ci"]
    assert overall["evidence_recall"]["n"] == 3  # q10 has no gold evidence: left out of n
    assert overall["judge"]["n"] == 3 and overall["f1"]["n"] == 4
    assert res["b"]["overall"]["ci"]["f1"] == {"lo": None, "hi": None, "n": 1}
    csv_row = next(r for r in csv_rows({"systems": res}) if r["system"] == "a" and r["category"] == "1")
    assert (csv_row["f1_lo"], csv_row["f1_hi"], csv_row["f1_n"]) == (0.0, 1.0, 2)


def test_content_measures_in_rows_and_aggregates() -> None:
    q = Question("c1:q1", "c1", "When did Caroline go to the support group?", "7 May 2023", ["D1:3", "D1:4"], 2)
    ctx = "- Caroline attended an LGBTQ support group on 7 May 2023 and found it powerful."
    trace = Trace("xmemory", q.text, items=[TraceItem("f1", "fact", ctx, 1.0, ["D1:3", "D1:4"])], context=ctx)
    texts = {"D1:3": "I went to a LGBTQ support group yesterday and it was so powerful.",
             "D1:4": "Wow, that's cool, Caroline! What happened that was so awesome? Did you hear any inspiring stories?"}
    r = build_row(q, Answer("7 May 2023", trace), {"system": "xmemory"}, turn_texts=texts)
    # both turns cited by the fact (citation recall 1.0), only D1:3's content is in the context
    assert r["evidence_recall"] == 1.0 and r["content_recall"] == 0.5 and r["answer_in_context"] is True
    summary = aggregate([r], judge=False, model="m", provider="offline")["xmemory"]
    assert summary["overall"]["content_recall"] == 0.5 and summary["overall"]["answer_in_context"] == 1.0
    assert summary["citation_content"]["cited_not_in_content"] == 1
    assert summary["citation_content"]["examples"]["cited_not_in_content"][0]["turn_id"] == "D1:4"
