"""A sweep result on the Benchmark page: the per-point table, a metric against one parameter (one line per value
of a second) and the ablation chart (memcore.viz.sweep figures; the page through AppTest)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memcore.eval.sweep import run_sweep  # noqa: E402
from memcore.eval.sweep_report import is_sweep, param_columns  # noqa: E402
from memcore.settings import Settings  # noqa: E402
from memcore.systems.variants import register_preset, unregister_preset  # noqa: E402
from memcore.viz.sweep import FULL, ablation_chart, param_chart, sweep_frame  # noqa: E402
from tests.app.test_app_pages import benchmark_with  # noqa: E402

SOURCE = "test <b>Fig. 9</b>"  # markup in data must be escaped


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> dict:
    register_preset("com", "test-short", {"max_len": 1}, SOURCE, "anchors only")
    try:
        tmp = tmp_path_factory.mktemp("sw")
        s = Settings(store_uri=str(tmp / "store"), llm_provider="offline", embedder="hashing")
        res = run_sweep(s, "com", ["beta=0.3,0.8", "max_len=4,8"], presets=["test-short"], dataset="demo", limit=6)
        return json.loads(json.dumps(res, default=str))
    finally:
        unregister_preset("com", "test-short")


def test_frame_and_parameter_chart(sweep) -> None:
    assert is_sweep(sweep) and not is_sweep({"systems": {}})
    df = sweep_frame(sweep, "f1", params=param_columns(sweep))
    assert len(df) == 6 and set(df["preset"]) == {FULL, "test-short"} and (df["n"] == 6).all()
    assert list(df[df["preset"] == "test-short"]["max_len"]) == [1, 1]  # held at the preset's value
    fig = param_chart(sweep, "f1", "beta", "max_len", params=param_columns(sweep))
    assert [t.name for t in fig.data] == ["max_len=4", "max_len=8"]
    full = df[df["preset"] == FULL]
    for trace, ml in zip(fig.data, (4, 8), strict=True):
        want = full[full["max_len"] == ml].sort_values("beta")
        assert list(trace.x) == list(want["beta"]) and list(trace.y) == list(want["f1"])
        assert list(trace.error_y.array) == pytest.approx(list(want["hi"] - want["f1"]))
    fixed = param_chart(sweep, "f1", "beta", None, {"max_len": 1}, preset="test-short", params=param_columns(sweep))
    assert len(fixed.data) == 1 and list(fixed.data[0].customdata[:, 0]) == ["com:test-short[beta=0.3]",
                                                                              "com:test-short[beta=0.8]"]


def test_ablation_chart_puts_presets_beside_the_full_system(sweep) -> None:
    fig = ablation_chart(sweep, "f1", {"beta": 0.8, "max_len": 8}, params=param_columns(sweep))
    bar = fig.data[0]
    assert list(bar.customdata[:, 0]) == ["com[beta=0.8]", "com:test-short[beta=0.8]"]
    assert bar.x[0] == FULL and "&lt;b&gt;Fig. 9&lt;/b&gt;" in bar.x[1] and "<b>Fig" not in bar.x[1]
    assert "beta=0.8, max_len=8" in fig.layout.title.text


def test_benchmark_page_draws_a_sweep(app_env, sweep) -> None:
    at = benchmark_with(app_env, sweep)
    assert not at.exception and not at.error, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert list(table["point"]) == [p["name"] for p in sweep["points"]]
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("f1 against beta" in s for s in specs) and any("ablations, f1" in s for s in specs)
    at.selectbox(key="sw_x").set_value("max_len").run()
    at.selectbox(key="sw_line").set_value("beta").run()
    at.selectbox(key="sw_metric").set_value("judge").run()
    assert not at.exception, [e.value for e in at.exception]
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("judge against max_len" in s and "beta=0.3" in s for s in specs)
    assert "Incomplete sweep" not in [w.value for w in at.warning]
