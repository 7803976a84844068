"""Replay's events frame built from the stored event rows (memcore.viz.replay.events_frame_of_table) is the frame
built from Event objects (events_frame), and the store's range read equals slicing every event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.store.lance import LanceStore
from memcore.store.records import EventStream, event_row
from memcore.store.view import MemoryView
from memcore.types import Event
from memcore.viz.replay import events_frame, events_frame_of_table

SPACE, CONV = "memweaver-test", "c1"


def _events() -> list[Event]:
    """Events of several steps, stored out of order: a role decided offline, a reason already marked, non-ASCII
    and control characters, a long payload, an empty one, nested data naming a role."""
    long = {"text": "x" * 5000}
    return [
        Event(step=3, kind="merged", item_ids=["a", "b"], reason="merged two", system="memweaver", conv_id=CONV,
              turn_id="t3", item_kind="fact", data={"role": "mw_review", "why": "caf\u00e9 \u2013 ok"}),
        Event(step=1, kind="created", item_ids=["a"], reason="new", system="memweaver", conv_id=CONV, turn_id="t1",
              item_kind="fact", data={}),
        Event(step=1, kind="created", item_ids=["b"], reason="new (offline engine: rule)", system="memweaver",
              conv_id=CONV, turn_id="t1", item_kind="fact", data={"role": "mw_review"}),
        Event(step=2, kind="updated", item_ids=["c"], reason="tab\there", system="memweaver", conv_id=CONV,
              turn_id="t2", item_kind="entity", data={"nested": {"role": "mw_review"}, "bell": "\x07"}),
        Event(step=2, kind="created", item_ids=[], reason="long", system="memweaver", conv_id=CONV, turn_id="t2",
              item_kind="entity", data=long),
    ]


@pytest.fixture()
def mem(tmp_path: Path) -> MemoryView:
    """A store holding the events above (and one row written ASCII-escaped, as older stores did)."""
    store = LanceStore(str(tmp_path / "db"), dim=8)
    rows = [event_row(SPACE, e, i) for i, e in enumerate(_events())]
    old = event_row(SPACE, Event(step=4, kind="created", item_ids=["d"], reason="old", system="memweaver",
                                 conv_id=CONV, turn_id="t4", item_kind="fact", data={"w": "na\u00efve"}), 0)
    old["data"] = json.dumps({"w": "na\u00efve"})  # ensure_ascii: "na\\u00efve"
    store.tables.table("events").add([*rows, old])
    return MemoryView(store, "memweaver", CONV, SPACE)


@pytest.mark.parametrize("offline", [False, True])
def test_frame_of_stored_rows_equals_frame_of_events(mem: MemoryView, offline: bool) -> None:
    """Same rows, order, columns and dtypes, with the offline role's note where events_frame adds it."""
    want = events_frame(mem.events(), offline)
    got = events_frame_of_table(mem.events_table(), offline)
    assert list(want["step"]) == [1, 1, 2, 2, 3, 4]
    assert got.equals(want) and got.dtypes.equals(want.dtypes)
    noted = got[got["reason"].str.contains("offline engine: ")]["reason"].tolist()
    added = ["merged two (offline engine: similarity thresholds instead of judgement)"] if offline else []
    assert noted == ["new (offline engine: rule)", *added]  # a reason stored marked is shown as stored
    assert got["data"].str.len().max() == 2000 and "na\u00efve" in got["data"].iloc[-1]


def test_range_read_equals_slice(mem: MemoryView) -> None:
    """events(after=, upto=) reads what slicing every event gives (Replay's first step diff reads only these)."""
    every = mem.events()
    for after, upto in [(0, 4), (1, 2), (1, 3), (3, 3), (4, 9)]:
        assert mem.events(after=after, upto=upto) == [e for e in every if after < e.step <= upto]


def test_event_stream_builds_the_events_of_the_steps_asked(mem: MemoryView) -> None:
    """EventStream (the stream Replay's step diff holds) gives, for every pair of bounds, the Events the store's
    range read gives: the same events in the same order, built only for the steps asked."""
    stream = EventStream(mem.events_table())
    every = mem.events()
    assert len(stream) == len(every) == 6 and stream.between() == every
    for after, upto in [(0, 4), (1, 2), (1, 3), (3, 3), (4, 9), (-1, 0), (2, None), (None, 1), (3, 1)]:
        assert stream.between(after, upto) == mem.events(after=after, upto=upto), (after, upto)
    assert EventStream(None).between(0, 9) == [] and len(EventStream(None)) == 0


def test_no_events(tmp_path: Path) -> None:
    """A memory without stored events: an empty frame with the frame's columns."""
    store = LanceStore(str(tmp_path / "db"), dim=8)
    view = MemoryView(store, "memweaver", CONV, SPACE)
    assert view.events_table() is None and view.events() == []
    assert list(events_frame_of_table(None).columns) == list(events_frame([]).columns)
