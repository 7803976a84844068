"""What one ingest owns besides the system (memcore/ingest.py drives it): session boundaries, the pool of
LLM work issued ahead, and the LLM-call records (handed to the store before each checkpoint and rollback;
the failed and degraded calls among those made while it runs). And `adapt`, which lets the ingest driver
feed a system written to the protocol before TurnContext (`ingest(turn)`, `finish()`), with a warning.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memcore.llm.ledger import CallRecord, UsageLedger
from memcore.systems.protocol import MemorySystem, RunAhead, TurnContext
from memcore.types import Conversation, Event, Turn

OPEN = "memcore_live_open"  # Conversation.metadata key: a live conversation still growing (memcore.live)


def is_open(conv: Conversation) -> bool:
    """Whether `conv` is a live conversation that is still growing: its newest turn ends no session (the next
    message may continue it) and an ingest stops after its turns without the end-of-conversation step."""
    return conv.metadata.get(OPEN) is True


def ends_session(conv: Conversation, turn: Turn) -> bool:
    """Whether `turn` is the last of its session (the next turn has another session, or there is none; in an
    open live conversation the newest turn does not: its session goes on)."""
    nxt = conv.turns[turn.index + 1] if turn.index + 1 < len(conv.turns) else None
    return (nxt is None and not is_open(conv)) or (nxt is not None and nxt.session != turn.session)


class IngestContext:
    """One ingest of one system's memory of `conv`: what it tells the system with each turn (TurnContext:
    the session boundary, its RunAhead) and the bookkeeping of the system's LLM calls in `ledger`."""

    def __init__(self, conv: Conversation, ledger: UsageLedger) -> None:
        self.conv = conv
        self.ledger = ledger
        self.ahead = RunAhead()
        self.calls: list[CallRecord] = []  # the LLM calls booked while `counting`

    def turn(self, turn: Turn) -> TurnContext:
        """The context the system gets with `turn`."""
        return TurnContext(session_end=ends_session(self.conv, turn), ahead=self.ahead)

    def end(self) -> TurnContext:
        """The context the system gets with `finish` (the conversation's end ends its last session)."""
        return TurnContext(session_end=True, ahead=self.ahead)

    @contextmanager
    def counting(self) -> Iterator[None]:
        """Collect the LLM-call records booked in this thread while the block runs (the system's calls,
        including work issued ahead, which is booked where its result is used), whatever other ingests
        sharing the ledger book meanwhile."""
        with UsageLedger.collect() as records:
            self.calls = records
            yield

    def flush_calls(self) -> None:
        """Hand the ledger's unstored call records to the store (before a checkpoint or a rollback)."""
        self.ledger.flush()

    def discard_ahead(self) -> None:
        """Drop the work issued ahead and not used (an ingest that stops or fails): a resume redoes it."""
        self.ahead.discard()

    def failed_calls(self) -> int:
        """Calls that failed for good while counting (one per call, however many attempts it took)."""
        return sum(1 for r in self.calls if not r.ok and r.attempt == 1)

    def degraded_calls(self) -> int:
        """Unusable replies replaced by the role's fallback while counting (llm_unusable=fallback)."""
        return sum(1 for r in self.calls if r.outcome == "fallback")


class _Discard:
    """A RunAhead entry that calls a pre-TurnContext system's own `discard_ahead` when the ingest drops its work."""

    def __init__(self, system: Any) -> None:
        self.system = system

    def cancel(self) -> None:
        self.system.discard_ahead()


class LegacySystem:
    """A system written to the protocol before TurnContext (memcore 0.1.0: `ingest(turn)`, `finish()`, and its
    own `discard_ahead`), seen through the current one. Deprecated: adapt the system (see `adapt`)."""

    def __init__(self, system: Any) -> None:
        self._system = system

    def __getattr__(self, name: str) -> Any:
        return getattr(self._system, name)

    def ingest(self, turn: Turn, ctx: TurnContext) -> list[Event]:
        """`ingest(turn)` of the wrapped system (it finds session boundaries itself)."""
        self._watch(ctx)
        return self._system.ingest(turn)

    def finish(self, ctx: TurnContext) -> list[Event]:
        """`finish()` of the wrapped system."""
        self._watch(ctx)
        return self._system.finish()

    def _watch(self, ctx: TurnContext) -> None:
        if hasattr(self._system, "discard_ahead") and _Discard not in ctx.ahead:
            ctx.ahead.put(_Discard, _Discard(self._system))


def adapt(system: Any) -> MemorySystem:
    """`system` itself, or, when its `ingest` takes the turn alone (the protocol before TurnContext), a
    LegacySystem around it, with a DeprecationWarning saying what to change."""
    try:
        params = [p for p in inspect.signature(system.ingest).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # no signature to read: assume the current protocol
        return system
    if len(params) != 1:
        return system
    warnings.warn(
        f"memory system {getattr(system, 'name', type(system).__name__)!r} implements ingest(turn) and finish(), "
        "the MemorySystem protocol of memcore 0.1.0; the ingest driver now calls ingest(turn, ctx) and finish(ctx) "
        "with a memcore.systems.protocol.TurnContext (ctx.session_end: the turn ends its session; ctx.ahead: the "
        "ingest's pool of work issued ahead) and no longer uses store, flush_calls, llm_mark, failed_calls or "
        "degraded_calls. It is adapted for now (memcore.ingest.context.LegacySystem); take the ctx, or subclass "
        "BaseSystem and override on_turn (self.session_end), before this adapter is removed.",
        DeprecationWarning, stacklevel=3)
    return LegacySystem(system)
