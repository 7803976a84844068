"""Time from a fresh install's first page to the demo with every system's memory ready (issue 23 item 4).

Both ways start from an empty store with the app's defaults (MiniLM embedder, offline engine) and every
registered system (plugins included), in headless chromium:

- built in the app (what a new user had to do): the app starts without --prepare-demo; first page, "Load the
  built-in demo", Replay with every system selected, "Build memory"; timed until every memory is complete (read
  from the store), with the progress texts the page showed on the way;
- prepared at start (./run.sh: `python -m ui.launch --prepare-demo`): the demo's memory is built before the app
  serves (timed apart: it happens once, at the first start after install); then the first page, timed until it is
  drawn with the demo current and every memory complete.

    .venv/bin/python bench/demo_ready.py [--only app|prepared]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.app_latency import READY  # noqa: E402
from tests.browser_util import app_server, launch  # noqa: E402

PROGRESS = "() => [...document.querySelectorAll(\"[data-testid='stProgress']\")].map(e => e.innerText).join(' | ')"


def built(store: Path) -> tuple[int, int]:
    """(memories complete, systems) of the demo in the store, read as the app reads them."""
    from memcore.datasets import load_demo
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=str(store), embedder="minilm", llm_provider="offline"))
    conv = load_demo()
    if "demo" not in set(wb.store.conversations()["conv_id"]):
        return 0, len(wb.systems())
    return sum(wb.is_ingested(s, conv) for s in wb.systems()), len(wb.systems())


def first_page(page, base: str) -> float:
    """Seconds from navigating to / until the page is drawn (no run in progress)."""
    t0 = time.perf_counter()
    page.goto(f"{base}/", wait_until="commit")
    page.wait_for_function(READY, timeout=300_000, polling=50)
    page.wait_for_timeout(300)
    page.wait_for_function(READY, timeout=300_000, polling=50)
    return time.perf_counter() - t0 - 0.3


def in_the_app(browser, tmp: Path) -> None:
    """First page -> Load demo -> Replay with every system -> Build memory -> all complete."""
    from memcore.workbench import Workbench

    store = tmp / "app-store"
    names = Workbench.systems()
    t_start = time.perf_counter()
    with app_server(store, timeout=600) as base:
        print(f"[built in the app] server answering after {time.perf_counter() - t_start:.1f} s "
              f"(load {os.getloadavg()[0]:.1f})")
        page = browser.new_context(viewport={"width": 1280, "height": 1200}).new_page()
        t0 = time.perf_counter()
        first = first_page(page, base)
        page.get_by_role("button", name="Load the built-in demo").click(timeout=120_000)
        page.get_by_text("Demo loaded").first.wait_for(timeout=120_000)
        page.goto(f"{base}/replay?conv=demo&systems={','.join(names)}", wait_until="commit")
        page.get_by_role("button", name="Build memory").click(timeout=300_000)
        seen: list[tuple[float, str]] = []
        while built(store)[0] < len(names):
            text = page.evaluate(PROGRESS)
            if text and (not seen or seen[-1][1] != text):
                seen.append((time.perf_counter() - t0, text))
            if time.perf_counter() - t0 > 3600:
                raise TimeoutError("the demo's memory was not built within an hour")
            time.sleep(2)
        total = time.perf_counter() - t0
    print(f"[built in the app] first page drawn {first:.1f} s; every memory ({len(names)} systems) complete "
          f"{total:.1f} s after the first page (load {os.getloadavg()[0]:.1f})")
    step = max(1, len(seen) // 12)
    for t, text in seen[::step]:
        print(f"    {t:6.1f} s  {text[:150]}")


def prepared(browser, tmp: Path) -> None:
    """./run.sh's start with --prepare-demo, then the first page."""
    store = tmp / "prepared-store"
    t_start = time.perf_counter()
    with app_server(store, timeout=3600, launch_args=("--prepare-demo",)) as base:
        start = time.perf_counter() - t_start
        done, n = built(store)
        print(f"[prepared at start] server answering after {start:.1f} s, the demo's memory built before it "
              f"({done}/{n} systems complete; load {os.getloadavg()[0]:.1f})")
        page = browser.new_context(viewport={"width": 1280, "height": 1200}).new_page()
        first = first_page(page, base)
        done, n = built(store)
        on_page = page.locator("[data-testid='stMain']").inner_text()
        assert "Turns" in on_page, "the first page does not show the demo"
    print(f"[prepared at start] first page drawn with the demo current in {first:.1f} s; memories complete: "
          f"{done}/{n} -> demo ready {first:.1f} s after the first page (load {os.getloadavg()[0]:.1f})")
    log = next(store.parent.glob("streamlit-*.log"), None)
    if log is not None:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("memcore:"):
                print(f"    {line}")


def main() -> None:
    """Print both timings with the machine's load."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["app", "prepared"])
    args = ap.parse_args()
    os.environ["MEMCORE_EMBEDDER"] = "minilm"
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    with tempfile.TemporaryDirectory() as d, launch() as browser:
        if args.only in (None, "prepared"):
            prepared(browser, Path(d))
        if args.only in (None, "app"):
            in_the_app(browser, Path(d))


if __name__ == "__main__":
    main()
