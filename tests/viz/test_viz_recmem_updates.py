"""RecMem's Replay view shows fact maintenance (Eq. 8-9): each rewritten fact, before and after."""

from __future__ import annotations

from memcore.systems.recmem.view import fact_updates_frame, recmem_growth
from memcore.types import Event
from memcore.viz.parts import parts_of
from memcore.viz.replay import build_replay


def _events() -> list[Event]:
    return [
        Event(4, "created", ["semantic-1"], "fact", "recmem", "c", "D1:4", "semantic", {}),
        Event(9, "updated", ["semantic-1"], "fact maintenance during the refinement of episode-2", "recmem", "c",
              "D2:1", "semantic", {"old_text": "Maya lives in *Lyon*", "new_text": "Maya moved to Paris",
                                   "episode": "episode-2", "type": "fact", "maintenance": "update"}),
        # other "updated" events (a failed refinement, an xMemory theme label) are not fact maintenance
        Event(11, "updated", ["episode-3"], "semantic refinement of episode-3 failed", "recmem", "c", "D2:5",
              "episode", {"llm_error": "timeout"}),
    ]


def test_fact_updates_frame_lists_rewritten_facts_only() -> None:
    rd = build_replay("recmem", _events(), None, None, 12)
    df = fact_updates_frame(rd)
    assert list(df["fact"]) == ["semantic-1"]
    row = df.iloc[0]
    assert (row["before"], row["after"], row["episode"], row["step"]) == (
        "Maya lives in *Lyon*", "Maya moved to Paris", "episode-2", 9)
    assert fact_updates_frame(rd, upto=8).empty


def test_recmem_growth_shows_fact_maintenance_from_its_step_on() -> None:
    rd = build_replay("recmem", _events(), None, None, 12)
    titles = [p.title for p in parts_of(recmem_growth(rd, 10, lambda kind, step: []))]
    assert "Fact maintenance" in titles
    before = [p.title for p in parts_of(recmem_growth(rd, 8, lambda kind, step: []))]
    assert "Fact maintenance" not in before and "Consolidations" in before
