"""App latency in a real browser: page load to first chart, and Replay step latency.

Goals: first chart < 3 s after navigation, replay step < 300 ms. Needs /usr/bin/chromium
(scripts/install-browser.sh). Memory is built in-process first, so the numbers measure the app,
not ingest.

    .venv/bin/python bench/app_latency.py [--systems com xmemory memweaver] [--steps 20]

On a store built beforehand (e.g. a BEAM 1M chat, issue 35's budgets: first visit per page <= 3 s, a Replay step
<= 0.5 s, Ask <= 5 s), with the embedder it was built with:

    .venv/bin/python bench/app_latency.py --store /path/to/store --embedder minilm [--question "..."]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser_util import app_server, free_port, launch  # noqa: E402

CHART = "[data-testid='stPlotlyChart'] .main-svg, [data-testid='stVegaLiteChart'] svg.marks"  # plotly or Vega-Lite


def prebuild(store: Path, systems: list[str]) -> int:
    """Load the demo and build each system's memory in the store; returns the number of turns."""
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=str(store), embedder=os.environ["MEMCORE_EMBEDDER"], llm_provider="offline"))
    conv = wb.load_demo()
    for s in systems:
        wb.ingest(s, conv)
    return len(conv.turns)


def first_chart(page, url: str) -> float:
    """Seconds from navigation to the first chart drawn (plotly, or Vega-Lite: Replay's first paint)."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.locator(CHART).first.wait_for(state="visible", timeout=120_000)
    return time.perf_counter() - t0


CLICK_UNTIL_TEXT = """async ([sel, text, quiet]) => {
  const btn = document.querySelector(sel);
  const t0 = performance.now();
  let shownAt = null, last = t0;
  return await new Promise((resolve) => {
    const finish = () => {
      if (performance.now() - last < quiet) { setTimeout(finish, quiet / 4); return; }
      obs.disconnect();
      resolve([shownAt - t0, last - t0]);
    };
    const obs = new MutationObserver(() => {
      last = performance.now();
      if (shownAt === null && document.body.textContent.includes(text)) {
        requestAnimationFrame(() => { shownAt = performance.now(); last = Math.max(last, shownAt); setTimeout(finish, quiet); });
      }
    });
    obs.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
    btn.click();
  });
}"""


def click_until_text(page, selector: str, text: str, quiet_ms: int = 400) -> tuple[float, float]:
    """Milliseconds, measured inside the page, from clicking `selector` to (a) `text` in the DOM and painted,
    (b) the last DOM change of the step (charts redrawn), i.e. until the page stayed still for `quiet_ms`.

    Timing in the page (performance.now + MutationObserver) leaves out Playwright's own polling and
    actionability checks, which add 100-200 ms to a click-then-wait measured from Python."""
    shown, settled = page.evaluate(CLICK_UNTIL_TEXT, [selector, text, quiet_ms])
    return float(shown), float(settled)


def step_latencies(page, n_turns: int, steps: int) -> list[tuple[float, float]]:
    """Per step, ms from a click on Replay's "next step" to the new turn on screen and to the step fully drawn."""
    page.locator(".st-key-rp_first button").first.click()
    page.get_by_text("Before turn 1 of").first.wait_for(timeout=30_000)
    out = []
    for k in range(1, steps + 1):
        out.append(click_until_text(page, ".st-key-rp_next button", f"Turn {k} of {n_turns}"))
    return out


BASELINE_APP = """import streamlit as st
st.session_state.setdefault("n", 0)
def inc():
    st.session_state.n += 1
st.button("next", on_click=inc)
st.markdown(f"Value {st.session_state.n} done")
"""


def cold_visits(browser, store: Path) -> dict[str, float]:
    """First visit to /replay as soon as a fresh server answers: plain `streamlit run`, and ./run.sh's
    launcher (imports done before it serves)."""
    out = {}
    for label, warm in (("plain `streamlit run app.py`", False), ("./run.sh launcher (python -m ui.launch)", True)):
        with app_server(store, warm=warm) as base:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            out[label] = first_chart(page, f"{base}/replay")
            page.get_by_text("Workbench", exact=True).first.wait_for(timeout=5_000)  # app.py's navigation ran
            page.close()
    return out


