"""Replay's first-paint charts in Vega-Lite (memcore.viz.vega): the same lines as every step's counts, a fixed
x domain the page's step line is placed by, hover values at named steps, every system in the colour legend."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcore.viz.replay import ReplayData
from memcore.viz.vega import (
    DRAWN_COLUMNS,
    TOOLTIP_COLUMNS,
    changes,
    cumulative_cost_spec,
    layer_counts_spec,
    steps_per_column,
    thinned,
)
from memcore.viz.views import system_color


def _replay(name: str, counts: pd.DataFrame, exact: bool = True) -> ReplayData:
    n = len(counts) - 1
    cost = pd.DataFrame({"tokens": np.arange(n + 1) * 10, "calls": np.arange(n + 1) // 3})
    return ReplayData(name, n, counts, pd.DataFrame(), pd.DataFrame(index=counts.index), cost, exact, [])


def _redrawn(lines: pd.DataFrame, system: str, kind: str, n: int) -> list[float]:
    """Every step's value read back from the change points as a step-after line draws them."""
    rows = lines[(lines["system"] == system) & (lines["kind"] == kind)].set_index("step")["value"]
    return rows.reindex(range(n + 1)).ffill().tolist()


def test_change_points_draw_the_same_step_line_as_every_steps_value():
    rng = np.random.default_rng(3)
    values = pd.Series(np.cumsum(rng.integers(0, 2, 500)) - (np.arange(500) > 300) * 5)  # rises, then a merge
    ch = changes(values)
    assert len(ch) < len(values) and ch.index[0] == 0 and ch.index[-1] == 499  # both ends kept
    assert ch.reindex(values.index).ffill().tolist() == values.tolist()
    assert changes(pd.Series([4, 4, 4])).index.tolist() == [0, 2]


