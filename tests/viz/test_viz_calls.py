"""The call inspector's pure functions (memcore.viz.calls): table order and offsets, waterfall bars, totals,
escaping, and the real calls of an answer on the offline engine."""

from __future__ import annotations

import pytest

from memcore.llm.ledger import CallRecord, UsageLedger
from memcore.viz.calls import MIN_BAR_MS, MIN_BAR_SHARE, call_label, calls_summary, calls_table, waterfall


def _recs() -> list[CallRecord]:
    # ts is when a call ended: a retrieval call from 0 to 100 ms, then an answer call from 100 to 130 ms,
    # then a cache hit at 130 ms; given out of order
    return [CallRecord(role="answer", stage="answer", ts=1000.130, latency_ms=30.0, prompt_tokens=50,
                       completion_tokens=5, prompt="[user]\nWhat is <b>the dog</b>?", completion="Pepper"),
            CallRecord(role="com_chain", stage="retrieval", ts=1000.100, latency_ms=100.0, prompt_tokens=20,
                       completion_tokens=2),
            CallRecord(role="judge", stage="judge", ts=1000.130, latency_ms=0.0, cache_hit=True, attempt=2,
                       ok=False, error="unreadable <label>")]


def test_calls_table_orders_by_start_with_offsets_from_the_first_call():
    t = calls_table(_recs())
    assert list(t["role"]) == ["com_chain", "answer", "judge"]
    assert list(t["#"]) == [1, 2, 3]
    assert [round(v) for v in t["start ms"]] == [0, 100, 130]
    assert list(t["latency ms"]) == [100.0, 30.0, 0.0]
    assert t.loc[1, "prompt"].startswith("[user]") and t.loc[1, "completion"] == "Pepper"


def test_calls_table_takes_dicts_and_store_rows_alike():
    a = calls_table(_recs())
    b = calls_table([r.to_dict() for r in _recs()])
    assert a.drop(columns="start ms").equals(b.drop(columns="start ms"))
    assert calls_table([]).empty


def test_waterfall_draws_one_bar_per_call_from_start_to_end():
    t = calls_table(_recs())
    fig = waterfall(t)
    bars = {tr.name: tr for tr in fig.data}
    assert set(bars) == {"retrieval", "answer", "judge"}
    assert list(bars["answer"].base) == [t.loc[1, "start ms"]] and list(bars["answer"].x) == [30.0]
    assert list(bars["judge"].x) == [pytest.approx(130 * MIN_BAR_SHARE)]  # a cache hit is a visible sliver
    labels = list(fig.layout.yaxis.categoryarray)
    assert labels[-1] == call_label(t.iloc[0]) and "cached" in labels[0] and "repair" in labels[0]


def test_sub_millisecond_calls_seconds_apart_stay_visible():
    """The offline engine's calls take microseconds; retrieval between them takes seconds."""
    recs = [CallRecord(role="a", stage="retrieval", ts=1000.0, latency_ms=0.02),
            CallRecord(role="b", stage="answer", ts=1005.0, latency_ms=0.03)]
    fig = waterfall(calls_table(recs))
    widths = [x for tr in fig.data for x in tr.x]
    assert min(widths) >= 5000 * MIN_BAR_SHARE > 100 * 0.03 and MIN_BAR_MS < min(widths)
    assert "time outside LLM calls" in fig.layout.xaxis.title.text


def test_waterfall_hover_escapes_prompt_and_error_text():
    hover = " ".join(h for tr in waterfall(calls_table(_recs())).data for h in tr.hovertext)
    assert "&lt;b&gt;the dog&lt;/b&gt;" in hover and "<b>the dog" not in hover
    assert "unreadable &lt;label&gt;" in hover


def test_calls_summary_totals():
    s = calls_summary(calls_table(_recs()))
    assert s == {"calls": 3, "cache hits": 1, "failed": 1, "prompt tokens": 70, "completion tokens": 7,
                 "latency ms": 130.0, "wall ms": 130.0}


def test_offline_answer_calls_in_the_inspector(workbench, tiny_conv):
    q = tiny_conv.questions[0]
    with UsageLedger.collect() as recs:
        ans = workbench.ask("naive_rag", tiny_conv, q)
    t = calls_table(recs)
    answer = t[t["stage"] == "answer"].iloc[-1]
    assert q.text in answer["prompt"] and ans.text in answer["completion"]
    assert calls_summary(t)["calls"] == len(recs)


def test_the_answer_export_names_the_retriever(workbench, tiny_conv):
    from memcore.eval.bundles import answer_bundle, comparison_bundle

    q = tiny_conv.questions[0]
    ans = workbench.ask("naive_rag", tiny_conv, q, retriever="lexical")
    obj, _, sections = answer_bundle(q, "naive_rag", ans, workbench.provider_label)
    assert obj["retriever"] == "lexical" and ans.trace.retriever == "lexical"
    assert any(title.startswith("Answer by naive_rag, lexical retriever") for title, _ in sections)
    summary = dict(sections)["Summary"]
    assert list(summary["retriever"]) == ["lexical"]
    _, table, _ = comparison_bundle(q, {"naive_rag": ans}, workbench.provider_label)
    assert list(table["retriever"]) == ["lexical"]
