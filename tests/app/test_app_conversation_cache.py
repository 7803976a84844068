"""The stored conversation is read and parsed once per server and version of the store (ui.state.conversation,
issues 35/38: a 10M-token chat took 0.4-0.6 s per new session), shared by every session, and a write (new
questions, a turn added to a live conversation; here by another store handle, as another process writes) is never
served stale: the next run reads the new conversation, and the one it replaced is not kept beside it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memcore.datasets import load_demo
from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.store.lance import LanceStore
from memcore.types import Question
from memcore.workbench import Workbench
from ui import state


def _page() -> None:
    import streamlit as st

    from ui import state

    wb = state.workbench()
    conv = state.conversation(wb, "demo")
    st.text(f"{len(conv.turns)} {len(conv.questions)} {id(conv)} {wb.store.conversations_version()}")


def _session() -> tuple[int, int, int, int]:
    at = AppTest.from_function(_page, default_timeout=60).run()
    assert not at.exception, at.exception
    return tuple(int(x) for x in at.text[0].value.split())  # type: ignore[return-value]


@pytest.fixture
def parses(app_env, monkeypatch):
    """The demo stored in the app's store, the shared cache empty, and a list of the conversations parsed."""
    Workbench(Settings(store_uri=str(app_env / "store"), llm_provider="offline", embedder="hashing"),
              embedder=HashingEmbedder()).load_demo()
    state._stored_conversation.clear()
    state._CONV_VERSIONS.clear()
    seen: list[str] = []
    real = LanceStore.load_conversation

    def counted(self, conv_id):
        seen.append(conv_id)
        return real(self, conv_id)

    monkeypatch.setattr(LanceStore, "load_conversation", counted)
    return seen


def _other_handle(app_env) -> LanceStore:
    return LanceStore(str(app_env / "store"), dim=HashingEmbedder().dim)


def test_two_sessions_share_one_parse(parses):
    first = _session()
    second = _session()
    assert parses == ["demo"]  # the second session read nothing: the first one's parse
    assert first == second and first[0] > 0  # the very same object (its id), same turns and questions


def test_new_questions_written_elsewhere_are_read_at_the_next_run(parses, app_env):
    n_turns, n_q, _, version = _session()
    other = _other_handle(app_env)
    conv = load_demo()  # what the store holds (not read through the store: that read would be counted)
    extra = Question(id="extra-q", conv_id="demo", text="Which city did I move to?", answer="Lisbon")
    other.save_conversation(dataclasses.replace(conv, questions=[*conv.questions, extra]))
    turns2, q2, _, version2 = _session()
    assert version2 > version and (turns2, q2) == (n_turns, n_q + 1)  # the new conversation, not the cached one
    assert parses == ["demo", "demo"]
    # the replaced version is not held beside the new one: asking for it parses again
    wb = Workbench(Settings(store_uri=str(app_env / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    state._stored_conversation(wb.store, wb.store.uri, "demo", version)
    assert parses == ["demo", "demo", "demo"]
    assert _session()[1] == n_q + 1 and len(parses) == 3  # the current version is still cached


def test_a_turn_added_to_a_live_conversation_is_read(parses, app_env):
    n_turns, _, _, _ = _session()
    other = _other_handle(app_env)
    conv = load_demo()
    last = conv.turns[-1]
    grown = dataclasses.replace(conv, turns=[*conv.turns, dataclasses.replace(
        last, turn_id=f"{last.turn_id}-next", index=last.index + 1, text="One more message.")])
    other.save_conversation(grown, extend=True)
    assert _session()[0] == n_turns + 1


def test_forget_drops_the_parsed_conversation(parses):
    _session()
    state.forget_conversation("demo")
    _session()
    assert parses == ["demo", "demo"]  # read again after a reload from a file, though the version did not change


def test_explore_and_ask_share_one_read_of_a_memorys_kind_counts(parses, app_env, monkeypatch):
    """Explore's kinds and Ask's overview read a memory's items per kind once per memory and built step, for every
    session (a row count per kind table: ~0.5 s a memory on the 10M chat, per Explore run before)."""
    from memcore.store.view import MemoryView

    wb = Workbench(Settings(store_uri=str(app_env / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    wb.ingest("naive_rag_session", wb.conversation("demo"))
    state._kind_counts.clear()
    reads: list[str] = []
    real = MemoryView.kind_counts
    monkeypatch.setattr(MemoryView, "kind_counts", lambda self, *a, **k: reads.append(self.system) or real(self, *a, **k))
    app = str(Path(__file__).resolve().parents[2] / "app.py")
    shown = []
    for page in ("explore", "explore", "ask"):
        at = AppTest.from_file(app, default_timeout=120)
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, at.exception
        if page == "explore":
            shown.append(at.selectbox(key="ex_kind").options)
    assert reads == ["naive_rag_session"]  # one read for two Explore sessions and Ask
    want = real(wb.memory("naive_rag_session", wb.conversation("demo")))
    assert want and shown[0] == shown[1] == [f"{k} ({n})" for k, n in want.items()]


def test_a_memory_as_of_its_checkpoint_reads_its_current_items_once(tmp_path, monkeypatch):
    """Explore's entity graph reads a memory's current entities and relations once per memory and checkpoint step
    (state.as_of_checkpoint), for every session, instead of per run: the same items as a read of the store; a new
    step reads them again; reads with vectors or at a step still go to the store."""
    from memcore.store.view import MemoryView

    wb = Workbench(Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    conv = wb.load_demo()
    wb.ingest("memweaver", conv)
    mem = wb.memory("memweaver", conv)
    ck, done = mem.status()
    assert done
    reads: list[tuple] = []
    real = MemoryView.items
    monkeypatch.setattr(MemoryView, "items", lambda self, kind, at_step=None, with_vectors=True: reads.append(
        (kind, at_step, with_vectors)) or real(self, kind, at_step, with_vectors))
    for kind in ("entity", "relation"):
        want = real(mem, kind, None, False)
        for _ in range(2):  # two runs (or sessions)
            got = state.as_of_checkpoint(mem, ck).items(kind, with_vectors=False)
            assert want and [(i.id, i.updated_step, i.text, i.metadata, i.turn_ids) for i in got] == \
                   [(i.id, i.updated_step, i.text, i.metadata, i.turn_ids) for i in want], kind
    assert reads == [("entity", None, False), ("relation", None, False)]  # once each
    state.as_of_checkpoint(mem, ck + 1).items("entity", with_vectors=False)  # another step: read again
    state.as_of_checkpoint(mem, ck).items("entity", at_step=3, with_vectors=False)  # a step: the store's read
    assert reads[2:] == [("entity", None, False), ("entity", 3, False)]


def test_values_derived_from_a_conversation_are_built_once_per_object():
    """state.per_conversation (the turn texts Ask and Export show): once per conversation object, built again for
    another object (a new version of the stored conversation), dropped when the object is gone."""
    import gc

    from ui.structure_view import turn_texts

    conv = load_demo()
    made: list[int] = []

    def make(c):
        made.append(1)
        return {t.turn_id: t.embed_text for t in c.turns}

    first = state.per_conversation(conv, "texts-test", make)
    assert state.per_conversation(conv, "texts-test", make) is first and len(made) == 1
    assert first == {t.turn_id: t.embed_text for t in conv.turns}
    other = dataclasses.replace(conv, turns=conv.turns[:3])
    assert len(state.per_conversation(other, "texts-test", make)) == 3 and len(made) == 2
    assert turn_texts(conv) is turn_texts(conv) and turn_texts(conv) == first
    key = (id(other), "texts-test")
    del other
    gc.collect()
    assert key not in state._DERIVED
