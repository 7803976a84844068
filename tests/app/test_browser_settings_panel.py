"""The settings panel in headless Debian chromium (issue 26 done-when): set a parameter in the panel, build the
variant's memory with a click, ask, see the variant's name on the answer, and a fresh browser opening the copied
link gets the same variant (picker, settings and answer).

Skips when /usr/bin/chromium is absent. Screenshots go to the test's tmp dir (and to $MEMCORE_SCREENSHOTS).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from tests.browser_util import ARGS, CHROMIUM, demo_app, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.plugins]  # recent_k: the example plugin
expect = pytest.importorskip("playwright.sync_api").expect
skip_without_chromium()

VARIANT = "recent_k[k=3]"  # recent_k's k is a construction field: the variant needs its own memory


def _main(page):
    return page.locator("[data-testid='stMain']")


def test_set_a_parameter_build_ask_and_reopen_the_link(tmp_path):
    with demo_app(tmp_path, width=1280, height=2600) as app:
        page, base, shots = app.page, app.base, app.shots
        page.goto(f"{base}/ask?systems=recent_k&q=demo:q0", wait_until="domcontentloaded")
        wait_text(page, "Settings · recent_k", 60)
        page.get_by_text("Settings · recent_k").first.click()
        field = _main(page).get_by_label("k", exact=True)
        field.fill("3")
        field.press("Enter")
        wait_text(page, "Construction settings changed (k)", 60)
        expect(_main(page).get_by_text(re.compile(r"built only when you click Build"))).to_have_count(1)
        shoot(page, shots, "50-panel-construction-change")
        assert VARIANT in unquote(page.url)  # the link carries the canonical variant at once
        assert _main(page).get_by_role("button", name=re.compile(r"Ask$")).count() == 0  # nothing built yet

        _main(page).get_by_role("button", name=re.compile(r"Build$")).click()
        _main(page).get_by_role("button", name=re.compile(r"Ask$")).click(timeout=300_000)
        header = _main(page).get_by_text(f"{VARIANT} · retriever dense", exact=False)
        header.first.wait_for(timeout=120_000)
        shoot(page, shots, "51-answer-named-by-variant")
        link = page.url
        assert VARIANT in unquote(link) and "run=1" in link

        # a fresh browser (another chromium process: no cookies, no session) opening the copied link gets the same
        # variant: the picker, its settings and the answer from the variant's memory, under its name
        fresh = page.context.browser.browser_type.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            other = fresh.new_page(viewport={"width": 1280, "height": 2600})
            other.goto(link, wait_until="domcontentloaded")
            wait_text(other, f"Settings · {VARIANT}", 60)
            expect(_main(other).get_by_text(f"{VARIANT} · retriever dense").first).to_be_visible(timeout=120_000)
            other.get_by_text(f"Settings · {VARIANT}").first.click()
            expect(_main(other).get_by_label("k", exact=True)).to_have_value("3")
            shoot(other, shots, "52-fresh-browser-link")
        finally:
            fresh.close()
