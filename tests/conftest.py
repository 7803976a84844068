"""Shared test fixtures: a tiny conversation, an isolated workbench, the shared datasets dir; installed plugins off
unless a test opts in (the `plugins` fixture or marker)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from memcore.registry import PLUGINS_ENV
from memcore.testing import contract_workbench, tiny_conversation
from memcore.types import Conversation
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

if sys.__stdin__ is None:  # started with fd 0 closed (CI has no standard input; ./run.sh test gives /dev/null)
    # pytest's stand-in for sys.stdin asserts sys.__stdin__ when asked its encoding, which IPython (imported by pyvis
    # for the graph pages) does at import: every AppTest drawing a graph would fail.
    sys.__stdin__ = open(os.devnull)  # noqa: SIM115 - kept open for the session


_PLUGINS_BEFORE = os.environ.get(PLUGINS_ENV)


def pytest_configure(config: pytest.Config) -> None:
    """The `plugins` marker; installed plugins off from collection on (tests parametrized by a registry's list
    collect memcore's own entries, as their runs see them)."""
    config.addinivalue_line("markers", "plugins: the test sees installed memcore plugins (off otherwise)")
    os.environ[PLUGINS_ENV] = "0"


def pytest_unconfigure(config: pytest.Config) -> None:
    """The environment as it was before the session."""
    if _PLUGINS_BEFORE is None:
        os.environ.pop(PLUGINS_ENV, None)
    else:
        os.environ[PLUGINS_ENV] = _PLUGINS_BEFORE


@pytest.fixture(autouse=True)
def _installed_plugins(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed plugins (the example one in CI) neither load nor show, so a list a test reads from a registry
    holds memcore's own entries and what the test registers; a test opts in with the `plugins` fixture or
    marker. Through the environment (MEMCORE_PLUGINS), so the processes a test starts see the same."""
    monkeypatch.setenv(PLUGINS_ENV, "1" if request.node.get_closest_marker("plugins") else "0")


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opt in: installed plugins load and show in this test (and in the processes it starts)."""
    monkeypatch.setenv(PLUGINS_ENV, "1")


def make_conversation(conv_id: str = "tiny") -> Conversation:
    """Two sessions, two speakers, with repeated topics and dates (memcore.testing's, shared with plugins)."""
    return tiny_conversation(conv_id)


@pytest.fixture
def tiny_conv() -> Conversation:
    return make_conversation()


@pytest.fixture
def workbench(tmp_path) -> Workbench:
    """A workbench on a temporary store with the hashing embedder and the offline engine."""
    return contract_workbench(tmp_path)


@pytest.fixture
def shared_dir() -> Path:
    if not (SHARED / "datasets").is_dir():
        pytest.skip(f"shared datasets not found at {SHARED} (they live beside the repo in ../shared)")
    return SHARED
