"""A Replay link whose step lies past the end (issue 37) opens the last step and says so."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.app.test_app_pages import STEPS, build, home_with_demo  # noqa: E402


def test_a_step_past_the_end_opens_the_last_step_and_says_so(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["naive_rag"], "replay_systems")
    at.query_params["step"] = "100000"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    last = int(at.slider(key="replay_step").max)
    assert last >= STEPS - 1 and at.session_state["replay_step"] == last  # the last step, not turn 1
    assert any("step 100,000, past the end" in i.value and f"({last})" in i.value for i in at.info), (last, [i.value for i in at.info])
    at.button(key="rp_first").click().run()
    assert at.session_state["replay_step"] == 0 and not any("past the end" in i.value for i in at.info)
