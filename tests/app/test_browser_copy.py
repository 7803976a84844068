"""Text copied from the app carries no invisible word joiner (md_escape puts one into URLs so Markdown does not
link them): a pasted URL works. Headless Debian chromium; skips without it."""

from __future__ import annotations

import pytest

from tests.browser_util import app_server, launch, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

COPY = """(md) => {
  const p = document.createElement("p");  // text as md_escape leaves it on the page
  p.textContent = md;
  document.querySelector("[data-testid='stMain']").appendChild(p);
  const range = document.createRange();
  range.selectNodeContents(p);
  window.getSelection().removeAllRanges();
  window.getSelection().addRange(range);
  const data = new DataTransfer();
  p.dispatchEvent(new ClipboardEvent("copy", {clipboardData: data, bubbles: true, cancelable: true}));
  return data.getData("text/plain");
}"""


def test_a_copied_url_has_no_word_joiner(tmp_path):
    with app_server(tmp_path / "store") as base, launch() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/home", wait_until="domcontentloaded")
        wait_text(page, "LLM provider", 90)
        page.wait_for_timeout(500)
        assert page.evaluate(COPY, "see https://\u2060e.com and a@\u2060b.org") == "see https://e.com and a@b.org"
