"""Compare runs in headless Debian chromium: two stored runs, Compare, the deltas with McNemar, one flip's sides.

Skips when /usr/bin/chromium is absent. Screenshots go to the test's tmp dir (and to $MEMCORE_SCREENSHOTS).
"""

from __future__ import annotations

import pytest

from tests.app.test_app_compare_runs import store_two_runs
from tests.browser_util import (
    app_server,
    keep_screenshots,
    launch,
    offsite,
    shoot,
    skip_without_chromium,
    wait_text,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
pytest.importorskip("playwright.sync_api")
skip_without_chromium()


def test_compare_runs_in_the_browser(tmp_path):
    store_two_runs(tmp_path / "store")
    shots = tmp_path / "screenshots"
    requests: list[str] = []
    try:
        with app_server(tmp_path / "store") as base, launch() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 2000})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(f"{base}/compare-runs", wait_until="domcontentloaded")
            page.get_by_role("button", name="Compare").click(timeout=60_000)
            wait_text(page, "Deltas are B - A", 60)
            # the data grid draws on a canvas; its cells sit in an accessible (hidden) table
            page.get_by_text("8 R->W, 2 W->R, p=0.109").first.wait_for(state="attached", timeout=30_000)
            page.locator("[data-testid='stDataFrame']").nth(1).wait_for(timeout=60_000)  # deltas and flipped questions
            page.wait_for_timeout(1500)  # drawn, for the screenshot
            shoot(page, shots, "compare_runs")
            assert not offsite(requests, base)
    finally:
        keep_screenshots(shots)
