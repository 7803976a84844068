"""Benchmark: scores with intervals and ties, the error-bar chart, and citation vs content examples (AppTest)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.app.test_app_pages import benchmark_with  # noqa: E402
from tests.viz.test_bench_ci import results_with_intervals  # noqa: E402


def test_benchmark_shows_intervals_ties_and_content_disagreements(app_env):
    at = benchmark_with(app_env, results_with_intervals())
    assert not at.exception and not at.error, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe]
    ranked = next(f for f in frames if "rank by f1" in f.columns).set_index("system")
    assert ranked.loc["b", "rank by f1"] == "tied with a" and ranked.loc["a", "F1"].endswith("n=30")
    cc = next(f for f in frames if "cited, content absent" in f.columns).set_index("system")
    assert cc.loc["b", "cited, content absent"] == 10
    at.selectbox(key="bm_cc_sys").set_value("b").run()
    at.session_state["bm_cc_rows"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "**b · c1\\:q0**" in [m.value for m in at.markdown]  # the example opened its question


def test_a_registered_metric_is_offered_and_drawn_on_the_benchmark_page(app_env):
    """A metric registered once (the toy of tests/eval/test_metric_registry.py) is in the page's metric picker;
    picking it draws its heatmap by category and its interval chart."""
    from memcore.eval.metric_registry import register_metric, unregister_metric
    from tests.eval.test_metric_registry import ROWS_A, ROWS_B, TOY, _results, _rows

    register_metric(TOY)
    try:
        rows = _rows("a", ROWS_A) + _rows("b", ROWS_B)
        at = benchmark_with(app_env, {**_results(rows), "rows": rows})
        assert not at.exception and not at.error, [e.value for e in at.exception]
        assert TOY.name in at.selectbox(key="bm_metric").options
        at.selectbox(key="bm_metric").set_value(TOY.name).run()
        assert not at.exception, [e.value for e in at.exception]
        titles = [c.proto.spec for c in at.get("plotly_chart")]
        assert any(f"{TOY.name} by category" in s for s in titles)
        assert any(f"{TOY.name} with 95% intervals" in s for s in titles)
    finally:
        unregister_metric(TOY.name)
