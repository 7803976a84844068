"""Issue 37's two majors of the walk in headless Debian chromium at 1280 px: a CLI sweep's runs in Compare runs
(each run named by the variant it ran, the heading naming both sides, McNemar on screen), and the fallback on
Ask's summary table (MemCoT's whole-conversation fallback on the demo's flagship question, not credited).

Skips when /usr/bin/chromium is absent. Screenshots go to the test's tmp dir (and to $MEMCORE_SCREENSHOTS).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser_util import (
    app_server,
    demo_app,
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

ROOT = Path(__file__).resolve().parents[2]


def _on_screen(page, text: str) -> bool:
    box = page.get_by_text(text).first.bounding_box()
    vw = page.viewport_size
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= vw["width"] and box["y"] >= 0 \
        and box["y"] + box["height"] <= vw["height"]


def test_a_cli_sweeps_runs_in_compare_runs(tmp_path):
    store = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([sys.executable, "-m", "memcore.cli", "sweep", "com", "-d", "demo", "--grid", "beta=0.3,0.5",
                    "--limit", "3", "--store", str(store), "-o", str(tmp_path / "sweep.json")],
                   check=True, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    shots = tmp_path / "screenshots"
    requests: list[str] = []
    try:
        with app_server(store) as base, launch() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(f"{base}/compare-runs", wait_until="domcontentloaded")
            main = page.locator("[data-testid='stMain']")
            # the pickers name each run by the variant it ran (the sweep's first point is com[beta=0.3])
            wait_text(page, "Run A (baseline)", 90)
            page.get_by_role("combobox", name="Run B (compared)").wait_for(timeout=30_000)
            a = page.get_by_role("combobox", name="Run A (baseline)").input_value()
            b = page.get_by_role("combobox", name="Run B (compared)").input_value()
            assert a.startswith("com[beta=0.3] · demo · retriever dense") and "UTC" in a, a
            assert b.startswith("com · demo · retriever dense") and "UTC" in b, b
            main.get_by_text("com[beta=0.3] (A) against com (B)").first.wait_for(timeout=30_000)  # the pair picked
            shoot(page, shots, "walk37-compare-runs-pickers")
            page.get_by_role("button", name="Compare").click(timeout=60_000)
            wait_text(page, "Deltas are B - A", 90)
            heading = main.locator("h3", has_text="com[beta=0.3] (A) against com (B)")
            heading.first.wait_for(timeout=30_000)
            heading.first.scroll_into_view_if_needed()
            page.wait_for_timeout(1500)
            assert _on_screen(page, "McNemar (overall, n=3)")  # at 1280 px, not in an off-screen column
            shoot(page, shots, "walk37-compare-runs-sweep")
            assert not offsite(requests, base)
    finally:
        keep_screenshots(shots)


def test_the_fallback_on_asks_summary_table(tmp_path):
    with demo_app(tmp_path, width=1280, height=1400) as app:
        page, base, shots = app.page, app.base, app.shots
        page.goto(f"{base}/replay?systems=memcot", wait_until="domcontentloaded")
        page.get_by_role("button", name="Build memory").click(timeout=60_000)
        wait_text(page, "Turn 1 of", 900)
        page.goto(f"{base}/ask?systems=memcot&q=demo:q0&run=1", wait_until="domcontentloaded")
        wait_text(page, "Tokens per question by stage", 300)
        main = page.locator("[data-testid='stMain']")
        # the data grid draws on a canvas; its cells sit in an accessible (hidden) table
        table = main.locator("[data-testid='stDataFrame']", has_text="recall").first  # the summary table
        table.get_by_text("whole conversation", exact=True).first.wait_for(state="attached", timeout=30_000)
        assert table.get_by_text("1/1 (fallback context)", exact=True).count() >= 1
        assert table.get_by_text("fallback", exact=True).count() >= 1  # the column
        main.get_by_text("Answers by:").first.scroll_into_view_if_needed()
        page.wait_for_timeout(1500)
        shoot(page, shots, "walk37-ask-summary-fallback")
        assert offsite(app.requests, base) == []
