"""Memory diff in headless Debian chromium: Replay on the demo, pick a memory and two steps, see what changed;
follow the link to Compare runs, name a second configuration, build it and see the two memories' diff.

Skips when /usr/bin/chromium is absent. Screenshots (1280 px wide, tall) go to the test's tmp dir (and to
$MEMCORE_SCREENSHOTS).
"""

from __future__ import annotations

import pytest

from tests.browser_util import demo_app, offsite, pick, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
pytest.importorskip("playwright.sync_api")
skip_without_chromium()


def _number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")


def test_replay_diff_and_the_compare_runs_memory_diff(tmp_path):
    with demo_app(tmp_path, width=1280, height=2200) as app:
        page, base, shots = app.page, app.base, app.shots
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Replay", exact=True).click()
        page.get_by_role("button", name="Build memory").click(timeout=60_000)
        wait_text(page, "What changed between two steps", 900)
        wait_text(page, "Turn 1 of 90", 60)
        wait_text(page, "from step 0 to step 1:", 60)  # the diff follows the step on screen
        page.locator(".st-key-rp_next button").first.click()  # a step reruns only the viewer fragment: the diff is in it
        wait_text(page, "Turn 2 of 90", 60)
        wait_text(page, "from step 1 to step 2:", 60)
        # a step keeps the layers chart drawn (the same Vega SVG node) and moves the dashed step line over it, at the
        # step's place on the plot (its x domain is 0..90)
        line = "document.querySelector('[data-testid=memcoreStepLine]')"
        page.wait_for_function(f"() => {line}?.dataset.step === '2'", timeout=30_000)
        chart = page.locator(".st-key-rp_layers svg.marks").first
        chart.evaluate("gd => { gd.__keptAcrossSteps = true; }")
        x2 = page.get_by_test_id("memcoreStepLine").bounding_box()["x"]
        plot = page.locator(".st-key-rp_layers .role-frame.root > g > path.background").first.bounding_box()
        assert abs(x2 + 1 - (plot["x"] + plot["width"] * 2 / 90)) < 3, (x2, plot)
        page.locator(".st-key-rp_next button").first.click()
        wait_text(page, "Turn 3 of 90", 60)
        page.wait_for_function(f"() => {line}?.dataset.step === '3'", timeout=30_000)
        assert chart.evaluate("gd => gd.__keptAcrossSteps === true")
        assert page.get_by_test_id("memcoreStepLine").bounding_box()["x"] > x2
        main = page.get_by_test_id("stMain")
        pick(page, main.get_by_test_id("stSelectbox").filter(has_text="Memory of"), "xmemory")
        _number(page, "From step", 30)
        _number(page, "To step", 40)
        wait_text(page, "xmemory on demo from step 30 to step 40:", 60)
        page.get_by_text("step 33 · turn 33 (D2:9)").first.wait_for(timeout=30_000)  # the first item's cause
        page.get_by_text("step 33 · turn 33 (D2:9)").first.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        shoot(page, shots, "memory-diff-replay")

        page.get_by_role("link", name="Compare this memory with another configuration at step 40").click()
        wait_text(page, "Memory diff", 60)
        assert page.get_by_label("Memory A (baseline)").input_value() == "xmemory"
        assert page.get_by_label("At step").input_value() == "40"
        box = page.get_by_label("Memory B (compared)")
        box.fill("xmemory[max_theme=4]")
        box.press("Enter")
        page.get_by_role("button", name="Build xmemory[max_theme=4]").click(timeout=60_000)
        wait_text(page, "against xmemory on demo at step 40: 4 added, 1 changed, 0 removed.", 300)
        page.get_by_text("Memory diff").first.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        shoot(page, shots, "memory-diff-compare-runs")
        assert not offsite(app.requests, base)
