"""ReplayData's per-step counts as JSON data and back (memcore.viz.replay.replay_payload / replay_from_payload): the
same frames, events read from the source only when used, once."""

from __future__ import annotations

import json
import threading

import pandas as pd
import pytest

from memcore.types import Event
from memcore.viz.replay import ReplayData, build_replay, events_frame, replay_from_payload, replay_payload


def _ev(step: int, kind: str, ids: list[str]) -> Event:
    return Event(step=step, kind=kind, item_ids=ids, reason=f"{kind} at {step}", system="x", item_kind="episode")


class Source:
    """Counts its reads; its frames as the store's reader gives them."""

    def __init__(self, events: list[Event]) -> None:
        self.frame, self.reads = events_frame(events), []

    def all(self) -> pd.DataFrame:
        self.reads.append("all")
        return self.frame

    def at(self, step: int) -> pd.DataFrame:
        self.reads.append(step)
        return self.frame[self.frame["step"] == step].reset_index(drop=True)


@pytest.mark.parametrize("with_data", [True, False])
def test_round_trip_gives_the_same_frames(with_data):
    events = [_ev(1, "created", ["a"]), _ev(1, "indexed", []), _ev(3, "split", ["a", "b"])] if with_data else []
    versions = pd.DataFrame({"kind": ["episode", "semantic"], "id": ["a", "b"], "valid_from": [1, 3],
                             "valid_to": [4, 10**9]}) if with_data else None
    calls = pd.DataFrame({"ts": [1.0, 2.0, 3.0], "prompt_tokens": [5, 6, 7], "completion_tokens": [1, 1, 1],
                          "cache_hit": [False, True, False], "step": [1, 1, 3]}) if with_data else None
    rd = build_replay("x", events, versions, calls, 5)
    back = replay_from_payload("x", json.loads(json.dumps(replay_payload(rd))), Source(events))
    for name in ("counts", "event_counts", "cost"):
        pd.testing.assert_frame_equal(getattr(rd, name), getattr(back, name), obj=name)
    pd.testing.assert_series_equal(rd.call_rows, back.call_rows)
    assert [back.calls_at(s) for s in range(7)] == ([0, 2, 0, 1, 0, 0, 0] if with_data else [0] * 7)
    assert (back.n_events, back.cost_exact, back.notes) == (len(events), rd.cost_exact, rd.notes)
    assert not back.events_loaded


def test_events_are_read_a_step_at_a_time_then_once_for_all_threads():
    events = [_ev(1, "created", ["a"]), _ev(3, "split", ["a", "b"])]
    src = Source(events)
    rd = replay_from_payload("x", replay_payload(build_replay("x", events, None, None, 4)), src)
    assert rd.changed_at(3) == {"a", "b"} and rd.events_at(3)["event"].tolist() == ["split"]
    rd.events_at(3)
    assert src.reads == [3]  # one read of the step, kept
    got = []
    threads = [threading.Thread(target=lambda: got.append(len(rd.events))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [2] * 4 and src.reads == [3, "all"]  # loaded once
    pd.testing.assert_frame_equal(rd.events_at(1).reset_index(drop=True), src.at(1))


def test_a_replay_without_events_or_a_source_is_refused():
    with pytest.raises(ValueError, match="source"):
        ReplayData("x", 1, pd.DataFrame(), None, pd.DataFrame(), pd.DataFrame())


def test_a_step_read_while_another_session_clears_the_kept_steps_is_still_returned(monkeypatch):
    """ReplayData is shared by sessions: one may clear the kept steps (at STEP_READS of them) between another's read
    of a step and its return; that read still returns its frame."""
    from memcore.viz import replay

    events = [_ev(1, "created", ["a"]), _ev(3, "split", ["a", "b"])]
    src = Source(events)
    rd = replay_from_payload("x", replay_payload(build_replay("x", events, None, None, 4)), src)
    monkeypatch.setattr(replay, "STEP_READS", 0)  # every keep clears first: as if another session filled them
    real_keep = rd.keep_step
    monkeypatch.setattr(rd, "keep_step", lambda step, frame: (real_keep(step, frame), rd._steps.clear()))
    assert rd.events_at(3)["event"].tolist() == ["split"]


def test_events_at_equals_a_scan_of_every_event_whatever_their_order():
    """The step index gives each step's events as a scan would: the same rows, in stream order, with their labels;
    none for a step without events, before the first or after the last."""
    events = [_ev(3, "created", ["c"]), _ev(1, "created", ["a"]), _ev(3, "merged", ["a", "c"]), _ev(2, "split", ["a"]),
              _ev(1, "moved", ["a"]), _ev(7, "deleted", ["c"])]
    frame = events_frame(events)
    rd = ReplayData(system="x", n_steps=8, counts=pd.DataFrame(), events=frame, event_counts=pd.DataFrame(),
                    cost=pd.DataFrame())
    for step in range(-1, 10):
        pd.testing.assert_frame_equal(rd.events_at(step), frame[frame["step"] == step])
    assert rd.events_at(3)["event"].tolist() == ["created", "merged"]
