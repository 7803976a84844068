"""Helpers for the browser test and bench/app_latency.py: start the app, launch Debian chromium."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def app_server(store: Path, timeout: float = 90.0, warm: bool = True, launch_args: tuple[str, ...] = ()) -> Iterator[str]:
    """Start the app as ./run.sh does (`python -m ui.launch [launch_args]`, or plain `streamlit run app.py` with
    warm=False) on a free port with a temp store; yields the base URL."""
    port = free_port()
    env = {**os.environ, "MEMCORE_STORE": str(store), "MEMCORE_EMBEDDER": os.environ.get("MEMCORE_EMBEDDER", "hashing"),
           "MEMCORE_LLM_PROVIDER": "offline", "PYTHONUNBUFFERED": "1"}
    log = open(store.parent / f"streamlit-{port}.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", *(["ui.launch", *launch_args] if warm else ["streamlit", "run", str(ROOT / "app.py")]),
         "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"streamlit did not start; see {log.name}") from None
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextlib.contextmanager
def launch() -> Iterator[Any]:
    """Debian's chromium under Playwright (never `playwright install`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def wait_text(page: Any, text: str, seconds: float) -> None:
    """Wait until some visible element shows `text`."""
    page.get_by_text(text).first.wait_for(state="visible", timeout=seconds * 1000)


def pick(page: Any, box: Any, option: Any, seconds: float = 90.0) -> None:
    """Open the selectbox `box` and click the option `option` (a name, exact; a compiled pattern; or an index).

    A Streamlit rerun can replace the box between the click that opens it and the option's appearing (the list
    then closes); on a busy machine that happens often, so the box is opened again until the option shows.
    """
    deadline = time.monotonic() + seconds
    exact = isinstance(option, str)
    while True:
        box.click(timeout=max(1_000, (deadline - time.monotonic()) * 1000))
        if isinstance(option, int):
            item = page.get_by_role("option").nth(option)
        else:
            item = (page.get_by_role("option", name=option, exact=exact) if exact
                    else page.get_by_role("option", name=option)).first
        try:
            item.wait_for(state="visible", timeout=10_000)
            item.click(timeout=10_000)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            page.keyboard.press("Escape")


def shoot(page: Any, folder: Path, name: str) -> Path:
    """A screenshot of the viewport (Streamlit scrolls inside its main container, not the page)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def offsite(urls: list[str], base: str) -> list[str]:
    """Requests that left the app's own origin (should be none: the app works offline)."""
    local = (base, "data:", "blob:", "about:", "chrome-extension:")
    return [u for u in urls if not u.startswith(local)]


def skip_without_chromium() -> None:
    """Skip the calling test module when Debian's chromium is absent (call at module level)."""
    if not Path(CHROMIUM).exists():
        import pytest

        pytest.skip(f"{CHROMIUM} not installed (run scripts/install-browser.sh)", allow_module_level=True)


@dataclass
class DemoApp:
    """A running app with the demo loaded, seen through one chromium page."""

    base: str  # the app's URL
    page: Any  # the Playwright page
    shots: Path  # where `shoot` should write
    requests: list[str] = field(default_factory=list)  # every URL the page requested


@contextlib.contextmanager
def demo_app(tmp_path: Path, width: int = 1400, height: int = 1600) -> Iterator[DemoApp]:
    """Start the app on a temp store (tmp_path/store), open Home in headless chromium, click "Load the built-in
    demo" and wait for its question count; every request of the page is recorded. On the way out (passed or
    failed) the screenshots are copied to $MEMCORE_SCREENSHOTS when it is set."""
    from memcore.datasets import load_demo

    shots = tmp_path / "screenshots"
    try:
        with app_server(tmp_path / "store") as base, launch() as browser:
            page = browser.new_page(viewport={"width": width, "height": height})
            app = DemoApp(base, page, shots)
            page.on("request", lambda r: app.requests.append(r.url))
            page.goto(base, wait_until="domcontentloaded")
            page.get_by_role("button", name="Load the built-in demo").click(timeout=60_000)
            wait_text(page, "Questions", 60)
            page.get_by_text(str(len(load_demo().questions)), exact=True).first.wait_for(timeout=60_000)
            yield app
    finally:
        keep_screenshots(shots)


def keep_screenshots(shots: Path) -> None:
    """Copy a test's screenshots to $MEMCORE_SCREENSHOTS when it is set."""
    if os.environ.get("MEMCORE_SCREENSHOTS") and shots.is_dir():
        out = Path(os.environ["MEMCORE_SCREENSHOTS"])
        out.mkdir(parents=True, exist_ok=True)
        for p in shots.glob("*.png"):
            shutil.copy(p, out / p.name)
