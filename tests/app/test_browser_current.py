"""One current conversation, in headless Debian chromium: after a file is uploaded on Home, the "Next" link and
the sidebar open that conversation on every page (never the demo loaded before it).

Skips when /usr/bin/chromium is absent. Screenshots go to the test's tmp dir (and $MEMCORE_SCREENSHOTS when set).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.browser_util import demo_app, pick, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

CONV = "50"
TURNS = [[("Ada", "I started learning the cello last week."), ("Bram", "Nice, who teaches you?"),
          ("Ada", "A teacher called Ilse from Utrecht."), ("Bram", "Sounds great.")],
         [("Bram", "I adopted a cat named Biscuit."), ("Ada", "How old is Biscuit?"),
          ("Bram", "Biscuit is two years old."), ("Ada", "Lovely.")]]
QUESTION = "What instrument is Ada learning?"


def small_locomo(path: Path) -> Path:
    """A two-session LoCoMo file (the release's list layout) holding conversation 50."""
    conv: dict = {"speaker_a": "Ada", "speaker_b": "Bram"}
    for s, turns in enumerate(TURNS, 1):
        conv[f"session_{s}_date_time"] = f"10:00 am on {s} March, 2023"
        conv[f"session_{s}"] = [{"speaker": who, "dia_id": f"D{s}:{i}", "text": text}
                                for i, (who, text) in enumerate(turns, 1)]
    qa = [{"question": QUESTION, "answer": "cello", "evidence": ["D1:1"], "category": 4},
          {"question": "What is the name of Bram's cat?", "answer": "Biscuit", "evidence": ["D2:1"], "category": 4}]
    path.write_text(json.dumps([{"sample_id": CONV, "conversation": conv, "qa": qa}]), encoding="utf-8")
    return path


SHOWS = """(text) => document.querySelector("[data-testid='stMain']").innerText.includes(text)
  || [...document.querySelectorAll("[data-testid='stMain'] input")].some((i) => i.value.includes(text))"""


def on_the_loaded_conversation(page, url_path: str, marker: str) -> None:
    """The page at /url_path shows conversation 50: in its URL, the sidebar's status and picker, and `marker`
    (text only conversation 50 has) in the page."""
    page.wait_for_url(re.compile(rf"/{url_path}\?(.*&)?conv={CONV}(&|$)"), timeout=60_000)
    page.wait_for_function(SHOWS, arg=marker, timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text(f"Conversation: {CONV}").first.wait_for(timeout=30_000)
    picker = sidebar.get_by_test_id("stSelectbox").filter(has_text="Conversation")
    if picker.count():  # the pages working on one conversation carry the picker
        shown = picker.first.inner_text() + "".join(i.input_value() for i in picker.first.locator("input").all())
        assert shown.replace("Conversation", "", 1).strip() == CONV, shown  # the picker shows 50, not the demo
    assert "conv=demo" not in page.url


def test_an_uploaded_file_is_the_conversation_of_every_page(tmp_path):
    upload = small_locomo(tmp_path / "conv-50.json")
    with demo_app(tmp_path, width=1280, height=1400) as app:
        page, shots = app.page, app.shots
        page.get_by_text("Load a dataset file").click()
        page.locator("input[type=file]").set_input_files(str(upload))
        page.get_by_role("button", name="Load file").click()
        wait_text(page, f"Current: {CONV}", 60)
        shoot(page, shots, "current-01-home-loaded")

        page.get_by_role("link", name="Next: replay the conversation").click()
        on_the_loaded_conversation(page, "replay", f"(0/{len(TURNS[0]) + len(TURNS[1])})")  # 8 turns, not 90
        page.get_by_role("button", name="Build memory").click()
        wait_text(page, "Ada: I started learning the cello", 120)  # step 1 of conversation 50
        shoot(page, shots, "current-02-replay")

        nav = page.get_by_test_id("stSidebarNav")
        for title, url_path, marker in (("Explore", "explore", "item(s) shown"),  # only 50's memory is built
                                        ("Ask", "ask", QUESTION),
                                        ("Compare", "compare", QUESTION),
                                        ("Export", "export", f"Replay · {CONV}"),
                                        ("Replay", "replay", "Ada: I started learning the cello"),
                                        ("Home", "home", "Speakers")):
            nav.get_by_role("link", name=title, exact=True).click()
            on_the_loaded_conversation(page, url_path, marker)
            shoot(page, shots, f"current-03-{url_path}")
        assert page.get_by_test_id("stMetricValue").first.inner_text() == "8"  # Home counts 50's turns

        # picking another conversation in a page's picker makes that one current everywhere just the same
        page.get_by_role("link", name="Explore", exact=True).click()
        on_the_loaded_conversation(page, "explore", "item(s) shown")
        pick(page, page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Conversation"), "demo")
        page.wait_for_url(re.compile(r"/explore\?(.*&)?conv=demo(&|$)"), timeout=60_000)
        nav.get_by_role("link", name="Ask", exact=True).click()
        page.wait_for_url(re.compile(r"/ask\?(.*&)?conv=demo(&|$)"), timeout=60_000)
        wait_text(page, "Conversation: demo", 30)
