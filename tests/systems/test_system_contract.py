"""The MemorySystem contract, run for every registered system (systems added later, and installed
plugins, are covered too).

The checks live in the library (memcore.testing.contract) so that a plugin's own test suite runs
the same ones; here each (system, check) pair is one test on a fresh store. Each system ingests the
tiny conversation (hashing embedder, offline engine, temporary store) and must: emit well-formed
events; retrieve a Trace whose items and candidates point at real turns, with candidate stages that
the trace declares; work with every registered retriever; answer with text, a trace and per-stage
usage holding an "answer" stage; give the same retrieval after a restore from the store; and draw
its view's structure into the export.
"""

from __future__ import annotations

import pytest

from memcore.systems import builtin_systems, get_system, load_all
from memcore.testing import CHECKS, ContractViolation, contract_case, run_contract

SYSTEMS = list(load_all())


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("name", SYSTEMS)
def test_system_contract(name: str, check: str, tmp_path) -> None:
    CHECKS[check](contract_case(name, tmp_path))


def test_every_built_in_system_is_checked() -> None:
    assert set(builtin_systems()) <= set(SYSTEMS)
    assert {"full_context", "naive_rag", "naive_rag_session", "com", "recmem", "memcot", "xmemory",
            "memweaver"} <= set(builtin_systems())


def test_a_broken_system_fails_the_contract_naming_each_check(monkeypatch) -> None:
    """The shipped checks catch real breakage: a system whose retrieval points at unknown turns fails
    that check with a message naming it and the check; the checks it keeps pass."""
    from memcore.systems import SYSTEMS as REGISTRY
    from memcore.types import Trace

    base = get_system("naive_rag")

    def retrieve(self, question) -> Trace:
        tr = base.retrieve(self, question)
        for it in tr.items:
            it.turn_ids = ["D9:99"]
        return tr

    broken = type("BrokenSystem", (base,), {"name": "broken_rag", "title": "Broken", "retrieve": retrieve})
    monkeypatch.setitem(REGISTRY, "broken_rag", broken)
    with pytest.raises(ContractViolation) as info:
        run_contract("broken_rag", ["registered_and_configurable", "retrieve_returns_a_consistent_trace",
                                    "answer_has_text_trace_and_usage"])
    msg = str(info.value)
    assert "broken_rag breaks the MemorySystem contract" in msg
    assert "retrieve_returns_a_consistent_trace: ContractViolation: broken_rag: item on unknown turns" in msg
    assert "registered_and_configurable" not in msg and "answer_has_text_trace_and_usage" not in msg
    assert run_contract("naive_rag", ["registered_and_configurable"]) == ["registered_and_configurable"]