def baseline_latencies(browser, steps: int) -> list[tuple[float, float]]:
    """The same click-to-text latency for a trivial one-button Streamlit app on this machine."""
    with tempfile.TemporaryDirectory() as d:
        app = Path(d) / "baseline.py"
        app.write_text(BASELINE_APP)
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
                                 "--server.address", "127.0.0.1", "--server.headless", "true",
                                 "--browser.gatherUsageStats", "false"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            page = browser.new_page()
            deadline = time.time() + 60
            while True:
                try:
                    page.goto(base, wait_until="domcontentloaded")
                    page.get_by_text("Value 0 done").wait_for(timeout=10_000)
                    break
                except Exception:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.5)
            out = []
            for k in range(1, steps + 1):
                out.append(click_until_text(page, "[data-testid='stButton'] button", f"Value {k} done"))
            return out
        finally:
            proc.terminate()
            proc.wait(10)


def server_step_ms(store: Path, steps: int) -> list[float]:
    """Server-side cost of a step: a whole Replay page run in AppTest (an upper bound: in the browser a
    step reruns only the viewer fragment)."""
    from streamlit.testing.v1 import AppTest

    os.environ["MEMCORE_STORE"] = str(store)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/replay.py").run()
    at.run()
    out = []
    for k in range(1, steps + 1):
        t0 = time.perf_counter()
        at.slider(key="replay_step").set_value(k).run()
        out.append((time.perf_counter() - t0) * 1000)
    return out


