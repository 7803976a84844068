"""Memory held once (issue 25 item 4): the workbench holds one system per memory space; a query-time change
(the retriever, a query_field) answers from the memory already loaded, and one Ask works out the config and the
memory space once and reads the checkpoint at most once."""

from __future__ import annotations

import pytest

import memcore.systems.base as base
import memcore.workbench as wbmod
from memcore.systems import builtin_systems
from memcore.systems.base import BaseSystem
from memcore.testing import contract_workbench
from tests.conftest import make_conversation

SYSTEMS = [n for n in ("com", "recmem", "memcot", "xmemory", "memweaver", "naive_rag_session") if n in builtin_systems()]


class Counts:
    """Spies on what an Ask works out and reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, wb: wbmod.Workbench) -> None:
        self.n = {"restore": 0, "config": 0, "space": 0, "checkpoint": 0}
        restore, make_config, memory_space, checkpoint = (BaseSystem.restore, wbmod.make_config, base.memory_space,
                                                          wb.store.checkpoint)

        def count(key: str, fn):
            def spy(*a, **kw):
                self.n[key] += 1
                return fn(*a, **kw)
            return spy

        monkeypatch.setattr(BaseSystem, "restore", count("restore", restore))
        monkeypatch.setattr(wbmod, "make_config", count("config", make_config))
        monkeypatch.setattr(base, "memory_space", count("space", memory_space))
        monkeypatch.setattr(wb.store, "checkpoint", count("checkpoint", checkpoint))

    def take(self) -> dict[str, int]:
        out, self.n = self.n, dict.fromkeys(self.n, 0)
        return out


@pytest.mark.parametrize("name", SYSTEMS)
def test_retriever_change_on_ask_restores_nothing_and_answers_as_a_fresh_system(tmp_path, monkeypatch, name):
    conv = make_conversation()
    wb = contract_workbench(tmp_path / "a")
    wb.ingest(name, conv)
    q = conv.questions[0]
    counts = Counts(monkeypatch, wb)
    first = wb.ask(name, conv, q)
    first_counts = counts.take()
    answers, per_change = {}, {}
    for retriever in ("lexical", "hybrid", "dense"):
        answers[retriever] = wb.ask(name, conv, q, retriever=retriever)
        per_change[retriever] = counts.take()
        assert answers[retriever].trace.retriever == retriever
    assert sum(c["restore"] for c in per_change.values()) == 0  # main: one restore per change
    assert first_counts == {"restore": 1, "config": 1, "space": 1, "checkpoint": 1}  # main: checkpoint 3
    for c in per_change.values():
        assert c == {"restore": 0, "config": 1, "space": 1, "checkpoint": 0}
    assert answers["dense"].trace.to_dict() == first.trace.to_dict()
    assert wb.system(name, conv).config.retriever == "dense"  # the held system never took a call's setting
    counts.take()
    # the memory already loaded answers as a workbench that only ever asked with that retriever
    fresh = contract_workbench(tmp_path / "b")
    fresh.ingest(name, conv)
    for retriever in ("lexical", "hybrid"):
        alone = fresh.ask(name, conv, q, retriever=retriever)
        assert alone.text == answers[retriever].text
        assert alone.trace.context == answers[retriever].trace.context
        assert alone.trace.context_turn_ids() == answers[retriever].trace.context_turn_ids()


def test_system_with_a_query_setting_is_a_view_of_the_held_one(workbench, monkeypatch):
    conv = make_conversation()
    workbench.ingest("recmem", conv)
    counts = Counts(monkeypatch, workbench)
    held = workbench.system("recmem", conv)
    view = workbench.system("recmem", conv, retriever="lexical", k_sub=3)
    assert counts.take()["restore"] == 1
    assert view is not held and view.memory is held.memory and view.space == held.space
    assert (view.config.retriever, view.config.k_sub, held.config.retriever, held.config.k_sub) == (
        "lexical", 3, "dense", 10)
    assert len(view.retrieve(conv.questions[0]).items) <= len(held.retrieve(conv.questions[0]).items)
    with pytest.raises(ValueError, match="theta_sim"):  # a construction field is another memory, not a view
        held.with_query({"theta_sim": 0.5})


def test_recmem_reads_its_store_counts_once_per_memory(workbench, monkeypatch):
    conv = make_conversation()
    workbench.ingest("recmem", conv)
    calls = []
    kind_counts = workbench.store.kind_counts
    monkeypatch.setattr(workbench.store, "kind_counts", lambda *a, **kw: calls.append(a) or kind_counts(*a, **kw))
    for q in conv.questions:
        for retriever in ("dense", "lexical"):
            tr = workbench.ask("recmem", conv, q, retriever=retriever).trace
            assert tr.structure["stores"] == {"subconscious": kind_counts(*calls[0]).get("unit", 0),
                                              "episodic": kind_counts(*calls[0]).get("episode", 0),
                                              "semantic": kind_counts(*calls[0]).get("semantic", 0)}
    assert len(calls) == 1
