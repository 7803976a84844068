"""Fixtures shared by the eval tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture()
def two_demo_chats(tmp_path: Path) -> Path:
    """A JSONL chat file of two conversations: the demo ("demo") and a copy of it renamed "demo2"."""
    from memcore.datasets import load_demo, save_jsonl_chat

    a, b = load_demo(), load_demo()
    b.id = "demo2"
    for x in (*b.turns, *b.questions):
        x.conv_id = "demo2"
    for q in b.questions:
        q.id = q.id.replace("demo:", "demo2:")
    path = tmp_path / "two.jsonl"
    save_jsonl_chat([a, b], path)
    return path
