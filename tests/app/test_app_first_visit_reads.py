"""What a first visit to Explore and Ask reads (issue 38 item 5: first visit <= 3 s on the synthetic 10M chat): each
memory's reads once per memory, kind and checkpoint step for every session, started together; a table shared by
sessions never shows another memory's or conversation's items; Ask draws no plotly chart before the click."""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.store.view import MemoryView
from memcore.workbench import Workbench
from ui import explore_view, state
from ui.ask_view import overview_table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _wb(store: Path) -> Workbench:
    return Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
                     embedder=HashingEmbedder())


def _clear() -> None:
    state._current_items.clear()
    state._kind_counts.clear()
    explore_view._current_items.clear()


@pytest.fixture
def item_reads(monkeypatch) -> list[tuple]:
    """Every read of a memory's items (system, kind, at_step, with_vectors) and of its kind counts ("counts")."""
    reads: list[tuple] = []
    items, counts = MemoryView.items, MemoryView.kind_counts
    monkeypatch.setattr(MemoryView, "items", lambda self, kind, at_step=None, with_vectors=True: reads.append(
        (self.system, kind, at_step, with_vectors)) or items(self, kind, at_step, with_vectors))
    monkeypatch.setattr(MemoryView, "kind_counts", lambda self, *a, **k: reads.append(
        (self.system, "counts")) or counts(self, *a, **k))
    return reads


def test_explore_reads_each_kind_once_for_its_table_and_graph_and_a_new_session_reads_nothing(app_env, item_reads):
    wb = _wb(app_env / "store")
    conv = wb.load_demo()
    wb.ingest("memweaver", conv)
    _clear()
    tables = []
    for _ in range(2):  # two sessions
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
        at.query_params["system"] = "memweaver"
        at.switch_page("pages/explore.py").run()
        assert not at.exception, at.exception
        assert at.selectbox(key="ex_system").value == "memweaver" and at.selectbox(key="ex_ego").options[1:]
        tables.append(at.dataframe[0].value)
    mine = [r for r in item_reads if r[0] == "memweaver"]
    # the counts, and the items of the kind shown (entity), which the entity graph reads too, and its relations:
    # each once, for both sessions
    assert sorted(mine, key=str) == sorted([("memweaver", "counts"), ("memweaver", "entity", None, False),
                                            ("memweaver", "relation", None, False)], key=str)
    want = [it.id for it in wb.memory("memweaver", conv).items("entity", with_vectors=False)]
    assert list(tables[0]["id"]) == list(tables[1]["id"]) == want


def test_the_shared_item_table_is_each_memorys_own(app_env):
    """Two conversations and two systems at the same checkpoint step: each (memory, kind) gets its own items."""
    wb = _wb(app_env / "store")
    demo = wb.load_demo()
    other = dataclasses.replace(demo, id="demo-other", turns=demo.turns[:40], questions=[])
    wb.store.save_conversation(other)
    for conv in (demo, other):
        for system in ("naive_rag_session", "xmemory"):
            wb.ingest(system, conv)
    _clear()
    seen = {}
    for conv in (demo, other):
        for system in ("naive_rag_session", "xmemory"):
            mem = wb.memory(system, conv)
            for kind in mem.kind_counts():
                got = explore_view.current_items(mem, kind, 40)  # one step number for all: the key tells them apart
                want = [it.id for it in mem.items(kind, with_vectors=False)]
                assert list(got["id"]) == want, (conv.id, system, kind)
                seen[(conv.id, system, kind)] = tuple(got["id"])
    assert len(seen) >= 4 and len(set(seen.values())) == len(seen)  # no two memories share a table
    assert explore_view.current_items(wb.memory("xmemory", demo), next(iter(wb.memory("xmemory", demo)
                                      .kind_counts())), 40) is explore_view.current_items(
        wb.memory("xmemory", demo), next(iter(wb.memory("xmemory", demo).kind_counts())), 40)  # shared, not copied


def test_read_together_fills_each_cache_once_and_leaves_a_failure_to_the_caller():
    import streamlit as st

    calls: list[str] = []
    started = threading.Event()

    @st.cache_resource(show_spinner=False)
    def slow(name: str) -> str:
        calls.append(name)
        started.set()
        time.sleep(0.2)
        return name.upper()

    @st.cache_data(show_spinner=False)
    def broken(name: str) -> str:
        calls.append(f"broken {name}")
        raise RuntimeError("unreadable (test)")

    t0 = time.perf_counter()
    state.read_together(lambda: slow("a"), lambda: slow("b"), lambda: slow("a"), lambda: broken("c"))
    took = time.perf_counter() - t0
    assert sorted(calls) == ["a", "b", "broken c"]  # "a" asked twice at once: computed once
    assert took < 0.39  # a and b overlapped (0.2 s each)
    assert (slow("a"), slow("b")) == ("A", "B") and sorted(calls) == ["a", "b", "broken c"]  # from the cache
    with pytest.raises(RuntimeError, match="unreadable"):  # nothing cached for the failure: the caller's call raises
        broken("c")
    state.read_together()  # nothing to read: nothing happens


def test_ask_overview_rows_say_a_memory_whose_counts_were_not_read():
    table = overview_table({"a": {"y": 2, "x": 1_500}, "b": {}, "c": {}}, {"c": "table unreadable"})
    assert list(table["system"]) == ["a", "b", "c"] and list(table["items"][:2]) == [1_502, 0]
    assert table["items"].isna().tolist() == [False, False, True]
    assert list(table["by kind"]) == ["x 1,500, y 2", "no items of its own in the store", "not read: table unreadable"]
