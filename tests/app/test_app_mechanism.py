"""The Benchmark page shows each system's mechanism statistics (AppTest; temp store, offline engine)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.app.test_app_pages import APP, errors
from tests.viz.test_viz_export import results_fixture


def load(path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/benchmark.py").run()
    at.text_input(key="bm_path").set_value(str(path)).run()
    at.button(key="bm_load").click().run()
    return at


def test_benchmark_shows_a_mechanism_table_per_system(app_env):
    res = results_fixture()
    res["systems"]["com"]["mechanism"] = {"chain_length_mean": 1.25, "chain_length_hist": {"1": 6, "2": 2},
                                          "questions": 2}
    res["systems"]["naive_rag"]["mechanism"] = {}
    path = app_env / "results.json"
    path.write_text(json.dumps(res))
    at = load(path)
    assert not errors(at), errors(at)
    assert any(s.value == "Mechanism statistics" for s in at.subheader)
    tables = [d.value for d in at.dataframe if list(d.value.columns) == ["statistic", "value"]]
    assert len(tables) == 1  # com only: naive_rag's block is empty
    got = dict(zip(tables[0]["statistic"], tables[0]["value"], strict=True))
    assert got == {"chain_length_mean": "1.25", "chain_length_hist": "1: 6, 2: 2", "questions": "2"}
    assert "com" in [m.value.strip("*") for m in at.markdown]


def test_benchmark_without_mechanism_statistics_says_so(app_env):
    path = app_env / "old.json"
    path.write_text(json.dumps(results_fixture()))
    at = load(path)
    assert not errors(at), errors(at)
    assert any("no mechanism statistics" in c.value for c in at.caption)
