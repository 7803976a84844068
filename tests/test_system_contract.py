"""The MemorySystem contract, run for every registered system (systems added later are covered too).

Each system ingests the tiny conversation (hashing embedder, offline engine, temporary store) and
must: emit well-formed events; retrieve a Trace whose items and candidates point at real turns,
with candidate stages that the trace declares; answer with text, a trace and per-stage usage
holding an "answer" stage; and give the same retrieval after a restore from the store.
"""

from __future__ import annotations

import json

import pytest

from memcore.ingest import ingest_conversation
from memcore.retrievers import retriever_names
from memcore.systems import MemorySystem, get_system, load_all, make_config
from memcore.types import EVENT_KINDS, Answer, Trace

SYSTEMS = list(load_all())


@pytest.fixture(params=SYSTEMS)
def name(request) -> str:
    return request.param


@pytest.fixture
def built(name, workbench, tiny_conv):
    """A system that has ingested the tiny conversation in memory (its writes are in the store)."""
    system = get_system(name)(workbench.runtime, tiny_conv, make_config(name))
    report = ingest_conversation(system)
    return system, report


class TestSystemContract:
    def test_registered_and_configurable(self, name) -> None:
        cls = get_system(name)
        assert cls.name == name and cls.title
        cfg = make_config(name)
        assert cfg.retriever == "dense"
        json.dumps(cfg.construction_dict(), default=str)
        for retriever in retriever_names():
            assert make_config(name, retriever=retriever).retriever == retriever
        with pytest.raises(ValueError, match="retriever must be one of"):
            make_config(name, retriever="telepathy")

    def test_ingest_emits_well_formed_events(self, name, built, workbench, tiny_conv) -> None:
        system, report = built
        assert isinstance(system, MemorySystem)
        assert report.complete and report.turns_done == len(tiny_conv.turns)
        events = workbench.store.events(system.space, tiny_conv.id)
        assert events, f"{name} emitted no events"
        turn_ids = {t.turn_id for t in tiny_conv.turns}
        for e in events:
            assert e.kind in EVENT_KINDS, e
            assert e.system == name and e.conv_id == tiny_conv.id
            assert 1 <= e.step <= len(tiny_conv.turns) + 1
            assert e.item_ids and all(isinstance(i, str) and i for i in e.item_ids), e
            assert isinstance(e.reason, str) and e.reason.strip(), e
            assert e.turn_id in turn_ids or (e.turn_id == "" and e.step == len(tiny_conv.turns) + 1), e
            json.dumps(e.data)
        assert workbench.is_ingested(name, tiny_conv)

    def test_retrieve_returns_a_consistent_trace(self, name, built, tiny_conv) -> None:
        system, _ = built
        turn_ids = {t.turn_id for t in tiny_conv.turns}
        for q in tiny_conv.questions:
            tr = system.retrieve(q)
            assert isinstance(tr, Trace) and tr.system == name and tr.question == q.text
            assert tr.items, f"{name} retrieved nothing for {q.text!r}"
            assert any(i.turn_ids for i in tr.items)
            for it in tr.items:
                assert set(it.turn_ids) <= turn_ids, it
            assert len(set(tr.stages)) == len(tr.stages)
            for c in tr.candidates:
                assert c.stage in tr.stages, f"candidate stage {c.stage!r} not in {tr.stages}"
                assert set(c.turn_ids) <= turn_ids and c.rank >= 1
                assert c.kept or c.reason, f"{name}: dropped candidate {c.id} at {c.stage} without a reason"
            assert Trace.from_dict(json.loads(json.dumps(tr.to_dict(), default=str))) == tr

    def test_every_registered_retriever_works(self, name, workbench, tiny_conv) -> None:
        workbench.ingest(name, tiny_conv)
        for retriever in retriever_names():
            tr = workbench.system(name, tiny_conv, retriever=retriever).retrieve(tiny_conv.questions[1])
            assert tr.retriever == retriever and tr.items, f"{name} with the {retriever} retriever"

    def test_answer_has_text_trace_and_usage(self, name, built, tiny_conv) -> None:
        system, _ = built
        ans = system.answer(tiny_conv.questions[0])
        assert isinstance(ans, Answer) and isinstance(ans.text, str) and ans.text.strip()
        assert ans.trace.items and ans.trace.context
        assert "answer" in ans.usage and ans.usage["answer"].calls >= 1
        assert set(ans.usage) <= {"construction", "retrieval", "answer", "judge"}
        json.dumps(ans.to_dict(), default=str)

    def test_restore_gives_the_same_retrieval(self, name, built, workbench, tiny_conv) -> None:
        system, _ = built
        restored = workbench.system(name, tiny_conv)
        assert restored is not system
        for q in tiny_conv.questions:
            a, b = system.retrieve(q), restored.retrieve(q)
            assert [i.id for i in b.items] == [i.id for i in a.items]
            assert b.context_turn_ids() == a.context_turn_ids()
            assert (b.context or "") == (a.context or "")
