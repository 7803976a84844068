"""The ingest driver owns its IngestContext (issue 25 item 3): it tells a system where sessions end, owns the
work issued ahead and drops it on stop / failure, and counts failed and degraded calls from the calls its
ingest made; a system sees a narrow protocol and a store interface; a system written to the old
`ingest(turn)` protocol still ingests, with a DeprecationWarning."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memcore.embed import HashingEmbedder
from memcore.ingest import ingest_conversation
from memcore.ingest.context import IngestContext, LegacySystem, ends_session
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.systems import get_system, make_config
from memcore.systems.base import BaseSystem, Runtime
from memcore.systems.protocol import MemorySystem, SystemConfig, SystemStore, TurnContext, memory_space
from memcore.types import Conversation, Event, Turn
from memcore.workbench import Workbench
from tests.conftest import make_conversation

ROOT = Path(__file__).resolve().parents[1]


class Recorder:
    """A system implementing the protocol alone (no BaseSystem): it records what the driver tells it."""

    name = "recorder"

    def __init__(self, runtime: Runtime, conv: Conversation) -> None:
        self.config, self.conv, self.embedder = SystemConfig(), conv, runtime.embedder
        self.seen: list[tuple[str, bool]] = []

    @property
    def space(self) -> str:
        return memory_space(self.name, self.config, self.embedder.name, ("offline", "none"))

    def ingest(self, turn: Turn, ctx: TurnContext) -> list[Event]:
        self.seen.append((turn.turn_id, ctx.session_end))
        return []

    def finish(self, ctx: TurnContext) -> list[Event]:
        self.seen.append(("end", ctx.session_end))
        return []

    def pending_batch(self) -> Any:
        return [], [], {}

    def restore(self, at_step: int | None = None) -> None:
        pass

    def embed_texts(self, texts: Any) -> np.ndarray:
        return self.embedder.embed(list(texts))

    def retrieve(self, question: Any) -> Any:
        raise NotImplementedError

    def answer(self, question: Any) -> Any:
        raise NotImplementedError


def test_the_driver_says_which_turn_ends_its_session(workbench) -> None:
    conv = make_conversation()  # session 1: D1:1..D1:6, session 2: D2:1..D2:4
    rec = Recorder(workbench.runtime, conv)
    assert isinstance(rec, MemorySystem)
    assert ingest_conversation(rec, workbench.store, workbench.ledger).complete
    assert [t for t, end in rec.seen if end] == ["D1:6", "D2:4", "end"]
    assert len(rec.seen) == len(conv.turns) + 1
    assert [ends_session(conv, t) for t in conv.turns].count(True) == 2


def test_a_resumed_ingest_tells_the_same_boundaries(workbench) -> None:
    conv = make_conversation()
    first = Recorder(workbench.runtime, conv)
    ingest_conversation(first, workbench.store, workbench.ledger, stop_after=6)
    rest = Recorder(workbench.runtime, conv)
    ingest_conversation(rest, workbench.store, workbench.ledger)
    assert first.seen[-1] == ("D1:6", True) and rest.seen[0] == ("D2:1", False) and rest.seen[-2] == ("D2:4", True)


class Pending:
    """Work issued ahead: cancelled or not."""

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def test_work_issued_ahead_belongs_to_the_ingest_and_is_dropped_when_it_stops(workbench) -> None:
    conv = make_conversation()
    issued: list[Pending] = []

    class AheadSystem(Recorder):
        def ingest(self, turn: Turn, ctx: TurnContext) -> list[Event]:
            work = Pending()
            ctx.ahead.put(turn.turn_id, work)  # issued for a later turn, never used
            issued.append(work)
            return super().ingest(turn, ctx)

    rep = ingest_conversation(AheadSystem(workbench.runtime, conv), workbench.store, workbench.ledger, stop_after=3)
    assert rep.turns_done == 3 and len(issued) == 3 and all(w.cancelled for w in issued)


def test_degraded_calls_count_the_fallbacks_of_work_issued_ahead(tmp_path) -> None:
    """MemWeaver's extraction chain is work issued ahead (run by a detached client): its fallbacks count. The old
    count (the system's own client's) said 0 for every unusable mw_entities reply replaced by the fallback."""
    fake = FakeLLM(by_role={"mw_entities": "no json here"}, fallback="offline")  # MemWeaver's other roles: offline
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing",
                            llm_unusable="fallback"), embedder=HashingEmbedder(), provider=fake)
    conv = make_conversation()
    rep = wb.ingest("memweaver", conv)
    wb.ledger.flush()
    calls = wb.store.llm_calls(system="memweaver", conv_id=conv.id)
    fallbacks = int((calls["outcome"] == "fallback").sum())
    assert rep.complete and fallbacks >= len(conv.turns)  # one mw_entities per turn, at least
    assert rep.degraded_calls == fallbacks


def test_failed_calls_are_those_of_this_ingest(tmp_path) -> None:
    """A call of work issued ahead fails for good (MemWeaver's extraction chain): one failed call, and the
    ingest stops there with nothing built from it."""
    fake = FakeLLM(by_role={"mw_entities": RuntimeError("model down")})
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing"),
                   embedder=HashingEmbedder(), provider=fake)
    rep = wb.ingest("memweaver", make_conversation())
    assert rep.error and "model down" in rep.error and rep.failed_calls == 1 and rep.committed_step == 0


class OldStyle(Recorder):
    """A system written to the protocol of memcore 0.1.0: ingest(turn), finish(), its own discard_ahead."""

    discarded = 0

    def ingest(self, turn: Turn) -> list[Event]:  # type: ignore[override]
        self.seen.append((turn.turn_id, False))
        return []

    def finish(self) -> list[Event]:  # type: ignore[override]
        self.seen.append(("end", True))
        return []

    def discard_ahead(self) -> None:
        self.discarded += 1


def test_a_system_written_to_the_old_protocol_still_ingests_with_a_deprecation_warning(workbench) -> None:
    conv = make_conversation()
    old = OldStyle(workbench.runtime, conv)
    with pytest.warns(DeprecationWarning, match=r"ingest\(turn\).*ingest\(turn, ctx\)"):
        rep = ingest_conversation(old, workbench.store, workbench.ledger, stop_after=4)
    assert rep.turns_done == 4 and old.discarded == 1  # its own run-ahead is dropped on stop
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert ingest_conversation(OldStyle(workbench.runtime, conv), workbench.store, workbench.ledger).complete
    assert isinstance(LegacySystem(old), MemorySystem)


def test_the_protocol_is_narrow() -> None:
    members = {n for n in vars(MemorySystem) if not n.startswith("_")} | set(MemorySystem.__annotations__)
    assert members == {"name", "config", "conv", "space", "ingest", "finish", "pending_batch", "restore",
                       "embed_texts", "retrieve", "answer"}


def _store_calls() -> set[str]:
    """The store methods memcore/systems calls (`<x>.store.<method>(...)`)."""
    out = set()
    for path in (ROOT / "memcore" / "systems").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "store"):
                out.add(node.attr)
    return out


def test_a_system_sees_a_store_interface_that_lancestore_implements(workbench) -> None:
    calls = _store_calls()
    assert calls and calls <= {n for n in vars(SystemStore) if not n.startswith("_")}, calls
    assert isinstance(workbench.store, SystemStore) and issubclass(LanceStore, SystemStore)
    assert Runtime.__annotations__["store"] in ("SystemStore", SystemStore)


def test_base_system_takes_work_ahead_from_the_ingests_pool(workbench, tiny_conv) -> None:
    sys_: BaseSystem = get_system("naive_rag")(workbench.runtime, tiny_conv, make_config("naive_rag"))
    ctx = IngestContext(tiny_conv, workbench.ledger)
    sys_.ingest(tiny_conv.turns[0], ctx.turn(tiny_conv.turns[0]))
    sys_.issue_ahead("k", lambda client: 42)
    assert "k" in ctx.ahead
    ctx.discard_ahead()
    assert "k" not in ctx.ahead and sys_.take_ahead("k", lambda client: 7) == 7  # re-issued after a discard


def test_the_contract_runs_a_system_written_to_the_old_protocol(tmp_path, monkeypatch) -> None:
    """A plugin written to the old protocol (a BaseSystem subclass overriding ingest(turn) and finish()) keeps
    the contract, with the DeprecationWarning that says what to change."""
    from memcore.systems import SYSTEMS
    from memcore.testing import CHECKS, contract_case

    class OldRag(get_system("naive_rag")):  # type: ignore[misc, valid-type]
        name = "old_rag"

        def ingest(self, turn: Turn) -> list[Event]:  # type: ignore[override]
            return super().ingest(turn, TurnContext(False, self._ahead))

        def finish(self) -> list[Event]:  # type: ignore[override]
            return super().finish(TurnContext(True, self._ahead))

    monkeypatch.setitem(SYSTEMS, "old_rag", OldRag)
    with pytest.warns(DeprecationWarning, match="old_rag"):
        CHECKS["stop_and_resume_through_the_protocol"](contract_case("old_rag", tmp_path))
