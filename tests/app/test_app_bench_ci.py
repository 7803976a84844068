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
