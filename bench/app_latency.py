"""App latency in a real browser: page load to first chart, and Replay step latency.

Goals: first chart < 3 s after navigation, replay step < 300 ms. Needs /usr/bin/chromium
(scripts/install-browser.sh). Memory is built in-process first, so the numbers measure the app,
not ingest.

    .venv/bin/python bench/app_latency.py [--systems com xmemory memweaver] [--steps 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser_util import app_server, launch  # noqa: E402

CHART = "[data-testid='stPlotlyChart'] .main-svg"


def prebuild(store: Path, systems: list[str]) -> int:
    """Load the demo and build each system's memory in the store; returns the number of turns."""
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=str(store), embedder=os.environ["MEMCORE_EMBEDDER"], llm_provider="offline"))
    conv = wb.load_demo()
    for s in systems:
        wb.ingest(s, conv)
    return len(conv.turns)


def first_chart(page, url: str) -> float:  # noqa: ANN001 - playwright Page
    """Seconds from navigation to the first plotly chart drawn."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.locator(CHART).first.wait_for(state="visible", timeout=120_000)
    return time.perf_counter() - t0


def step_latencies(page, n_turns: int, steps: int) -> list[float]:  # noqa: ANN001
    """Milliseconds from a keypress on the step slider to the new step's turn on screen."""
    slider = page.get_by_role("slider").first
    slider.focus()
    page.keyboard.press("Home")
    page.get_by_text("before the first turn").first.wait_for(timeout=30_000)
    out = []
    for k in range(1, steps + 1):
        slider.focus()
        t0 = time.perf_counter()
        page.keyboard.press("ArrowRight")
        page.get_by_text(f"Step {k}/{n_turns + 1}").first.wait_for(timeout=30_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    """Print page-load and step latencies against their goals."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", nargs="+", default=["com", "recmem", "memcot", "xmemory", "memweaver"])
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    os.environ.setdefault("MEMCORE_EMBEDDER", "hashing")
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        t0 = time.perf_counter()
        n = prebuild(store, args.systems)
        print(f"prebuilt {', '.join(args.systems)} on the demo ({n} turns) in {time.perf_counter() - t0:.1f} s")
        with app_server(store) as base, launch() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            cold = first_chart(page, f"{base}/replay")
            warm = first_chart(page, f"{base}/replay")
            lat = step_latencies(page, n, args.steps)
    p95 = sorted(lat)[max(0, int(round(0.95 * len(lat))) - 1)]
    print(f"replay page load to first chart: cold {cold:.2f} s, warm {warm:.2f} s (goal < 3 s) "
          f"{'OK' if warm < 3 else 'SLOW'}")
    print(f"replay step latency over {len(lat)} steps: median {statistics.median(lat):.0f} ms, p95 {p95:.0f} ms, "
          f"max {max(lat):.0f} ms (goal < 300 ms) {'OK' if statistics.median(lat) < 300 else 'SLOW'}")


if __name__ == "__main__":
    main()
