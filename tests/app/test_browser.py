"""End to end in headless Debian chromium: load the demo, replay to the end, ask with several systems.

Skips when /usr/bin/chromium is absent (scripts/install-browser.sh installs it). Screenshots go
to the test's tmp dir (and to $MEMCORE_SCREENSHOTS when set).
"""

from __future__ import annotations

import pytest

from memcore.datasets import load_demo
from tests.browser_util import app_server, demo_app, launch, offsite, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

DEMO = load_demo()
STEPS = len(DEMO.turns) + 1  # Replay counts one step per turn plus the empty start


def test_demo_replay_and_ask_in_a_browser(tmp_path):
    with demo_app(tmp_path, height=1600) as app:
        page, base, shots = app.page, app.base, app.shots
        shoot(page, shots, "01-home")

        page.goto(f"{base}/replay", wait_until="domcontentloaded")
        page.get_by_role("button", name="Build memory").click(timeout=60_000)
        wait_text(page, f"Turn 1 of {STEPS - 1}", 900)
        slider = page.get_by_role("slider").first
        slider.focus()
        page.keyboard.press("End")
        wait_text(page, "end of conversation", 30)
        page.get_by_text("Memory layers over time").first.wait_for(timeout=30_000)
        page.get_by_text("end of conversation").first.scroll_into_view_if_needed()
        shoot(page, shots, "02-replay-end")
        page.get_by_role("radio", name="Growth").click()
        page.get_by_role("radio", name="xMemory").first.click()
        page.get_by_text("xMemory hierarchy").first.wait_for(timeout=30_000)
        page.get_by_text("xMemory hierarchy").first.scroll_into_view_if_needed()
        shoot(page, shots, "03-replay-growth-xmemory")

        page.goto(f"{base}/ask", wait_until="domcontentloaded")
        build = page.get_by_role("button", name="Build memory")
        ask = page.get_by_role("button", name="Ask", exact=True)
        build.or_(ask).first.wait_for(timeout=60_000)
        if build.count():
            build.click()
        ask.click(timeout=600_000)
        wait_text(page, "Tokens per question by stage", 600)
        cost = page.locator("[data-testid='stVegaLiteChart']").filter(has_text="Tokens per question by stage").first
        assert cost.is_visible()
        cost.scroll_into_view_if_needed()
        shoot(page, shots, "04-ask-naive-rag")

        for system, marker in (("com", "CoM chains"), ("xmemory", "Retrieval path"), ("memweaver", None)):
            page.get_by_role("tab", name=system, exact=True).click()
            page.locator("[role=tab]:visible", has_text="System structure").click()
            if marker:
                view = page.get_by_text(marker).locator("visible=true").first
                view.wait_for(timeout=30_000)
            else:
                view = page.locator("iframe:visible").first
                view.wait_for(timeout=30_000)
                view.content_frame.locator("canvas").first.wait_for(timeout=30_000)
            view.scroll_into_view_if_needed()
            shoot(page, shots, f"05-ask-{system}")
        assert offsite(app.requests, base) == [], sorted(set(offsite(app.requests, base)))


@pytest.mark.parametrize("warm", [True, False], ids=["launcher", "streamlit-run"])
def test_a_page_url_opened_first_on_a_fresh_server_gets_the_full_app(tmp_path, warm):
    """/replay as the very first request still runs app.py: navigation sections, logo, wide layout."""
    with app_server(tmp_path / "store", warm=warm) as base, launch() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{base}/replay", wait_until="domcontentloaded")
        wait_text(page, "Replay", 60)
        page.get_by_text("Workbench", exact=True).first.wait_for(timeout=60_000)  # a st.navigation section
        assert page.get_by_text("annotation results", exact=True).count() == 0  # no file-name page list
