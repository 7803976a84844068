"""Shared test fixtures: a tiny conversation, an isolated workbench, the shared datasets dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.testing import contract_workbench, tiny_conversation
from memcore.types import Conversation
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def make_conversation(conv_id: str = "tiny") -> Conversation:
    """Two sessions, two speakers, with repeated topics and dates (memcore.testing's, shared with plugins)."""
    return tiny_conversation(conv_id)


@pytest.fixture
def tiny_conv() -> Conversation:
    return make_conversation()


@pytest.fixture
def workbench(tmp_path) -> Workbench:
    """A workbench on a temporary store with the hashing embedder and the offline engine."""
    return contract_workbench(tmp_path)


@pytest.fixture
def shared_dir() -> Path:
    if not (SHARED / "datasets").is_dir():
        pytest.skip(f"shared datasets not found at {SHARED} (they live beside the repo in ../shared)")
    return SHARED
