"""Charts that stay readable with many systems (issue 23 item 5): bars lie sideways with every name level from
five systems on, and a legend of many series goes under the chart in columns instead of scrolling beside it."""

from __future__ import annotations

import pandas as pd

from memcore.types import Usage
from memcore.viz.evidence import SIDEWAYS_FROM, compare_bar, cost_bar
from memcore.viz.replay import ReplayData, layer_counts_figure
from memcore.viz.theme import LEGEND_BESIDE_MAX

NAMES = [f"system_{i}" for i in range(9)] + ["naive_rag_session_long_variant"]


def test_bars_lie_sideways_for_many_systems_in_their_order():
    few = compare_bar([{"system": n, "context tokens": 10} for n in NAMES[:2]])
    assert few.data[0].orientation in (None, "v") and list(few.data[0].x) == NAMES[:2]
    many = compare_bar([{"system": n, "context tokens": i} for i, n in enumerate(NAMES)])
    bar = many.data[0]
    assert bar.orientation == "h" and list(bar.y) == NAMES and list(bar.x) == list(range(10))
    assert many.layout.yaxis.autorange == "reversed"  # the first system on top
    assert many.layout.height >= 28 * len(NAMES)  # a row per system
    assert bar.hovertemplate.startswith("%{y}: %{x}")
    usage = {n: {"answer": Usage(calls=1, prompt_tokens=5, completion_tokens=1)} for n in NAMES[:SIDEWAYS_FROM]}
    cost = cost_bar(usage)
    assert all(t.orientation == "h" for t in cost.data) and cost.layout.xaxis.title.text == "tokens"


def _replay(name: str, kinds: list[str]) -> ReplayData:
    counts = pd.DataFrame({k: [0, 1, 2] for k in kinds})
    empty = pd.DataFrame(index=counts.index)
    cost = pd.DataFrame({"tokens": [0, 0, 0], "calls": [0, 0, 0]})
    return ReplayData(name, 2, counts, pd.DataFrame(), empty, cost, True, [])


def test_a_legend_of_many_series_goes_under_the_chart_in_columns_that_hold_the_longest_name():
    few = layer_counts_figure({"a": _replay("a", ["episode", "semantic"])})
    assert few.layout.legend.orientation == "v"
    data = {n: _replay(n, ["episode", "semantic"]) for n in NAMES}
    fig = layer_counts_figure(data)
    entries = len(fig.data)
    assert entries > LEGEND_BESIDE_MAX
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.yref == "container" and legend.y == 0
    assert legend.entrywidth == 0.5  # the longest entry ("naive_rag_session_long_variant · semantic") needs 2 columns
    assert fig.layout.height >= 360 + 26 * (entries // 2)  # grown by the legend's rows: nothing scrolls
    short = layer_counts_figure({n: _replay(n, ["ep", "sem"]) for n in NAMES[:9]})
    assert short.layout.legend.entrywidth == 1 / 3


def test_a_system_with_no_layers_is_named_in_the_legend_without_a_line_over_the_zeros():
    none = ReplayData("com", 2, pd.DataFrame(index=[0, 1, 2]), pd.DataFrame(), pd.DataFrame(index=[0, 1, 2]),
                      pd.DataFrame({"tokens": [0, 0, 0], "calls": [0, 0, 0]}), True, [])
    fig = layer_counts_figure({"com": none, "xm": _replay("xm", ["episode"])})
    com = next(t for t in fig.data if t.name.startswith("com"))
    assert "turn index only" in com.name and com.showlegend is not False
    assert all(y is None for y in com.y)  # nothing drawn at 0 over xm's kinds while they are 0
