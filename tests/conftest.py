"""Shared test fixtures: a tiny conversation, an isolated workbench, the shared datasets dir; installed plugins off
unless a test opts in (the `plugins` fixture or marker)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import openai
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
    sys.__stdin__ = open(os.devnull)


LOCAL_HOSTS = frozenset({"127.0.0.1"})  # the mock server and the bundled local server listen here
ENDPOINT_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL")  # what would point a test (or its child process) elsewhere


class EndpointRefused(RuntimeError):
    """A test built an LLM or embedding client for an endpoint that is not on 127.0.0.1."""


REFUSED: list[str] = []  # clients the guard refused, taken by the test during which they were built


def _guard_client(cls: type, mp: pytest.MonkeyPatch) -> None:
    """Refuse `cls` (an openai client class) at construction unless its base URL is on 127.0.0.1."""
    init = cls.__init__

    def guarded(self: object, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)
        host = urlsplit(str(getattr(self, "base_url", ""))).hostname or ""
        if host not in LOCAL_HOSTS:
            REFUSED.append(f"{cls.__name__} for {host or '?'}")
            raise EndpointRefused(f"tests reach no endpoint but one on 127.0.0.1 (a mock server); "
                                  f"this {cls.__name__} client points at {host or 'an unknown host'}")

    mp.setattr(cls, "__init__", guarded)


@pytest.fixture(scope="session", autouse=True)
def _endpoint_guard() -> Iterator[None]:
    """For the whole session (so module fixtures and the processes they start are covered too): the developer's
    OPENAI_API_KEY and OPENAI_BASE_URL are removed (child processes and the default provider cannot reach an
    endpoint: with no key the provider is `offline`), and every `openai` client (the openai provider's and the
    OpenAI embedder's: all of memcore's endpoints) is refused at construction unless its base URL is on
    127.0.0.1."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ENDPOINT_ENV:
            mp.delenv(name, raising=False)
        _guard_client(openai.OpenAI, mp)
        _guard_client(openai.AsyncOpenAI, mp)
        yield


@pytest.fixture(autouse=True)
def no_remote_endpoints(_endpoint_guard: None) -> Iterator[list[str]]:
    """Every test: no LLM or embedding endpoint other than one on 127.0.0.1. A test opts in to an endpoint by
    starting a mock server (memcore.llm.mock_server, on 127.0.0.1) and naming its URL (a test that sets
    OPENAI_API_KEY itself still gets no client off 127.0.0.1). A refused client raises EndpointRefused and fails
    the test at teardown even when the code under test caught the error; yields the refusals (a test of the guard
    clears them)."""
    yield REFUSED  # refusals while module or session fixtures were built count against the first test
    if REFUSED:
        refused = ", ".join(REFUSED)
        REFUSED.clear()
        pytest.fail(f"endpoint guard refused: {refused}")


_PLUGINS_BEFORE = os.environ.get(PLUGINS_ENV)
WORKERS_ENV = "MEMCORE_EVAL_WORKERS"  # memcore.eval.processes.WORKERS_ENV
_WORKERS_BEFORE = os.environ.get(WORKERS_ENV)


def pytest_configure(config: pytest.Config) -> None:
    """The `plugins` marker; installed plugins off from collection on (tests parametrized by a registry's list
    collect memcore's own entries, as their runs see them)."""
    config.addinivalue_line("markers", "plugins: the test sees installed memcore plugins (off otherwise)")
    os.environ[PLUGINS_ENV] = "0"
    # run_eval's "auto" workers would spawn processes, which see none of a test's monkeypatches: one process unless
    # a test asks for workers (tests/eval/test_workers.py tests the default with the variable removed)
    os.environ[WORKERS_ENV] = "1"


def pytest_unconfigure(config: pytest.Config) -> None:
    """The environment as it was before the session."""
    if _PLUGINS_BEFORE is None:
        os.environ.pop(PLUGINS_ENV, None)
    else:
        os.environ[PLUGINS_ENV] = _PLUGINS_BEFORE
    if _WORKERS_BEFORE is None:
        os.environ.pop(WORKERS_ENV, None)
    else:
        os.environ[WORKERS_ENV] = _WORKERS_BEFORE


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
