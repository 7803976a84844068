"""A way back from a bad provider choice, in headless Debian chromium: "OpenAI-compatible endpoint" without a key
is refused next to the provider form (key field included), the app stays on the offline engine and every page
still works. Screenshots go to the test's tmp dir (and $MEMCORE_SCREENSHOTS when set)."""

from __future__ import annotations

import pytest

from tests.browser_util import demo_app, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()


def test_an_endpoint_without_a_key_leaves_the_app_on_the_offline_engine(tmp_path):
    with demo_app(tmp_path, width=1280, height=1500) as app:
        page, shots = app.page, app.shots
        form = page.get_by_test_id("stForm")
        form.get_by_text("OpenAI-compatible endpoint", exact=True).click()
        form.get_by_role("button", name="Use this provider").click()
        wait_text(page, "could not start", 60)
        error = form.get_by_test_id("stAlertContentError")
        assert "API key field" in error.inner_text()  # inside the form, beside the key field
        assert form.get_by_role("textbox", name="API key").is_visible()
        for flag in ("--provider", "--base-url", "OPENAI_API_KEY"):
            assert flag not in error.inner_text()
        error.scroll_into_view_if_needed()
        shoot(page, shots, "provider-01-refused")

        sidebar = page.get_by_test_id("stSidebar")
        assert "offline engine" in sidebar.inner_text()
        for title in ("Replay", "Ask", "Home"):
            page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
            page.get_by_role("heading", name=title if title != "Home" else "memcore workbench").first.wait_for(
                timeout=60_000)
            page.wait_for_timeout(1500)
            assert page.get_by_text("Cannot start memcore").count() == 0
            assert "offline engine" in sidebar.inner_text()
        shoot(page, shots, "provider-02-home-again")
