"""What one chart costs a page's first visit in a fresh browser, by chart library: the floor under every
first-visit budget (issue 35/38: each page <= 3 s) that no server-side work can lower.

A bare Streamlit app (no memcore) with three pages: text only, one plotly bar chart of 1,600 points, the same
chart as Vega-Lite (Streamlit's st.vega_lite_chart, no new dependency). Each is opened in a fresh browser context
(no HTTP or code cache) until the script run ended and the chart is drawn; printed: seconds, and the browser's
main-thread script and task time (CDP Performance metrics). Needs /usr/bin/chromium (scripts/install-browser.sh).

    .venv/bin/python bench/chart_floor.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser_util import free_port, launch  # noqa: E402

PAGES = {
    "text": "import streamlit as st\nst.title('text')\nst.write('text ' * 50)\n",
    "plotly": "import streamlit as st, plotly.graph_objects as go\nst.title('plotly')\n"
              "st.plotly_chart(go.Figure(go.Bar(x=list(range(1600)), y=[i % 7 for i in range(1600)])))\n",
    "vega": "import streamlit as st, pandas as pd\nst.title('vega')\n"
            "df = pd.DataFrame({'x': range(1600), 'y': [i % 7 for i in range(1600)]})\n"
            "st.vega_lite_chart(df, {'mark': 'bar', 'encoding': {'x': {'field': 'x', 'type': 'quantitative'}, "
            "'y': {'field': 'y', 'type': 'quantitative'}}})\n",
}
DRAWN = {"text": "h1", "plotly": ".js-plotly-plot .main-svg", "vega": ".vega-embed"}
READY = """() => { const a = document.querySelector('[data-testid="stApp"]');
  return a && a.getAttribute('data-test-script-state') === 'notRunning'
    && document.querySelectorAll('[data-testid="stElementContainer"]').length > 1 }"""


def write_app(folder: Path) -> Path:
    """The bare app: app.py navigating to one page per entry of PAGES."""
    (folder / "pages").mkdir(parents=True, exist_ok=True)
    for name, code in PAGES.items():
        (folder / "pages" / f"{name}.py").write_text(code)
    app = folder / "app.py"
    app.write_text("import streamlit as st\nst.navigation([" + ", ".join(f"st.Page('pages/{n}.py')" for n in PAGES)
                   + "]).run()\n")
    return app


def visit(browser, url: str, drawn: str) -> tuple[float, float, float]:
    """(seconds to the page drawn, main-thread script s, task s) in a fresh browser context."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Performance.enable")
        t0 = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.wait_for_function(READY, timeout=120_000, polling=50)
        page.locator(drawn).first.wait_for(timeout=120_000)
        seconds = time.perf_counter() - t0
        m = {x["name"]: x["value"] for x in cdp.send("Performance.getMetrics")["metrics"]}
        return seconds, m.get("ScriptDuration", float("nan")), m.get("TaskDuration", float("nan"))
    finally:
        ctx.close()


def main() -> None:
    """Open each bare page `--rounds` times in a fresh browser and print the medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        app, port = write_app(Path(tmp)), free_port()
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true",
                                   "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                                  cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            with launch() as browser:
                deadline = time.monotonic() + 60
                while True:  # the server is up when a page answers
                    try:
                        visit(browser, f"{base}/text", DRAWN["text"])
                        break
                    except Exception:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(1)
                got: dict[str, list[tuple[float, float, float]]] = {n: [] for n in PAGES}
                for _ in range(args.rounds):
                    for name in PAGES:
                        got[name].append(visit(browser, f"{base}/{name}", DRAWN[name]))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"load average now: {os.getloadavg()[0]:.1f}")
    print("fresh browser, page drawn (median of rounds): seconds / main-thread script s / task s")
    base_s = statistics.median(s for s, _, _ in got["text"])
    for name, runs in got.items():
        s, js, task = (statistics.median(r[i] for r in runs) for i in range(3))
        extra = "" if name == "text" else f"  (+{s - base_s:.2f} s over text only)"
        print(f"  {name:8s} {s:5.2f} s  script {js:4.2f} s  task {task:4.2f} s{extra}")


if __name__ == "__main__":
    main()
