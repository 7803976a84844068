"""Ask and Compare in headless Debian chromium (issue 15 items 2, 3, 4, 7, 8): Build cards instead of a hidden
Ask, verdicts with F1 by the named judge, the retriever control, the call inspector's waterfall and prompt,
links that reopen a view (Ask, Compare's "Full trace", a Replay step), and Enter that does not submit a form.

Skips when /usr/bin/chromium is absent. Screenshots go to the test's tmp dir (and to $MEMCORE_SCREENSHOTS).
"""

from __future__ import annotations

import re

import pytest

from memcore.datasets import load_demo
from tests.browser_util import demo_app, offsite, shoot, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
expect = pytest.importorskip("playwright.sync_api").expect
skip_without_chromium()

DEMO = load_demo()
STEPS = len(DEMO.turns) + 1  # Replay counts one step per turn plus the empty start

SYSTEMS = "naive_rag,com,memweaver"
VERDICT = re.compile(r"^(correct|incorrect)$")


def _main(page):
    return page.locator("[data-testid='stMain']")


def test_ask_compare_verdicts_retriever_calls_and_links(tmp_path):
    with demo_app(tmp_path, height=2400) as app:
        page, base, shots = app.page, app.base, app.shots

        # Enter in the provider form does not submit it: the LLM stays the offline engine
        page.get_by_text("OpenAI-compatible endpoint", exact=True).first.click()
        model = page.get_by_label("Model")
        model.fill("some-model")
        model.press("Enter")
        page.wait_for_timeout(1500)
        assert page.locator("[data-testid='stSidebar']").get_by_text("offline engine").count() >= 1

        # Ask with nothing built: a Build card per chosen system, no Ask button, nothing built
        page.goto(f"{base}/ask?systems={SYSTEMS}&q=demo:q0", wait_until="domcontentloaded")
        wait_text(page, "memory not built", 60)
        expect(_main(page).get_by_role("button", name=re.compile(r"Build$"))).to_have_count(3, timeout=30_000)
        assert _main(page).get_by_role("button", name=re.compile(r"Ask$")).count() == 0
        shoot(page, shots, "10-ask-not-built")

        # build on Replay (an explicit click), then a link with its step reopens that step
        page.goto(f"{base}/replay?systems={SYSTEMS}", wait_until="domcontentloaded")
        page.get_by_role("button", name="Build memory").click(timeout=60_000)
        wait_text(page, f"Turn 1 of {STEPS - 1}", 900)
        page.goto(f"{base}/replay?systems={SYSTEMS}&step=20", wait_until="domcontentloaded")
        wait_text(page, f"Turn 20 of {STEPS - 1}", 60)
        assert "step=20" in page.url

        # Ask: the built systems are preselected; a link with run=1 shows the answers without a click
        page.goto(f"{base}/ask?q=demo:q0&run=1", wait_until="domcontentloaded")
        wait_text(page, "Tokens per question by stage", 300)
        main = _main(page)
        main.get_by_text("verdicts by the").first.wait_for(timeout=30_000)
        assert main.get_by_text("lexical judge (offline)").count() >= 1
        assert main.get_by_text(re.compile(r"^F1 \d\.\d\d")).count() >= 1 or main.get_by_text(
            re.compile(r"F1 \d\.\d\d")).count() >= 1
        assert main.get_by_text(re.compile(r"(hit|miss) D1:7")).count() >= 1
        assert "systems=" in page.url and "q=demo%3Aq0" in page.url.replace(":", "%3A")
        main.get_by_text(re.compile(r"F1 \d\.\d\d")).first.scroll_into_view_if_needed()
        shoot(page, shots, "11-ask-verdicts")

        # the call inspector: the answer's calls as a waterfall, the prompt holds the question
        page.locator("[role=tab]:visible", has_text="LLM calls").first.click()
        wait_text(page, "LLM calls: latency waterfall", 30)
        code = main.locator("[data-testid='stCode']:visible").first
        code.wait_for(timeout=30_000)
        assert "What is the name of Maya's dog?" in code.inner_text()
        main.get_by_text("LLM calls: latency waterfall").first.scroll_into_view_if_needed()
        shoot(page, shots, "12-ask-call-inspector")

        # the retriever control: lexical, then Ask again; the header names it and the URL keeps it
        main.get_by_role("radio", name="lexical", exact=True).click()
        main.get_by_role("button", name=re.compile(r"Ask$")).click()
        main.get_by_text("retriever lexical").first.wait_for(timeout=120_000)
        assert "retriever=lexical" in page.url

        # Compare: cards with evidence first, verdict, and a Full trace link to Ask
        page.goto(f"{base}/compare?q=demo:q0&run=1", wait_until="domcontentloaded")
        wait_text(page, "Right: tokens spent", 300)
        main = _main(page)
        cards = main.locator("[class*='st-key-cmp_card_']")
        cards.first.wait_for(timeout=30_000)
        expect(cards).to_have_count(3, timeout=30_000)
        for i in range(3):
            card = cards.nth(i)
            assert card.get_by_text(re.compile(r"(hit|miss) D1:7")).count() == 1
            assert card.get_by_text(re.compile(r"^(correct|incorrect)$")).count() + card.get_by_text(
                re.compile(r"(correct|incorrect)")).count() >= 1
        cards.first.scroll_into_view_if_needed()
        shoot(page, shots, "13-compare-cards")
        link = cards.first.get_by_role("link", name=re.compile("Full trace"))
        href = link.get_attribute("href") or ""
        assert "ask?" in href and "run=1" in href
        with page.context.expect_page() as popup:
            link.click()
        trace = popup.value
        trace.get_by_text("Tokens per question by stage").first.wait_for(timeout=300_000)
        assert "/ask" in trace.url
        assert offsite(app.requests, base) == [], sorted(set(offsite(app.requests, base)))
