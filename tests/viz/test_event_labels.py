"""The "offline engine" label of a decision is added when events are rendered, never doubled for older stores
(whose event text carries it)."""

from __future__ import annotations

import memcore.systems  # noqa: F401  (registers the systems' roles)
from memcore.types import Event
from memcore.viz.replay import build_replay, events_frame

NOTE = "(offline engine: similarity threshold instead of judgement)"


def _ev(reason: str, **data: object) -> Event:
    return Event(step=3, kind="linked", item_ids=["cluster-1", "D1:3"], reason=reason, system="memweaver",
                 conv_id="c", data=dict(data))


def test_offline_decisions_are_labelled_when_rendered() -> None:
    routed = _ev("router chose it among 2 clusters: offline: cosine 0.69 >= 0.65", role="mw_router")
    plain = _ev("cosine 0.85 to the centroid >= 0.8: joined directly")
    offline = events_frame([routed, plain], offline=True)["reason"].tolist()
    assert offline == [f"router chose it among 2 clusters: offline: cosine 0.69 >= 0.65 {NOTE}",
                       "cosine 0.85 to the centroid >= 0.8: joined directly"]
    model = build_replay("memweaver", [routed, plain], None, None, 4).events["reason"].tolist()
    assert model == [routed.reason, plain.reason]  # a model's decisions carry no label
    assert build_replay("memweaver", [routed], None, None, 4, offline=True).events["reason"].iloc[0].endswith(NOTE)


def test_older_stores_keep_their_label_once() -> None:
    old = _ev(f"router chose it among 2 clusters {NOTE}: offline: cosine 0.69 >= 0.65")
    old_with_role = _ev(old.reason, role="mw_router")
    shown = events_frame([old, old_with_role], offline=True)["reason"].tolist()
    assert shown == [old.reason, old.reason] and all(s.count("offline engine") == 1 for s in shown)
