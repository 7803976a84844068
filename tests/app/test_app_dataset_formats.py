"""The app's loader with Format auto (its default): a BEAM chat folder loads; a file of the wrong Format names
the one it was read as and, in the app's words, the Format that fixes it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from tests.datasets.test_beam_locomo_plus import write_beam  # noqa: E402


def _load(at: AppTest, path: Path, fmt: str = "auto") -> AppTest:
    at.selectbox[0].set_value(fmt).run()
    at.text_input[0].set_value(str(path)).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    return at


def test_the_loader_detects_beam_and_words_a_wrong_format_fix(app_env) -> None:
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert at.selectbox[0].value == "auto" and "beam" in at.selectbox[0].options
    chat = write_beam(app_env / "beam")
    at = _load(at, chat.parent)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["conv_id"] == "beam-100K-7"
    lines = [{"conversation": "c", "session": 1, "date": "2024-03-01 10:00", "speaker": "A", "text": "hi"}]
    jsonl = app_env / "chat.jsonl"
    jsonl.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    at = _load(at, jsonl, "locomo")
    shown = " ".join(e.value for e in at.error)
    assert "read as locomo" in shown and 'choose Format "jsonl"' in shown and "--dataset" not in shown
