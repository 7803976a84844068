"""Replay loads every item version of its memories in the background once the page is drawn (ui.replay_view.
warm_versions, issue 35): the first step after a page load then reads nothing from the store, as every later step."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.store.view import MemoryView
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


@pytest.fixture()
def replay(tmp_path, monkeypatch):
    """The demo with xMemory and MemWeaver built in a fresh store (fresh cache keys); Replay opened at the last step,
    and a counter of the store reads that load a kind's every version."""
    store = tmp_path / "store"
    for k, v in (("MEMCORE_STORE", str(store)), ("MEMCORE_EMBEDDER", "hashing"), ("MEMCORE_LLM_PROVIDER", "offline")):
        monkeypatch.setenv(k, v)
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"), embedder=HashingEmbedder())
    conv = wb.load_demo()
    for s in ("xmemory", "memweaver"):
        wb.ingest(s, conv)
    reads: list[str] = []
    real = MemoryView.kind_versions

    def counted(self, kind, ids=None, *a, **kw):
        # every version of the kind, or a diff's read of a few changed items by id
        reads.append(kind if ids is None else f"{kind} by id")
        return real(self, kind, ids, *a, **kw)

    monkeypatch.setattr(MemoryView, "kind_versions", counted)

    def open_at_end() -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
        at.switch_page("pages/replay.py").run()
        at.multiselect(key="replay_systems").set_value(["xmemory", "memweaver"]).run()
        at.slider(key="replay_step").set_value(len(conv.turns)).run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return open_at_end, reads, len(conv.turns)


def _join_warmups() -> int:
    threads = [t for t in threading.enumerate() if t.name == "memcore-replay-warm"]
    for t in threads:
        t.join(120)
    return len(threads)


def test_the_first_steps_after_a_page_load_read_no_versions(replay):
    open_at_end, reads, n = replay
    at = open_at_end()
    _join_warmups()
    assert {"episode", "semantic", "theme", "entity", "relation"} <= set(reads)  # both memories' kinds, loaded once
    reads.clear()
    for step in (n - 1, n - 2, n - 3):  # each step's diff (previous step -> this one) from the loaded versions
        at.slider(key="replay_step").set_value(step).run()
        assert not at.exception, [e.value for e in at.exception]
    assert [r for r in reads if not r.endswith(" by id")] == []  # (a memory's first diff reads its few items by id)


def test_without_the_warm_up_a_step_reads_its_changed_items_and_waits_for_no_load(replay, monkeypatch):
    """The control: the same steps read from the store when nothing warmed them (what the warm-up saves), and only
    their changed items by id: a step's diff never loads (nor waits for) a kind's every version, which at the
    synthetic 10M chat made the second step after a page load take 1.2 s."""
    import ui.replay_view

    monkeypatch.setattr(ui.replay_view, "warm_versions", lambda *a, **kw: None)
    open_at_end, reads, n = replay
    at = open_at_end()
    assert _join_warmups() == 0
    reads.clear()
    for step in (n - 1, n - 2, n - 3):
        at.slider(key="replay_step").set_value(step).run()
        assert not at.exception, [e.value for e in at.exception]
    assert reads and all(r.endswith(" by id") for r in reads), reads


def test_the_warm_up_loads_what_a_steps_diff_waits_for_before_the_event_streams(monkeypatch):
    """The next step's diff waits for a memory's events and item versions (the cache's lock), not for the event
    streams of Replay data built from cached counts (a step reads its own events till then): those load last."""
    from ui import replay_view

    order: list[str] = []

    class Lazy:
        @property
        def events(self):
            order.append("stream")

    monkeypatch.setattr(replay_view.state, "checkpoint", lambda mem: (3, True))
    monkeypatch.setattr(replay_view.state, "event_stream", lambda mem, step: order.append("events"))
    monkeypatch.setattr(replay_view.state, "items_at", lambda mem, kind, step: order.append(f"versions {kind}"))
    replay_view._warm([(object(), ["fact", "theme"])], [Lazy()])
    assert order == ["events", "versions fact", "versions theme", "stream"]
