"""Text copied from the app is the text shown (issue 37 minor 5): a URL in data shows as a code span, not a link,
and carries no invisible character (no U+2060 word joiner), so a copied URL works when pasted. Headless Debian
chromium; skips without it."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

import pytest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.app.test_app_escaping import CONV, hostile_file
from tests.browser_util import app_server, launch, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

SELECT = """(sel) => {
  const el = [...document.querySelectorAll(sel)].find(e => e.innerText.includes("Conversation:"));
  const range = document.createRange();
  range.selectNodeContents(el);
  window.getSelection().removeAllRanges();
  window.getSelection().addRange(range);
  return {copied: String(window.getSelection()),
          links: [...el.querySelectorAll("a")].map(a => a.href), code: [...el.querySelectorAll("code")].map(c => c.innerText)};
}"""


def test_a_copied_url_is_the_url_shown(tmp_path):
    store = tmp_path / "store"
    Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
              embedder=HashingEmbedder()).load(hostile_file(tmp_path))
    with app_server(store) as base, launch() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/home?conv={quote(CONV)}", wait_until="domcontentloaded")
        wait_text(page, "LLM provider", 90)
        side = "[data-testid='stSidebar'] [data-testid='stCaptionContainer']"
        page.locator(side).filter(has_text="Conversation:").first.wait_for(timeout=60_000)
        got = page.evaluate(SELECT, side)
        shoot(page, tmp_path / "screenshots", "sidebar-url")
    assert got["copied"].strip() == f"Conversation: {CONV}", got  # what is copied is the id as stored
    assert not [c for c in got["copied"] if unicodedata.category(c) == "Cf"], got
    assert got["links"] == [] and got["code"] == ["https://e.com"], got  # shown as code, never a live link