# The page is drawn when the script run has ended (stApp's data-test-script-state, what Streamlit's own e2e tests
# wait for), no skeleton is left and elements are shown. The status widget's running icon, read before, is not in
# the DOM of a headless page (Streamlit 1.67): a page counted as drawn at its first elements while its run went on
# (Replay's first visit on the 10M chat: "ready" at 2.9 s, its run ended at 21.5 s; the next page's visit then
# waited for it and was blamed for it).
READY = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  const app = document.querySelector("[data-testid='stApp']");
  if (!main || !app || app.getAttribute("data-test-script-state") !== "notRunning"
      || document.querySelector("[data-testid='stSkeleton']")) return false;
  return main.querySelectorAll("[data-testid='stElementContainer']").length > 2;
}"""
PAGES = ("", "home", "replay", "explore", "ask", "compare", "benchmark", "annotate", "annotation-results", "export")


def fresh_visits(browser, base: str, pages: tuple[str, ...] = PAGES) -> dict[str, float]:
    """Seconds from navigation to each page drawn (elements shown, no run in progress, no skeleton), each
    in a fresh browser context (empty cache, no session), against a warm server."""
    out = {}
    for path in pages:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(f"{base}/{path}", wait_until="commit")
        page.wait_for_function(READY, timeout=120_000, polling=50)
        page.wait_for_timeout(300)  # a rerun may start right after the first draw: wait for it too
        page.wait_for_function(READY, timeout=120_000, polling=50)
        out[f"/{path}"] = time.perf_counter() - t0 - 0.3
        if page.get_by_text("Page not found").count():
            out[f"/{path}"] = float("nan")
        ctx.close()
    return out


def script_runs(store: Path) -> list[tuple[str, float]]:
    """(page, seconds) of each script run the app server logged so far ($MEMCORE_PROFILE; tests/browser_util's
    app_server writes the log beside the store)."""
    out = []
    for log in store.parent.glob("streamlit-*.log"):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("memcore-run "):
                f = dict(kv.split("=", 1) for kv in line.split()[1:])
                out.append((f["page"], float(f["s"])))
    return out


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]


def _stats(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.0f} ms, p95 {_p95(xs):.0f} ms, max {max(xs):.0f} ms"


ASK_DONE = "[data-testid='stMain'] [data-testid='stTabs']"


class WsBytes:
    """Bytes the app server sent the page over its websocket (Streamlit's messages: a step's figures and tables)."""

    def __init__(self, page) -> None:
        self.total = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        self.total += len(payload)


def replay_end_steps(page, base: str, n_turns: int, steps: int,
                     growth_systems: Sequence[str] = ()) -> dict[str, list[tuple[float, float]]]:
    """Replay near the last step: per view (the default one, then Growth, then Growth of each of `growth_systems`,
    opened by its link), ms from a click on "previous step" to the new turn on screen and to the step fully drawn,
    starting at the last turn; and the bytes each step sent."""
    out = {}
    sent = WsBytes(page)
    page.goto(f"{base}/replay?step={n_turns}", wait_until="commit")
    page.get_by_text(f"Turn {n_turns} of {n_turns}").first.wait_for(timeout=180_000)
    page.wait_for_function(READY, timeout=180_000, polling=50)
    for view in ("default view", "Growth", *(f"Growth of {s}" for s in growth_systems)):
        start = n_turns - steps * len(out)  # each view goes on stepping back from where the last one stopped
        if view == "Growth":
            page.get_by_role("radio", name="Growth", exact=True).first.click()
            page.wait_for_timeout(500)
            page.wait_for_function(READY, timeout=180_000, polling=50)
        elif view != "default view":
            page.goto(f"{base}/replay?step={start}&view=Growth&gsystem={view.split()[-1]}", wait_until="commit")
            page.get_by_text(f"Turn {start} of {n_turns}").first.wait_for(timeout=180_000)
            page.wait_for_timeout(500)
            page.wait_for_function(READY, timeout=180_000, polling=50)
        out[view], sizes = [], []
        for k in range(1, steps + 1):
            before = sent.total
            out[view].append(click_until_text(page, ".st-key-rp_prev button", f"Turn {start - k} of {n_turns}"))
            sizes.append(sent.total - before)
        print(f"replay steps, {view}: {[(round(a), round(b)) for a, b in out[view]]} ms; websocket KB per step: "
              f"{[round(b / 1024) for b in sizes]}", flush=True)
    return out


def ask_seconds(page, base: str, question: str, systems: str = "") -> tuple[float, list[str]]:
    """Seconds from a click on Ask (the page's default systems, or `systems`, comma-separated) to every system's answer
    tab drawn, and the systems."""
    from urllib.parse import quote

    chosen = f"&systems={quote(systems)}" if systems else ""
    page.goto(f"{base}/ask?text={quote(question)}{chosen}", wait_until="commit")
    page.get_by_role("button", name="Ask").first.wait_for(timeout=180_000)
    page.wait_for_function(READY, timeout=180_000, polling=50)
    t0 = time.perf_counter()
    page.get_by_role("button", name="Ask").first.click()
    page.locator(ASK_DONE).first.wait_for(timeout=300_000)
    page.wait_for_function(READY, timeout=300_000, polling=50)
    secs = time.perf_counter() - t0
    outer = page.locator("[data-testid='stMain'] [data-testid='stTabs'] [role='tablist']").first  # not an answer's own tabs
    return secs, [t.inner_text() for t in outer.locator("[role='tab']").all()]


def on_store(store: Path, question: str, steps: int, visits_too: bool = True, ask_systems: str = "",
             ask_too: bool = True, growth_systems: Sequence[str] = ()) -> None:
    """The budgets on a store built beforehand (its single conversation): first visits, Replay at the end, Ask."""
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=str(store), embedder=os.environ["MEMCORE_EMBEDDER"], llm_provider="offline"))
    n = int(wb.store.conversations()["n_turns"].max())
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s); store {store}, {n} turns")
    with launch() as browser, app_server(store, timeout=600) as base:  # a busy machine starts it slowly
        visits = fresh_visits(browser, base) if visits_too else {}
        print("first visits:", {p: round(v, 2) for p, v in visits.items()}, flush=True)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        ends = replay_end_steps(page, base, n, steps, growth_systems)
        ask, systems = ask_seconds(page, base, question, ask_systems) if ask_too else (0.0, [])
    print(f"load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    print("first visit in a fresh browser, warm server (goal <= 3 s):")
    for path, secs in visits.items():
        print(f"  {path:22s} {secs:5.2f} s {'OK' if secs <= 3 else 'SLOW'}")
    for view, lat in ends.items():
        shown, settled = [x for x, _ in lat], [y for _, y in lat]
        # the verdict on the p95 drawn (issue 35: a step <= 0.5 s at the p95 too; the median hid the slow steps)
        print(f"replay step at the last turns, {view} (goal <= 500 ms at the p95): shown {_stats(shown)}; "
              f"drawn {_stats(settled)} {'OK' if _p95(settled) <= 500 else 'SLOW'}")
    if ask_too:
        print(f"ask with {len(systems)} system(s) ({', '.join(systems)}): {ask:.2f} s (goal <= 5 s with 6) "
              f"{'OK' if ask <= 5 else 'SLOW'}")


def main() -> None:
    """Print page-load and step latencies against their goals."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", nargs="+", default=["com", "recmem", "memcot", "xmemory", "memweaver"])
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--pages-only", action="store_true",
                    help="only the first visit to every page in a fresh browser (goal < 4 s)")
    ap.add_argument("--embedder", default="minilm", help="the app's default is minilm; hashing skips torch")
    ap.add_argument("--store", type=Path, help="a store built beforehand: measure on its conversation (no demo)")
    ap.add_argument("--question", default="When did I first set up the project, and what changed later?",
                    help="the free-text question Ask is timed with (--store)")
    ap.add_argument("--no-visits", action="store_true", help="(--store) skip the first visit to every page")
    ap.add_argument("--no-ask", action="store_true", help="(--store) skip Ask")
    ap.add_argument("--ask-systems", default="", help="(--store) Ask with these systems, comma-separated (default: "
                    "the page's picks: every built system)")
    ap.add_argument("--growth-systems", default="", help="(--store) also step through the Growth view of these "
                    "systems, comma-separated (Growth opens on the first system with a growth view)")
    args = ap.parse_args()
    os.environ["MEMCORE_EMBEDDER"] = args.embedder
    if args.store:
        on_store(args.store.resolve(), args.question, min(args.steps, 10), not args.no_visits, args.ask_systems,
                 not args.no_ask, [s for s in args.growth_systems.split(",") if s])
        return
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        t0 = time.perf_counter()
        n = prebuild(store, args.systems)
        print(f"prebuilt {', '.join(args.systems)} on the demo ({n} turns) in {time.perf_counter() - t0:.1f} s")
        if args.pages_only:
            os.environ["MEMCORE_PROFILE"] = "1"  # the server logs one line per script run (ui.launch.RunTimer)
            print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
            with launch() as browser, app_server(store) as base:
                first = fresh_visits(browser, base, ("",))["/"]  # the first page of a fresh server
                first_runs = script_runs(store)
                visits = fresh_visits(browser, base)
                runs = script_runs(store)[len(first_runs):]
            print(f"load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
            print(f"first visit to / of a fresh server (./run.sh launcher): {first:.2f} s "
                  f"{'OK' if first < 4 else 'SLOW'}; script runs: {len(first_runs)} "
                  f"({', '.join(f'{p} {s:.2f} s' for p, s in first_runs)})")
            print(f"script runs for the {len(visits)} visits below: {len(runs)} "
                  f"(server time {sum(s for _, s in runs):.2f} s in all: {', '.join(f'{p} {s:.2f}' for p, s in runs)})")
            print("first visit in a fresh browser, warm server, goal under 4 s (nan: the page said Page not found):")
            for path, secs in visits.items():
                print(f"  {path:22s} {secs:5.2f} s {'OK' if secs < 4 else 'SLOW'}")
            return
        with launch() as browser:
            colds = cold_visits(browser, store)
            with app_server(store) as base:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                first_chart(page, f"{base}/replay")
                time.sleep(8)  # app.py loads the embedding model in the background after the first page
                warm = first_chart(page, f"{base}/replay")
                fresh = browser.new_page(viewport={"width": 1400, "height": 1000})
                new_browser = first_chart(fresh, f"{base}/replay")  # empty browser cache, warm server
                fresh.close()
                lat = step_latencies(page, n, args.steps)
            base_lat = baseline_latencies(browser, args.steps)
        server = server_step_ms(store, args.steps)
    print(f"load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    print(f"replay page load to first chart, {args.embedder} embedder (goal < 3 s):")
    for label, secs in colds.items():
        print(f"  first visit to a fresh server, {label}: {secs:.2f} s {'OK' if secs < 3 else 'SLOW'}")
    print(f"  a new browser (empty cache), warm server: {new_browser:.2f} s {'OK' if new_browser < 3 else 'SLOW'}")
    print(f"  reload in the same browser, warm server: {warm:.2f} s {'OK' if warm < 3 else 'SLOW'}")
    shown, settled = [x for x, _ in lat], [y for _, y in lat]
    print(f"replay step (click next -> new turn shown): {_stats(shown)} (goal < 300 ms) "
          f"{'OK' if statistics.median(shown) < 300 else 'SLOW'}")
    print(f"replay step (click next -> last DOM change: charts and tables redrawn): {_stats(settled)}")
    b_shown, b_settled = [x for x, _ in base_lat], [y for _, y in base_lat]
    print(f"baseline, trivial one-button Streamlit app on this machine: shown {_stats(b_shown)}; "
          f"last DOM change {_stats(b_settled)}")
    print(f"replay step minus baseline (medians): shown {statistics.median(shown) - statistics.median(b_shown):.0f} ms, "
          f"last DOM change {statistics.median(settled) - statistics.median(b_settled):.0f} ms")
    print(f"server side, whole Replay page rerun per step (AppTest, upper bound): {_stats(server)}")


if __name__ == "__main__":
    main()
