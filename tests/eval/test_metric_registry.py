"""The metric registry: a metric registered once (here a toy one, defined in this test) appears, with no other
file edited, in the result rows, the aggregates and their intervals, the CSV, the text report, the per-category
table, the Benchmark's chart data (metric picker, heatmap, interval chart and table, summary, drill-down rows),
run comparisons and results["metrics"]; an installed package can add one through the `memcore.metrics` group."""

from __future__ import annotations

import csv
import warnings
from importlib.metadata import EntryPoint

import pytest

from memcore import registry as core
from memcore.eval.bench_data import (
    headline_looks,
    interval_metrics,
    metric_choices,
    metric_look,
    rows_frame,
    summary_scores,
)
from memcore.eval.compare import compare_runs, delta_scores
from memcore.eval.metric_registry import (
    ANSWERABLE,
    CSV,
    PLACES,
    REPORT,
    Metric,
    metric_names,
    register_metric,
    unregister_metric,
)
from memcore.eval.report import aggregate, build_row, csv_fields, format_table, metric_labels, write_results
from memcore.plugins import METRICS_GROUP, PluginWarning
from memcore.types import Answer, Question, Trace, TraceItem
from memcore.viz.bench import category_table, count_table, metric_heatmap, summary_table
from memcore.viz.bench_ci import interval_chart, interval_table


def _has_digit(m) -> float:
    return float(any(c.isdigit() for c in m.prediction))


TOY = Metric("says_number", "says a number", _has_digit, applies=ANSWERABLE, headline=True, column="num",
             description="toy: 1 when the answer holds a digit", show=PLACES)
PLUGIN_METRIC = Metric("plugin_len", "answer length", lambda m: len(m.prediction), bounds=None)


@pytest.fixture
def toy():
    register_metric(TOY)
    yield TOY
    unregister_metric(TOY.name)


def _rows(system: str, answers: list[str]) -> list[dict]:
    """Three questions (categories 1, 4 and 5) answered with `answers`, as the runner stores them."""
    qs = [Question("c1:q1", "c1", "When?", "7 May 2023", ["D1:1"], 1),
          Question("c1:q2", "c1", "Where?", "Paris", ["D1:1"], 4),
          Question("c1:q3", "c1", "Ben's cat?", "Not mentioned in the conversation", ["D1:1"], 5)]
    trace = Trace(system, "q", items=[TraceItem("t1", "turn", "Ana: Paris on 7 May 2023", 0.9, ["D1:1"])],
                  context="Ana: Paris on 7 May 2023")
    return [build_row(q, Answer(a, trace), {"system": system}) for q, a in zip(qs, answers, strict=True)]


def _results(rows: list[dict]) -> dict:
    return {"systems": aggregate(rows, judge=False, model="m", provider="offline"), "judge": {"enabled": False}}


ROWS_A = ["7 May 2023", "Paris", "It was 3 cats"]
ROWS_B = ["in May", "Paris 2", "Not mentioned"]


def test_a_registered_metric_appears_in_rows_aggregates_csv_and_report(toy, tmp_path) -> None:
    rows = _rows("a", ROWS_A) + _rows("b", ROWS_B)
    assert [r["says_number"] for r in rows] == [1.0, 0.0, None, 0.0, 1.0, None]  # category 5: not applicable
    res = _results(rows)
    a = res["systems"]["a"]
    assert a["overall"]["says_number"] == 0.5 and a["categories"]["4"]["says_number"] == 0.0
    assert a["categories"]["5"]["says_number"] is None
    assert a["overall"]["ci"]["says_number"]["n"] == 2  # the abstention question has no value
    assert "says_number" in csv_fields() and "says_number_lo" in csv_fields()
    _, cpath = write_results(res, tmp_path / "r.json")
    with cpath.open(encoding="utf-8") as f:
        got = {(r["system"], r["category"]): r for r in csv.DictReader(f)}
    assert got[("b", "4")]["says_number"] == "1.0" and got[("a", "overall")]["says_number"] == "0.5"
    assert got[("a", "overall")]["says_number_n"] == "2"
    table = format_table(res).splitlines()
    at = table[0].index("  num ") + 2  # its column in the text report, a headline metric: with its interval
    cell = {tuple(line.split()[:2]): line[at:].split("  ")[0] for line in table[1:]}
    assert cell[("a", "overall")] == "0.500 [0.000, 1.000] n=2" and cell[("b", "4")] == "1.000"
    assert cell[("a", "5")].startswith("-")
    assert metric_labels("hashing")["says_number"] == TOY.description


