"""Replay keeps the systems picked across page visits (issue 37 minor 4): Streamlit drops a widget's state when its
page is left, and Replay came back with the default systems."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.app.test_app_pages import errors, home_with_demo  # noqa: E402


def test_replay_keeps_the_systems_picked_after_other_pages(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    default = list(at.multiselect(key="replay_systems").value)
    picked = ["naive_rag", "com[beta=0.8]", "xmemory"]
    assert picked != default
    at.multiselect(key="replay_systems").set_value(picked).run()
    for page in ("pages/ask.py", "pages/benchmark.py"):
        at.switch_page(page).run()
    at.query_params.clear()
    at.switch_page("pages/replay.py").run()
    assert not errors(at), errors(at)
    assert list(at.multiselect(key="replay_systems").value) == picked
