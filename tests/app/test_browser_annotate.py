"""Two annotators label at the same time in two browser contexts; results show both and a kappa.

Skips when /usr/bin/chromium is absent (scripts/install-browser.sh installs it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memcore.annotate import Annotations
from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.browser_util import CHROMIUM, app_server, launch, shoot, wait_text
from tests.conftest import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} not installed (run scripts/install-browser.sh)", allow_module_level=True)

LABELS = {"alice": ["Helpful", "Helpful", "Not helpful"], "bob": ["Helpful", "Not helpful", "Not helpful"]}


def button_named(page, label: str):
    """The button whose own label is `label` (icon ligature before, shortcut hint after)."""
    return page.locator("button").filter(has_text=re.compile(rf"(^|[a-z_\s]){label}\s*[A-Z]?\s*$")).first


def make_task(store: Path) -> str:
    conv = make_conversation()
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    wb.store.save_conversation(conv)
    task = Annotations(wb.store).create_task("browser", [conv], ["naive_rag"],
                                             lambda s, c, q: [f"[8 May, 2023] evidence for {q.text}"], 25)
    return task.task_id


def test_two_annotators_concurrently_then_results(tmp_path):
    store = tmp_path / "store"
    task_id = make_task(store)
    shots = tmp_path / "screenshots"
    with app_server(store) as base, launch() as browser:
        pages = {}
        for who in LABELS:
            page = browser.new_context(viewport={"width": 1300, "height": 1400}).new_page()
            page.goto(f"{base}/annotate", wait_until="domcontentloaded")
            box = page.get_by_label("Your name")
            box.wait_for(timeout=90_000)
            box.fill(who)
            box.press("Enter")
            wait_text(page, "Reference answer", 60)
            pages[who] = page
        for i in range(3):  # interleave the two annotators' clicks
            for who, page in pages.items():
                button_named(page, LABELS[who][i]).click(timeout=60_000)
                wait_text(page, f"{i + 1} of 3 labelled", 60)
        for who, page in pages.items():
            shoot(page, shots, f"annotate-{who}")
        labs = Annotations(Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
                                     embedder=HashingEmbedder()).store).labels(task_id)
        assert sorted(who for _, who in labs) == ["alice"] * 3 + ["bob"] * 3
        page = pages["alice"]
        page.goto(f"{base}/annotation-results", wait_until="domcontentloaded")
        wait_text(page, "Fleiss' kappa (all annotators)", 90)
        wait_text(page, "alice, bob", 30)
        page.get_by_text("Pairwise Cohen's kappa").first.wait_for(timeout=30_000)
        shoot(page, shots, "results")
