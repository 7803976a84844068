"""Exports hold what the page shows, in headless Debian chromium: the comparison export (CSV) carries each card's
verdict, F1, judge and evidence hit / miss; the label export has one current label per item and annotator with
question, system, category and retriever, and the label log keeps every label given.

Skips when /usr/bin/chromium is absent. Screenshots go to the test's tmp dir (and $MEMCORE_SCREENSHOTS when set).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from memcore.annotate import Annotations
from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.app.test_browser_annotate import button_named
from tests.browser_util import (
    app_server,
    keep_screenshots,
    launch,
    pick,
    shoot,
    skip_without_chromium,
    wait_text,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()

SYSTEMS = ("naive_rag", "com")


def prepare(store: Path) -> str:
    """The demo with both systems' memory built, and an annotation task on naive_rag; returns the task id."""
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    conv = wb.load_demo()
    for s in SYSTEMS:
        wb.ingest(s, conv)
    task = Annotations(wb.store).create_task("export", [conv], ["naive_rag"],
                                             lambda s, c, q: [f"evidence for {q.text}"], 1, retriever="dense")
    return task.task_id


def download(page, button: str, folder: Path) -> list[dict]:
    """Click a download button and read the CSV it gives."""
    with page.expect_download(timeout=60_000) as dl:
        page.get_by_role("button", name=re.compile(re.escape(button))).first.click()
    path = folder / dl.value.suggested_filename
    dl.value.save_as(path)
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_exports_hold_what_the_pages_show(tmp_path):
    store, shots = tmp_path / "store", tmp_path / "screenshots"
    task_id = prepare(store)
    try:
        with app_server(store) as base, launch() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 1800}, accept_downloads=True)
            main = page.get_by_test_id("stMain")

            # Compare: what each card shows
            page.goto(f"{base}/compare?q=demo:q0&systems={','.join(SYSTEMS)}&run=1", wait_until="domcontentloaded")
            wait_text(page, "Right: tokens spent", 300)
            shown = {}
            for s in SYSTEMS:
                card = main.locator(f".st-key-cmp_card_{s}")
                card.wait_for(timeout=30_000)
                text = card.inner_text()
                verdict = re.search(r"\b(correct|incorrect|not judged)\b", text).group(1)
                f1 = re.search(r"F1 (\d\.\d\d)", text).group(1)
                hits = re.findall(r"hit (D\d+:\d+)", text)
                misses = re.findall(r"miss (D\d+:\d+)", text)
                shown[s] = (verdict, f1, hits, misses)
            main.locator(f".st-key-cmp_card_{SYSTEMS[0]}").scroll_into_view_if_needed()
            shoot(page, shots, "exports-01-compare")

            # Export (same session, through the sidebar): the comparison's CSV holds the same
            page.get_by_test_id("stSidebarNav").get_by_role("link", name="Export", exact=True).click()
            wait_text(page, "What to export", 60)
            pick(page, main.get_by_test_id("stSelectbox").first, re.compile(r"^Comparison · 2 systems"))
            page.wait_for_timeout(1000)
            shoot(page, shots, "exports-02-export")
            rows = {r["system"]: r for r in download(page, "CSV", tmp_path)}
            assert set(rows) == set(SYSTEMS)
            for s, (verdict, f1, hits, misses) in shown.items():
                r = rows[s]
                assert r["verdict"] == verdict and f"{float(r['F1']):.2f}" == f1, (s, r)
                assert r["judge"] == "lexical judge (offline)"
                assert r["evidence hit"] == ", ".join(hits)
                assert [m.split(" (")[0] for m in r["evidence missed"].split("; ") if m] == misses

            # Annotate: label an item, go back and change the label
            page.goto(f"{base}/annotate", wait_until="domcontentloaded")
            box = page.get_by_label("Your name")
            box.wait_for(timeout=90_000)
            box.fill("alice")
            box.press("Enter")
            wait_text(page, "labelled · item 1", 60)
            question = re.search(r"Question:\s*(.+)", main.inner_text()).group(1).strip()
            button_named(main, "Helpful").click()
            wait_text(page, "labelled · item 2", 60)
            button_named(main, "Previous").click()
            wait_text(page, "Your label: Helpful", 60)
            button_named(main, "Not helpful").click()
            wait_text(page, "labelled · item 2", 60)  # the label is stored and the queue moved on

            # Annotation results: one current label per item and annotator; the log keeps both
            page.get_by_test_id("stSidebarNav").get_by_role("link", name="Annotation results", exact=True).click()
            wait_text(page, "Current labels", 90)
            main.get_by_text("Current labels:").first.scroll_into_view_if_needed()
            shoot(page, shots, "exports-03-annotation-results")
            current = download(page, "Current labels (CSV)", tmp_path)
            mine = [r for r in current if r["annotator"] == "alice" and r["question"] == question]
            assert len(mine) == 1, current
            assert mine[0]["label"] == "not_helpful" and mine[0]["changes"] == "1"  # labelled twice: changed once
            assert (mine[0]["system"], mine[0]["retriever"], mine[0]["task_id"]) == ("naive_rag", "dense", task_id)
            assert mine[0]["category"]
            log = download(page, "Label log (CSV)", tmp_path)
            assert [r["label"] for r in log if r["item_id"] == mine[0]["item_id"]] == ["helpful", "not_helpful"]
    finally:
        keep_screenshots(shots)
