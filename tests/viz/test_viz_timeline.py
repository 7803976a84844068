"""Replay's timeline strip (memcore.viz.timeline)."""

from __future__ import annotations

from memcore.types import Event
from memcore.viz.replay import build_replay
from memcore.viz.timeline import kinds_present, next_event_step, timeline_figure, timeline_frame


def _ev(step: int, kind: str, system: str = "xmemory") -> Event:
    return Event(system=system, kind=kind, item_kind="theme", item_ids=[f"t{step}"], step=step, reason="r")


def _data():
    xm = build_replay("xmemory", [_ev(1, "created"), _ev(1, "created"), _ev(3, "split"), _ev(3, "indexed"),
                                  _ev(7, "merged"), _ev(9, "created")], None, None, 10)
    mw = build_replay("memweaver", [_ev(2, "created", "memweaver"), _ev(5, "superseded", "memweaver")], None, None, 10)
    return {"xmemory": xm, "memweaver": mw}


def test_frame_counts_events_per_system_kind_and_step_without_bookkeeping():
    f = timeline_frame(_data())
    assert "indexed" not in set(f["event"])
    row = f[(f["system"] == "xmemory") & (f["event"] == "created") & (f["step"] == 1)]
    assert int(row["n"].iloc[0]) == 2
    assert kinds_present(f) == ["created", "merged", "split", "superseded"]


def test_next_consolidation_event_filters_by_system_and_kind():
    f = timeline_frame(_data())
    assert next_event_step(f, 0) == 3  # split
    assert next_event_step(f, 3) == 5  # memweaver superseded
    assert next_event_step(f, 3, systems=["xmemory"]) == 7
    assert next_event_step(f, 3, systems=["xmemory"], kinds=["split"]) is None
    assert next_event_step(f, 7, forward=False) == 5
    assert next_event_step(f, 0, kinds=["created"]) == 1


def test_figure_draws_one_clickable_row_per_system_and_kind_chosen():
    f = timeline_frame(_data())
    fig = timeline_figure(f, 10, systems=["xmemory"], kinds=["created", "split"])
    assert [t.name for t in fig.data] == ["created", "split"]
    assert list(fig.data[0].x) == [1, 9] and list(fig.data[0].text) == [2, 1]
    assert set(fig.data[1].y) == {"xmemory · split"}
    assert fig.layout.clickmode == "event" and fig.layout.xaxis.range == (-0.5, 10.5)
    assert timeline_figure(f, 10, systems=["com"]).data == ()
