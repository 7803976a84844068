"""`memcore mcp` tool latency and the Live page's update delay (issue 36).

Per tool (remember, recall, answer, memory_status) and system: the latency of calls through the official SDK's
client over the in-process transport (the server's own work, no stdio/HTTP framing), with the offline engine and
with the mock hosted model answering every LLM call after `--delay-ms` (default 500 ms, the OpenAI provider
against memcore.llm.mock_server with the offline engine's replies). Then the Live page's update delay: the time
from a `remember` returning to the page (headless chromium, kept open, no reload) showing the new turn count.

    .venv/bin/python bench/mcp_latency.py [--systems naive_rag xmemory] [--messages 20] [--embedder hashing]

Prints one line per (mode, system, tool): calls, median, p90 and max ms. State the machine load (printed).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp import Client  # noqa: E402

from memcore.cli.mcp import build_server  # noqa: E402
from memcore.embed import HashingEmbedder, make_embedder  # noqa: E402
from memcore.live import LiveMemory  # noqa: E402
from memcore.llm import make_provider  # noqa: E402
from memcore.llm.mock_server import MockOpenAIServer, OfflineResponder, observe  # noqa: E402
from memcore.settings import Settings  # noqa: E402
from memcore.workbench import Workbench  # noqa: E402

TOPICS = ["my dog Rex", "the trip to Lisbon", "learning the cello", "a new job at the bakery", "the garden roses"]


def script(n: int) -> list[tuple[str, dict[str, Any]]]:
    """n remembers, a recall after every fifth, then three answers and a status."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for i in range(n):
        m = {"speaker": "Alice" if i % 2 == 0 else "Bob", "text": f"Message {i + 1} is about {TOPICS[i % 5]}."}
        if i == 0:
            m["time"] = "2024-03-01 10:00"
        calls.append(("remember", m))
        if (i + 1) % 5 == 0:
            calls.append(("recall", {"query": f"What about {TOPICS[i % 5]}?"}))
    calls += [("answer", {"query": f"What about {t}?"}) for t in TOPICS[:3]] + [("memory_status", {})]
    return calls


async def timed(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, list[float]]:
    """ms per call, by tool (a failed call stops the bench with its error)."""
    out: dict[str, list[float]] = {}
    async with Client(server) as client:
        for name, args in calls:
            t0 = time.perf_counter()
            r = await client.call_tool(name, args)
            ms = (time.perf_counter() - t0) * 1000
            if r.is_error:
                raise SystemExit(f"{name} failed: {r.content[0].text}")
            out.setdefault(name, []).append(ms)
    return out


def line(mode: str, system: str, tool: str, ms: list[float]) -> str:
    s = sorted(ms)
    p90 = s[min(len(s) - 1, int(0.9 * len(s)))]
    return (f"{mode:14s} {system:10s} {tool:14s} n={len(s):3d} median {statistics.median(s):8.1f} ms  "
            f"p90 {p90:8.1f} ms  max {s[-1]:8.1f} ms")


def workbench(store: Path, embedder: str, url: str | None = None, responder: Any = None) -> Workbench:
    emb = HashingEmbedder() if embedder == "hashing" else make_embedder(Settings(embedder=embedder))
    if url is None:
        return Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder=embedder), embedder=emb)
    s = Settings(store_uri=str(store), embedder=embedder, llm_provider="openai", llm_model="mock-model",
                 openai_base_url=url, openai_api_key="sk-bench-0000")
    responder.engine.use_embedder(emb)
    return Workbench(s, provider=observe(make_provider(s), responder), embedder=emb)


def tools(systems: list[str], n: int, embedder: str, delay_ms: float) -> None:
    calls = script(n)
    for system in systems:
        with tempfile.TemporaryDirectory() as d:
            wb = workbench(Path(d) / "s", embedder)
            got = asyncio.run(timed(build_server(wb, [system]), calls))
            for tool, ms in got.items():
                print(line("offline", system, tool, ms), flush=True)
        responder = OfflineResponder()
        with tempfile.TemporaryDirectory() as d, MockOpenAIServer(delay_s=delay_ms / 1000,
                                                                  responder=responder) as srv:
            wb = workbench(Path(d) / "s", embedder, srv.base_url, responder)
            got = asyncio.run(timed(build_server(wb, [system]), calls))
            for tool, ms in got.items():
                print(line(f"mock {delay_ms:.0f}ms", system, tool, ms), flush=True)
            print(f"{'':14s} {system:10s} LLM requests to the mock: {srv.received}", flush=True)


def live_page(rounds: int) -> None:
    """Seconds from a remember returning to the Live page showing the new turn count (no reload)."""
    from tests.browser_util import app_server, launch

    with tempfile.TemporaryDirectory() as d:
        store = Path(d) / "store"
        wb = workbench(store, "hashing")
        live = LiveMemory(wb, "live-bench", ["naive_rag"], client="bench")
        live.remember("Alice", "Hello, I moved to Porto.", "2024-03-01 10:00")
        delays = []
        with app_server(store) as base, launch() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(f"{base}/live?conv=live-bench", wait_until="domcontentloaded")
            page.get_by_text("1 turn(s)").first.wait_for(timeout=120_000)
            page.evaluate("window.__kept = 1")
            for i in range(rounds):
                with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
                    pool.submit(live.remember, "Bob", f"Reply number {i + 1}.").result()
                t0 = time.perf_counter()
                page.get_by_text(f"{i + 2} turn(s)").first.wait_for(timeout=30_000)
                delays.append(time.perf_counter() - t0)
            assert page.evaluate("window.__kept") == 1, "the page reloaded"
        print(f"Live page update delay over {rounds} writes: median {statistics.median(delays):.2f} s, "
              f"max {max(delays):.2f} s (panel redraws every 1 s; no reload)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", nargs="+", default=["naive_rag", "xmemory"])
    ap.add_argument("--messages", type=int, default=20)
    ap.add_argument("--embedder", default="hashing", help="hashing (default: no model in the numbers) or minilm")
    ap.add_argument("--delay-ms", type=float, default=500.0)
    ap.add_argument("--rounds", type=int, default=8, help="writes timed on the Live page")
    ap.add_argument("--no-browser", action="store_true")
    a = ap.parse_args()
    for name in ("httpx", "mcp"):  # one INFO line per HTTP request or tool call otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    print(f"load average: {os.getloadavg()}, cores: {os.cpu_count()}", flush=True)
    tools(a.systems, a.messages, a.embedder, a.delay_ms)
    if not a.no_browser:
        live_page(a.rounds)
    print(f"load average: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
