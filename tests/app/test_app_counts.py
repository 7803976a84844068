"""Counts and controls that say what they mean (AppTest): pages without a conversation say what to do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))


@pytest.mark.parametrize("page", ["replay", "explore", "ask", "compare"])
def test_a_page_without_a_conversation_says_what_to_do(app_env, page):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("No conversation yet" in i.value and "Home" in i.value for i in at.main.info), page
