"""An in-app benchmark run leaves no "missing ScriptRunContext!" line in the server's log (issue 37 minor 14): the
run's threads (the job's, memcore's answer and system pools, the run record's heartbeat) never call Streamlit.
Headless Debian chromium; skips without it."""

from __future__ import annotations

import time

import pytest

from memcore.embed import HashingEmbedder
from memcore.eval.run_record import list_runs
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.workbench import Workbench
from tests.browser_util import app_server, launch, skip_without_chromium, wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
skip_without_chromium()


def test_an_in_app_benchmark_run_logs_no_missing_script_run_context(tmp_path) -> None:
    store = tmp_path / "store"
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    wb.ingest("naive_rag", wb.load_demo())  # the run's default system: its memory built, so the run answers
    with app_server(store) as base, launch() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(f"{base}/benchmark?conv=demo", wait_until="domcontentloaded")
        wait_text(page, "Start a run", 120)
        start = page.get_by_role("button", name="Start run")
        try:
            start.wait_for(timeout=20_000)  # the expander opens by itself when no run was loaded
        except Exception:
            page.get_by_text("Start a run").first.click()
            start.wait_for(timeout=60_000)
        page.wait_for_timeout(1000)
        start.click()
        deadline, runs = time.monotonic() + 600, []
        while time.monotonic() < deadline:  # the run record says when the run is done
            runs = list_runs(LanceStore(str(store), dim=HashingEmbedder().dim, read_only=True))
            if runs and runs[0]["state"] == "done":
                break
            page.wait_for_timeout(2000)
        page.wait_for_timeout(3000)  # the page polls the finished job once more
        assert runs and runs[0]["state"] == "done" and runs[0]["done"] > 0, runs
        log = next(tmp_path.glob("streamlit-*.log"))
    lines = log.read_text(encoding="utf-8").splitlines()
    assert not [ln for ln in lines if "ScriptRunContext" in ln], "\n".join(lines[-40:])