def test_layers_spec_holds_every_kinds_line_and_names_a_system_without_items():
    n = 900
    steps = np.arange(n + 1)
    xm = pd.DataFrame({"episode": steps // 2, "theme": steps // 100})
    com = pd.DataFrame(index=steps)
    spec = layer_counts_spec({"com": _replay("com", com), "xmemory": _replay("xmemory", xm)})
    lines, hover = spec["datasets"]["lines"], spec["datasets"]["hover"]
    for kind in ("episode", "theme"):
        assert _redrawn(lines, "xmemory", kind, n) == xm[kind].astype(float).tolist()
    assert len(lines) < 2 * (n + 1)  # change points only
    line = spec["layer"][0]["encoding"]
    # com stores no item: named in the colour legend (its colour), no line
    assert line["color"]["scale"] == {"domain": ["com (turn index only: no items)", "xmemory"],
                                      "range": [system_color("com"), system_color("xmemory")]}
    assert not (lines["system"].str.startswith("com")).any()
    assert line["strokeDash"]["scale"]["domain"] == ["episode", "theme"]
    assert len(set(map(tuple, line["strokeDash"]["scale"]["range"]))) == 2  # a dash pattern per kind
    # the page places its step line by the x domain: fixed to the steps, unpadded
    assert line["x"]["scale"] == {"domain": [0, n], "nice": False, "zero": False, "padding": 0}
    # hover: at most TOOLTIP_COLUMNS columns, each naming its step, with the values at that step
    assert len(hover) <= TOOLTIP_COLUMNS and hover["step"].iloc[0] == 0
    tips = spec["layer"][1]["encoding"]["tooltip"]
    assert [t["title"] for t in tips] == ["step", "xmemory · episode", "xmemory · theme"]
    for _, row in hover.iterrows():
        assert row["v0"] == xm["episode"].iloc[int(row["step"])] and row["v1"] == xm["theme"].iloc[int(row["step"])]
    assert (hover["step_end"] > hover["step"]).all() and hover["step"].max() <= n <= hover["step_end"].max()
    assert spec["usermeta"]["embedOptions"]["renderer"] == "svg"  # the step line reads the plot's SVG frame


def test_every_step_is_its_own_hover_column_in_a_short_conversation():
    steps = np.arange(31)
    spec = layer_counts_spec({"xm": _replay("xm", pd.DataFrame({"episode": steps}))})
    hover = spec["datasets"]["hover"]
    assert hover["step"].tolist() == list(range(31)) and hover["v0"].tolist() == list(map(float, range(31)))


def test_cost_spec_names_an_estimated_cost_and_keeps_the_metric():
    steps = np.arange(11)
    data = {"com": _replay("com", pd.DataFrame({"turn": steps})),
            "mw": _replay("mw", pd.DataFrame({"entity": steps}), exact=False)}
    spec = cumulative_cost_spec(data, "calls")
    lines = spec["datasets"]["lines"]
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["com", "mw (approx.)"]
    assert _redrawn(lines, "mw (approx.)", "calls", 10) == (steps // 3).astype(float).tolist()
    assert spec["layer"][0]["encoding"]["y"]["title"] == "construction LLM calls"
    assert "strokeDash" not in spec["layer"][0]["encoding"]


def test_names_from_data_stay_data_in_the_spec():
    """A system or kind name is a field value or a title (Vega's tooltip escapes HTML; SVG text is text), never a
    field path: hover columns are v0, v1, ... whatever the series is called."""
    xss = "<img src=x onerror=alert(1)>.a[0]"
    steps = np.arange(5)
    spec = layer_counts_spec({xss: _replay(xss, pd.DataFrame({xss: steps}))})
    tips = spec["layer"][1]["encoding"]["tooltip"]
    assert [t["field"] for t in tips] == ["step", "v0"] and tips[1]["title"] == f"{xss} · {xss}"
    assert set(spec["datasets"]["hover"].columns) == {"step", "step_end", "v0"}


def test_bars_keep_every_system_in_order_and_lie_sideways_from_five():
    from memcore.types import Usage
    from memcore.viz.evidence import SIDEWAYS_FROM
    from memcore.viz.vega import compare_bar_spec, cost_bar_spec, kind_count_spec

    counts = {"naive_rag": {}, "xmemory": {"theme": 3, "episode": 10}, "memweaver": {"entity": 7}}
    spec = kind_count_spec(counts)
    bars = spec["datasets"]["bars"]
    assert {(r.system, r.part, r.value) for r in bars.itertuples()} == {
        ("xmemory", "theme", 3), ("xmemory", "episode", 10), ("memweaver", "entity", 7)}
    assert spec["encoding"]["x"]["scale"]["domain"] == list(counts)  # naive_rag keeps its (empty) place
    assert spec["encoding"]["y"]["field"] == "value"  # upright for three systems
    many = {f"s{i}": {"answer": Usage(calls=2, prompt_tokens=10 * i, completion_tokens=1)} for i in range(SIDEWAYS_FROM)}
    cost = cost_bar_spec(many)
    assert cost["encoding"]["y"]["scale"]["domain"] == list(many) and cost["encoding"]["x"]["field"] == "value"
    assert list(cost["datasets"]["bars"]["value"]) == [10 * i + 1 for i in range(SIDEWAYS_FROM)]
    assert set(cost["datasets"]["bars"]["calls"]) == {2}
    assert "calls" in [t["field"] for t in cost["encoding"]["tooltip"]]
    ctx = compare_bar_spec([{"system": "a", "context tokens": 5}, {"system": "b", "context tokens": None}])
    assert list(ctx["datasets"]["bars"]["value"]) == [5, 0] and ctx["encoding"]["color"]["legend"] is None


def test_a_line_past_the_plots_columns_keeps_each_columns_values_and_says_so():
    """At 18,460 steps (the 10M chat) a line is drawn k steps to a column: in every column the lowest and highest
    value and the value it starts with are those of every step; the rows are bounded by the columns; the chart's
    subtitle names the rule. Up to DRAWN_COLUMNS steps every change point is drawn, and no subtitle."""
    rng = np.random.default_rng(7)
    n = 18_460
    values = pd.Series(np.cumsum(rng.integers(-1, 3, n + 1)))  # changes at most steps, up and down
    k = steps_per_column(n)
    th = thinned(values, k)
    assert k > 1 and len(th) <= 4 * (n // k + 1) < len(changes(values))
    cols = np.arange(n + 1) // k
    full = values.groupby(cols).agg(["min", "max"])
    line = th.reindex(range(n + 1)).ffill()  # what the step-after line draws at every step
    drawn = line.groupby(cols).agg(["min", "max"])
    assert np.array_equal(drawn.to_numpy(), full.to_numpy())  # every column spans the same values: none flattened
    starts = np.arange(0, n + 1, k)
    assert line.iloc[starts].tolist() == values.iloc[starts].tolist()  # and starts at the same value
    counts = pd.DataFrame({"passage": values.to_numpy()})
    spec = layer_counts_spec({"memweaver": _replay("memweaver", counts)})
    assert f"drawn {k} to a column" in spec["title"]["subtitle"] and len(spec["datasets"]["lines"]) == len(th)
    small = pd.DataFrame({"passage": np.arange(DRAWN_COLUMNS)})
    assert thinned(small["passage"], steps_per_column(DRAWN_COLUMNS - 1)).equals(changes(small["passage"]))
    assert "subtitle" not in layer_counts_spec({"memweaver": _replay("memweaver", small)})["title"]
