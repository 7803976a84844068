"""A live conversation (memcore.live) on the app's pages with AppTest: the Live page lists it with its turns and
tool calls, and Replay shows its memory as built up to the newest turn (no Build card: an open conversation has
no end-of-conversation step to wait for)."""

from __future__ import annotations

import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memcore.embed import HashingEmbedder  # noqa: E402
from memcore.live import LiveMemory  # noqa: E402
from memcore.settings import Settings  # noqa: E402
from memcore.workbench import Workbench  # noqa: E402


def live_store(root: Path) -> Workbench:
    wb = Workbench(Settings(store_uri=str(root / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    live = LiveMemory(wb, "live-t", ["naive_rag"], client="test")
    live.remember("Alice", "I moved to Porto last week.", "2024-03-01 10:00")
    live.remember("Bob", "Porto has great <b>bridges</b> and *wine*.")
    live.recall("Where did Alice move?")
    return wb


def test_live_page_lists_the_conversation_its_turns_and_calls(app_env):
    live_store(app_env)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["conv"] = "live-t"
    at.switch_page("pages/live.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="live_conv").value == "live-t"
    captions = " ".join(c.value for c in at.caption)
    assert "2 turn(s) · 3 tool call(s)" in captions
    frames = [d.value for d in at.dataframe]
    turns = next(f for f in frames if "speaker" in f.columns)
    assert list(turns["text"])[0] == "Porto has great <b>bridges</b> and *wine*."  # newest first, literal
    assert list(turns["naive_rag"]) == ["indexed D1:2", "indexed D1:1"]
    assert any(m.value.startswith("**recall** by") for m in at.markdown)  # the newest recall's trace


def test_replay_shows_a_live_memory_built_to_its_newest_turn(app_env):
    live_store(app_env)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["conv"] = "live-t"
    at.query_params["systems"] = "naive_rag"
    at.switch_page("pages/replay.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [b for b in at.button if b.label.startswith("Build memory")]
    assert any("Turn" in m.value and "of 2" in m.value for m in [*at.markdown, *at.caption])


def test_chat_box_on_a_fresh_store_remembers_then_answers_from_memory(app_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/live.py").run()
    assert not at.exception, [e.value for e in at.exception]
    conv_id = at.selectbox(key="live_conv").value
    assert conv_id.startswith("live-chat-") and "Waiting for the first message" in " ".join(i.value for i in at.info)
    at.chat_input(key="live_chat").set_value("I adopted a dog named Rex.").run()
    assert "nothing to answer from" in " ".join(c.value for c in at.caption)  # the first turn: no reply invented
    at.chat_input(key="live_chat").set_value("What is my dog called?").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = " ".join(c.value for c in at.caption)
    assert "answered by offline engine" in captions
    wb = Workbench(Settings(store_uri=str(app_env / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    turns = wb.conversation(conv_id).turns
    assert [t.speaker for t in turns] == ["User", "User", "Assistant"]
    assert turns[-1].text == at.text[-1].value  # the reply shown is the reply remembered
