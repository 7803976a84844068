"""The embedding map in headless Debian chromium (issue 35 item 4): on Ask, a question's retrieved items ringed and
numbered by rank with the near-misses and the question drawn; on Explore, a clicked point opens that item.

Skips when /usr/bin/chromium is absent. Screenshots (1280 px wide) go to the test's tmp dir (and $MEMCORE_SCREENSHOTS).
"""

from __future__ import annotations

import re

import pytest

from memcore.viz.embedding_map import NEAR_MISS, QUESTION, RETRIEVED
from tests.browser_util import demo_app, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
pytest.importorskip("playwright.sync_api")
skip_without_chromium()

SYSTEM = "naive_rag_session"  # builds in seconds; its items (sessions) are what it retrieves
CHART = "[data-testid='stPlotlyChart']:visible"


def test_embedding_map_marks_retrieved_items_and_opens_a_clicked_item(tmp_path):
    with demo_app(tmp_path, width=1280, height=1500) as app:
        page, base, shots = app.page, app.base, app.shots
        page.goto(f"{base}/replay?systems={SYSTEM}", wait_until="domcontentloaded")
        page.get_by_role("button", name="Build memory").click(timeout=60_000)
        wait_text(page, "Turn 1 of", 600)

        # Ask: the answer's map, with the question, its retrieved items numbered and the near-misses
        page.goto(f"{base}/ask?q=demo:q0&systems={SYSTEM}&run=1", wait_until="domcontentloaded")
        wait_text(page, "Tokens per question by stage", 300)
        page.locator("[role=tab]:visible", has_text="Embedding map").first.click()
        page.get_by_text("Show the question on this memory's embedding map").first.click()
        wait_text(page, "Rings: the", 120)
        chart = page.locator(CHART).last
        chart.scroll_into_view_if_needed()
        for name in (RETRIEVED, NEAR_MISS, QUESTION):
            assert chart.locator("g.legend text.legendtext", has_text=name).count() == 1, name
        ranks = {(t.text_content() or "").strip() for t in chart.locator("g.textpoint text").all()}
        n = int(re.search(r"Rings: the (\d+) retrieved", page.locator("[data-testid='stMain']").inner_text()).group(1))
        assert n >= 1 and {str(r) for r in range(1, n + 1)} <= ranks  # every retrieved item's rank is drawn
        page.wait_for_timeout(500)
        shoot(page, shots, "embedding-map-ask-demo")

        # Explore: the map of the memory; a click on a point opens that item (its deep link in the URL)
        page.goto(f"{base}/explore?system={SYSTEM}", wait_until="domcontentloaded")
        page.get_by_text("Embedding map of this memory").first.click()
        wait_text(page, "click it to open it in Explore", 120)
        chart = page.locator(CHART).last
        chart.scroll_into_view_if_needed()
        shoot(page, shots, "embedding-map-explore-demo")
        point = chart.locator("g.trace.scatter path.point").first
        box = point.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_function("() => new URL(location.href).searchParams.get('item')", timeout=60_000)
        item = page.evaluate("() => new URL(location.href).searchParams.get('item')")
        assert item.startswith("session-")
        wait_text(page, "Down to raw turns", 60)
        shoot(page, shots, "embedding-map-explore-clicked")
