"""Shared test fixtures: a tiny conversation, an isolated workbench, the shared datasets dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.types import Conversation, Question, Turn
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def make_conversation(conv_id: str = "tiny") -> Conversation:
    """Two sessions, two speakers, with repeated topics and dates."""
    lines = [
        (1, "8 May, 2023", "Ana", "I adopted a puppy named Biscuit last week!"),
        (1, "8 May, 2023", "Ben", "Congrats! What breed is Biscuit?"),
        (1, "8 May, 2023", "Ana", "Biscuit is a golden retriever, very playful."),
        (1, "8 May, 2023", "Ben", "I started a pottery class at the community center."),
        (1, "8 May, 2023", "Ana", "Pottery sounds fun. I am training for the Lisbon half-marathon."),
        (1, "8 May, 2023", "Ben", "Good luck with the marathon training!"),
        (2, "25 May, 2023", "Ben", "How is Biscuit doing?"),
        (2, "25 May, 2023", "Ana", "Biscuit learned to sit yesterday. The golden retriever is smart."),
        (2, "25 May, 2023", "Ben", "My pottery teacher said my bowl was the best in class."),
        (2, "25 May, 2023", "Ana", "I ran 18 kilometres for the half-marathon on Sunday."),
    ]
    turns, counters = [], {}
    for i, (s, date, spk, text) in enumerate(lines):
        counters[s] = counters.get(s, 0) + 1
        iso = "2023-05-08T10:00:00" if s == 1 else "2023-05-25T10:00:00"
        turns.append(Turn(conv_id, f"D{s}:{counters[s]}", i, s, date, iso, spk, text))
    qs = [
        Question(f"{conv_id}:q0", conv_id, "What breed is Biscuit?", "golden retriever", ["D1:3"], 4),
        Question(f"{conv_id}:q1", conv_id, "What class did Ben start?", "pottery", ["D1:4"], 4),
        Question(f"{conv_id}:q2", conv_id, "What race is Ana training for?", "Lisbon half-marathon", ["D1:5"], 4),
    ]
    return Conversation(conv_id, ["Ana", "Ben"], turns, qs, source="test")


@pytest.fixture
def tiny_conv() -> Conversation:
    return make_conversation()


@pytest.fixture
def workbench(tmp_path) -> Workbench:
    """A workbench on a temporary store with the hashing embedder and the offline engine."""
    settings = Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing")
    return Workbench(settings, embedder=HashingEmbedder())


@pytest.fixture
def shared_dir() -> Path:
    if not (SHARED / "datasets").is_dir():
        pytest.skip(f"shared datasets not found at {SHARED} (they live beside the repo in ../shared)")
    return SHARED
