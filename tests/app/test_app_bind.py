"""The app listens on 127.0.0.1 however it is started (issue 24): `streamlit run app.py` with no address flag
binds the loopback interface only, and Home says where the app is served."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
from streamlit.testing.v1 import AppTest

from tests.browser_util import free_port

ROOT = Path(__file__).resolve().parents[2]


def _listening(pid: int) -> set[str]:
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return {c.laddr.ip for p in procs for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN}


def test_streamlit_run_app_without_flags_listens_on_loopback_only(tmp_path):
    port = free_port()
    env = {**os.environ, "MEMCORE_STORE": str(tmp_path / "store"), "MEMCORE_EMBEDDER": "hashing",
           "MEMCORE_LLM_PROVIDER": "offline"}
    env.pop("STREAMLIT_SERVER_ADDRESS", None)
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
                             "--server.fileWatcherType", "none"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                    break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, "streamlit did not start"
                time.sleep(0.3)
        addrs = _listening(proc.pid)
        assert addrs == {"127.0.0.1"}, addrs
    finally:
        proc.terminate()
        proc.wait(15)


def test_home_says_where_the_app_is_served(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    at = AppTest.from_file(str(ROOT / "pages" / "home.py"), default_timeout=120).run()
    captions = " ".join(c.value for c in at.caption)
    assert "Served on 127.0.0.1 only" in captions and "STREAMLIT_SERVER_ADDRESS" in captions
