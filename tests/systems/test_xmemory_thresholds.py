"""xMemory's Stage II chart draws the thresholds the run used (recorded in its trace), not the default
configuration's; an older trace without them falls back to the configuration, and the chart says so."""

from __future__ import annotations

from memcore.systems.xmemory.config import XMemoryConfig
from memcore.systems.xmemory.structure import XMemoryStructure
from memcore.systems.xmemory.view import stage_two_figure, xmemory_structure


def _lines(fig) -> set[float]:
    return {s.y0 for s in fig.layout.shapes}


def _stage_two(blocks) -> object:
    return next(p.content for p in blocks if getattr(p, "title", None) == "Stage II")


def test_trace_records_the_thresholds_and_the_chart_draws_them(workbench, tiny_conv) -> None:
    default = XMemoryConfig()
    assert (default.include_gain, default.message_gain) == (-0.4, 0.25)
    tr = workbench.ask("xmemory", tiny_conv, tiny_conv.questions[0], include_gain=0.1, message_gain=0.9).trace
    assert tr.structure["thresholds"] == {"include_gain": 0.1, "message_gain": 0.9}
    assert XMemoryStructure.from_dict(tr.structure).thresholds == {"include_gain": 0.1, "message_gain": 0.9}
    fig = _stage_two(xmemory_structure(tr, {}))
    assert _lines(fig) == {0.1, 0.9}  # the run's, not the default -0.4 / 0.25
    assert "configuration defaults" not in fig.layout.title.text


def test_an_old_trace_falls_back_to_the_configuration_and_says_so() -> None:
    old = {"episodes": [{"id": "episode-1", "gain": 0.3, "decision": "include"}], "H0": 1.0}
    fig = stage_two_figure(old, -0.4, 0.25)
    assert _lines(fig) == {-0.4, 0.25} and "configuration defaults" in fig.layout.title.text
    new = {**old, "thresholds": {"include_gain": 0.05, "message_gain": 0.5}}
    assert _lines(stage_two_figure(new, -0.4, 0.25)) == {0.05, 0.5}
