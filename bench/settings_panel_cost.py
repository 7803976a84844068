"""What the settings panel (ui/settings_panel.py) costs a page run: AppTest runs of a page with N systems
picked, timing the whole run and the time spent inside `settings_panel.settings_panel` (median of `--runs`
reruns after one warm run; the panel closed, as a page opens).

    .venv/bin/python bench/settings_panel_cost.py --store /path/to/store [--page ask] [--runs 8]
        [--systems naive_rag naive_rag_session com xmemory memweaver]

Prints per-run medians in ms and the panel's share. State the machine's load (uptime) with the numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGES = {"ask": ("pages/ask.py", "ask_systems"), "replay": ("pages/replay.py", "replay_systems")}


def main() -> None:
    """Time the page runs and the panel's part of them."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--store", required=True)
    ap.add_argument("--page", choices=sorted(PAGES), default="ask")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--systems", nargs="+",
                    default=["naive_rag", "naive_rag_session", "com", "xmemory", "memweaver"])
    a = ap.parse_args()
    os.environ.update(MEMCORE_STORE=a.store, MEMCORE_EMBEDDER=a.embedder, MEMCORE_LLM_PROVIDER="offline")
    from streamlit.testing.v1 import AppTest

    from ui import settings_panel

    spent: list[float] = []
    inner = settings_panel.settings_panel

    def timed(*args: object, **kw: object) -> None:
        t = time.perf_counter()
        try:
            inner(*args, **kw)
        finally:
            spent.append(time.perf_counter() - t)

    settings_panel.settings_panel = timed  # the pages call it through the module
    path, key = PAGES[a.page]
    at = AppTest.from_file(str(ROOT / path), default_timeout=600)
    at.session_state[key] = a.systems
    at.run()
    free = [t for t in at.text_input if t.key == "ask_q_free"]
    if free:  # Ask stops before the systems until a question is asked
        free[0].set_value("What did I plan for the trip?").run()
    assert not at.exception, at.exception
    assert spent, "the page stopped before the settings panel"
    runs, panel = [], []
    for _ in range(a.runs):
        spent.clear()
        t = time.perf_counter()
        at.run()
        runs.append(time.perf_counter() - t)
        panel.append(sum(spent))
    med_run, med_panel = statistics.median(runs) * 1000, statistics.median(panel) * 1000
    print(f"page {a.page}, {len(a.systems)} systems, {a.runs} runs: page run median {med_run:.0f} ms, "
          f"settings panel median {med_panel:.0f} ms ({med_panel / med_run:.0%}); "
          f"panel per run ms: {', '.join(f'{p * 1000:.0f}' for p in panel)}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
