"""The suite runs with no standard input (CI closes fd 0): a graph page's AppTest must still draw.

Found when CI failed: pyvis imports IPython, which asks sys.stdin for its encoding; under pytest sys.stdin is a
stand-in that asserts sys.__stdin__, None when fd 0 is closed. tests/conftest.py opens os.devnull in its place.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_graph_page_draws_under_pytest_started_without_standard_input(tmp_path):
    test = "tests/app/test_app_graphs.py::test_ego_graph_in_explore_and_replay"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "t"), test],
        cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.close(0))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
