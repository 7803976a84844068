"""Workbench.hold: a finished memory restored ahead of a question (Ask's page does it in the background while the
question is written). The ask then restores nothing and answers exactly as an ask that restored the memory itself;
an ask while the hold is under way in another thread waits for it and uses it (one restore); an unfinished memory
is neither built nor held."""

from __future__ import annotations

import threading
import time

import pytest

from memcore.systems.base import BaseSystem
from memcore.testing import contract_workbench
from memcore.types import Answer
from tests.conftest import make_conversation

SYSTEMS = ["naive_rag", "naive_rag_session", "com", "memcot", "xmemory", "memweaver"]


def shown(a: Answer) -> tuple:
    """What Ask shows of an answer (its card, context table, structure, cost), without the measured latency."""
    return (a.text, a.error, a.trace.items, a.trace.structure, a.trace.candidates, a.trace.notes,
            {k: (u.prompt_tokens, u.completion_tokens) for k, u in a.usage.items()})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("hold")
    conv = make_conversation()
    wb = contract_workbench(root)
    for name in SYSTEMS:
        wb.ingest(name, conv)
    return root, conv


def test_a_held_memory_answers_as_a_restored_one_without_restoring_again(built, monkeypatch):
    root, conv = built
    q = conv.questions[0]
    plain = contract_workbench(root)  # a fresh process' workbench: the ask restores each memory itself
    before = {name: shown(plain.ask(name, conv, q)) for name in SYSTEMS}
    ahead = contract_workbench(root)
    assert all(ahead.hold(name, conv) for name in SYSTEMS)
    restores = []
    real = BaseSystem.restore
    monkeypatch.setattr(BaseSystem, "restore", lambda self, *a, **k: (restores.append(self.name), real(self, *a, **k)))
    after = {name: shown(ahead.ask(name, conv, q)) for name in SYSTEMS}
    assert restores == []  # every memory was held: the asks restored nothing
    assert after == before
    assert ahead.hold("naive_rag", conv)  # held already: nothing to do


def test_an_ask_during_a_hold_in_another_thread_waits_for_it_and_restores_once(built, monkeypatch):
    root, conv = built
    wb = contract_workbench(root)
    restores = []
    real = BaseSystem.restore

    def slow(self, *a, **k):
        restores.append(self.name)
        time.sleep(0.5)
        return real(self, *a, **k)

    monkeypatch.setattr(BaseSystem, "restore", slow)
    t = threading.Thread(target=wb.hold, args=("memweaver", conv))
    t.start()
    time.sleep(0.1)  # the hold's restore is under way
    ans = wb.ask("memweaver", conv, conv.questions[0])
    t.join()
    assert restores == ["memweaver"] and ans.text


def test_an_unfinished_memory_is_neither_built_nor_held(tmp_path):
    conv = make_conversation()
    wb = contract_workbench(tmp_path)
    assert wb.hold("com", conv) is False
    assert not wb.is_ingested("com", conv) and wb.store.checkpoint(wb.space("com", conv), conv.id) is None