def test_a_registered_metric_feeds_the_benchmark_tables_and_charts(toy) -> None:
    rows = _rows("a", ROWS_A) + _rows("b", ROWS_B)
    res = {**_results(rows), "rows": rows}
    assert "says_number" in metric_choices() and "says_number" in interval_metrics()
    t = category_table(res, "says_number").set_index("system")
    assert t.loc["a", "overall"] == 0.5 and t.loc["b", "single-hop"] == 1.0
    heat = metric_heatmap(category_table(res, "says_number"), "says_number", count_table(res),
                          metric_look("says_number")).data[0]
    assert [list(r) for r in heat.z][1][1] == 1.0 and heat.texttemplate.startswith("%{z:.3f}")
    chart = interval_chart(res, "says_number")
    assert [tr.name for tr in chart.data] == ["a", "b"] and list(chart.data[0].y)[-1] == 0.5
    assert "says a number" in interval_table(res, headline_looks()).columns
    assert summary_table(res, summary_scores()).set_index("system").loc["b", "says_number"] == 0.5
    assert "says_number" in rows_frame(rows, "a").columns


def test_a_registered_metric_is_compared_between_runs(toy) -> None:
    report = compare_runs(_rows("s", ROWS_A), _rows("s", ROWS_B))
    assert "says_number" in delta_scores()
    d = report["s"]["overall"]["says_number"]
    assert (d["a"], d["b"], d["n"]) == (0.5, 0.5, 2)


def test_without_registering_nothing_lists_it() -> None:
    rows = _rows("a", ROWS_A)
    assert "says_number" not in rows[0] and "says_number" not in csv_fields()
    assert "says_number" not in metric_choices() and "num" not in format_table(_results(rows)).split()


def test_the_builtin_metrics_keep_their_order_places_and_rules() -> None:
    assert metric_names(CSV)[:7] == ("f1", "bleu1", "rouge_2", "meteor", "similarity", "em", "judge")
    assert metric_names(REPORT, judge=False) == ("f1", "rouge_2", "meteor", "similarity", "evidence_recall",
                                                 "content_recall", "answer_in_context", "context_tokens",
                                                 "retrieve_ms_p50", "rubric_rule", "event_order")
    assert [m for m in metric_choices()][:2] == ["f1", "judge"] and metric_choices()[-1] == "n"
    adv = _rows("a", ROWS_A)[2]
    assert adv["similarity"] is None and adv["f1"] == 0.0  # F1 on category 5 is the abstention rule
    with pytest.raises(ValueError, match="metric 'f1' is already registered by memcore.eval.metric_builtins"):
        register_metric(Metric("f1"))
    with pytest.raises(ValueError, match="applies"):
        Metric("x", applies="some")


@pytest.fixture
def fake_metric_plugins(monkeypatch, plugins):
    """Installed entry points: one metric, one broken; plugins on, the metrics group read afresh (and after)."""
    eps = [EntryPoint("plugin_len", f"{__name__}:PLUGIN_METRIC", METRICS_GROUP),
           EntryPoint("broken", "os:sep", METRICS_GROUP)]
    monkeypatch.setattr(core, "entry_points", lambda group: [e for e in eps if e.group == group])
    core.reload_plugins(METRICS_GROUP)
    yield
    unregister_metric("plugin_len")
    core.reload_plugins(METRICS_GROUP)


def test_an_installed_package_adds_a_metric_through_the_entry_point_group(fake_metric_plugins) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = metric_names()
    assert names[0] == "f1" and names[-1] == "plugin_len"  # after the built-ins
    assert [w.category for w in caught] == [PluginWarning] and "os:sep" in str(caught[0].message)
    assert _rows("a", ROWS_A)[0]["plugin_len"] == len("7 May 2023")
    assert core.owner("metric", "plugin_len").startswith("plugin 'plugin_len' (memcore.metrics = tests.eval")


def test_direction_decides_greener_cells_and_the_best_system() -> None:
    from memcore.eval.compare import rank_systems

    res = _results(_rows("a", ROWS_A) + _rows("b", ROWS_B))
    f1 = metric_heatmap(category_table(res, "f1"), "f1", look=metric_look("f1")).data[0].colorscale
    fails = metric_heatmap(category_table(res, "retrieval_failures"), "retrieval_failures",
                           look=metric_look("retrieval_failures")).data[0].colorscale
    assert f1[-1][1] == fails[0][1] and f1[0][1] == fails[-1][1]  # fewer failures is the green end
    rows = _rows("a", ROWS_A) + _rows("b", ROWS_B)
    for r in rows:
        r["context_tokens"] = 100 if r["system"] == "a" else 50
    assert [s["system"] for s in rank_systems(rows, "context_tokens")] == ["b", "a"]  # fewer tokens ranks first
    assert [s["system"] for s in rank_systems(rows, "f1")][0] == "b"
