"""LiveMemory: one live conversation and the memory systems that remember it, one message at a time.

A live conversation is stored like any other (source "jsonl", so replay, ask, eval and export work on it) and
marked open (memcore.ingest.context.OPEN): its turns follow the JSONL chat format's rules (session 1 unless
given, the first message of a session dated, "D<session>:<n>" ids unless the message gives its own), so the
memory a live session builds equals `memcore ingest` of the same messages written as a JSONL file and
followed (`memcore ingest --follow`); the newest turn ends no session and no end-of-conversation step runs
while the conversation is open. Each system's memory is built by the ingest driver under its lease, with the
workbench's ledger and provider: a failed LLM call keeps the memory at its last checkpoint (the message stays
stored as a turn) and raises LiveError naming the fix; the next call resumes from there.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from memcore.datasets.locomo import to_iso
from memcore.errors import DatasetError, LLMError, MemcoreError
from memcore.ingest import IngestReport
from memcore.ingest.context import OPEN
from memcore.live.log import ToolCall, log_calls
from memcore.llm.ledger import UsageLedger
from memcore.llm.redact import redact
from memcore.systems.base import render_context
from memcore.types import Answer, Conversation, Event, Question, Trace, Turn
from memcore.workbench import Workbench

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
APPEND_WAIT_S = 60.0  # another process appending to the same conversation holds it this long at most


class LiveError(MemcoreError):
    """A live call that could not be done (an LLM call failed, a memory is busy): one line naming the fix."""


def live_conv_id(session: str) -> str:
    """The conversation id of an agent session id (`live-<session>`); ValueError for an id that is not 1-64
    letters, digits, '_', '.', ':' or '-'."""
    if not isinstance(session, str) or not _ID.match(session):
        raise ValueError(f"session {session!r}: give 1-64 letters, digits, '_', '.', ':' or '-' (starting with a "
                         "letter or digit)")
    return f"live-{session}"


@dataclass
class Remembered:
    """What `remember` did: the stored turn, whether it was new (False: a resent message id), and per system the
    events the turn caused and the memory's item counts."""

    turn: Turn
    new: bool
    events: dict[str, list[Event]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    call_id: str = ""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


class LiveMemory:
    """A live conversation `conv_id` in the workbench's store and the systems (variant names) remembering it."""

    def __init__(self, wb: Workbench, conv_id: str, systems: list[str], client: str = "") -> None:
        if not systems:
            raise ValueError("give at least one system")
        self.wb = wb
        self.conv_id = conv_id
        self.systems = [wb.variant(s).name for s in systems]  # ValueError (one line) for a bad name
        self.client = client

    # ------------------------------------------------------------ conversation
    def conversation(self) -> Conversation:
        """The stored conversation (refreshed from the store: another process may have added turns), or a new
        empty open one."""
        store = self.wb.store
        store.refresh()
        if self.conv_id in set(store.conversations()["conv_id"]):
            return store.load_conversation(self.conv_id)
        return Conversation(id=self.conv_id, speakers=[], turns=[], source="jsonl", metadata={OPEN: True})

    def _new_turn(self, conv: Conversation, speaker: str, text: str, time_: str | None, session: int | None,
                  message_id: str | None) -> Turn:
        last = conv.turns[-1] if conv.turns else None
        s = session if session is not None else (last.session if last else 1)
        if s < (last.session if last else 1) or s > (last.session + 1 if last else 1):
            raise ValueError(f"session {s}: the next message may stay in session {last.session if last else 1} "
                             f"or start session {(last.session + 1) if last else 1}")
        first = next((t for t in conv.turns if t.session == s), None)
        date = time_ or ("" if first else _now())
        try:
            iso = to_iso(date, "message", "time") if date else first.timestamp  # type: ignore[union-attr]
        except DatasetError:
            raise ValueError(f"time {time_!r}: write it like '2024-03-01 10:00' (ISO 8601 works)") from None
        n = sum(1 for t in conv.turns if t.session == s) + 1
        tid = message_id or f"D{s}:{n}"
        if message_id is not None and not _ID.match(message_id):
            raise ValueError(f"message_id {message_id!r}: give 1-64 letters, digits, '_', '.', ':' or '-'")
        return Turn(conv_id=conv.id, turn_id=tid, index=len(conv.turns), session=s,
                    session_date=first.session_date if first else date, timestamp=iso, speaker=speaker, text=text)

    def append(self, turns: list[Turn]) -> Conversation:
        """Store turns after the conversation's stored ones (embedded into the shared turn index first, then the
        conversation row, so a kill between the two leaves a turn row the next append replaces)."""
        store = self.wb.store
        conv = self.conversation()
        conv = replace(conv, turns=[*conv.turns, *turns],
                       speakers=list(dict.fromkeys([*conv.speakers, *(t.speaker for t in turns)])),
                       metadata={**conv.metadata, OPEN: True})
        store.drop_turns_from(conv.id, len(conv.turns) - len(turns))
        if turns:
            vecs = self.wb.embedder.embed([t.embed_text for t in turns])
            store.save_turns(turns, vecs)
        store.save_conversation(conv, extend=True)
        return conv

    def remember(self, speaker: str, text: str, time_: str | None = None, session: int | None = None,
                 message_id: str | None = None) -> Remembered:
        """Store one message as the conversation's next turn and build every system's memory of it.

        A `message_id` already stored with the same speaker and text is not stored again (a client resending
        after a reconnect): the memories catch up if they were behind. ValueError (one line) for bad arguments;
        LiveError when a memory could not be built (the turn stays stored; the next call resumes)."""
        t0 = time.perf_counter()
        if not speaker.strip() or not text.strip():
            raise ValueError("give a non-empty speaker (or role) and text")
        store = self.wb.store
        with store.lease("live-append", self.conv_id, f"live conversation {self.conv_id}", timeout=APPEND_WAIT_S):
            conv = self.conversation()
            old = next((t for t in conv.turns if message_id is not None and t.turn_id == message_id), None)
            if old is not None and (old.speaker, old.text) != (speaker, text):
                raise ValueError(f"message_id {message_id!r} is turn {old.index + 1} with another text; give a new id")
            turn = old or self._new_turn(conv, speaker, text, time_, session, message_id)
            if old is None:
                conv = self.append([turn])
        with UsageLedger.collect() as records:
            reports = self.catch_up(conv)
        out = Remembered(turn=turn, new=old is None)
        for name, rep in reports.items():
            out.counts[name] = rep.counts
            out.events[name] = [e for e in self.wb.events(name, conv) if e.step == turn.index + 1] if out.new else []
        call = ToolCall(self.conv_id, "remember", ",".join(self.systems), (time.perf_counter() - t0) * 1000,
                        step=len(conv.turns), client=self.client,
                        request={"speaker": speaker, "text": text, "time": time_, "session": session,
                                 "message_id": message_id},
                        result={"turn_id": turn.turn_id, "turn": turn.index + 1, "new": out.new,
                                "events": {k: len(v) for k, v in out.events.items()}, "counts": out.counts},
                        calls=[r.to_dict() for r in records])
        log_calls(store, [call])
        out.call_id = call.id
        return out

    def catch_up(self, conv: Conversation | None = None) -> dict[str, IngestReport]:
        """Ingest every stored turn not yet in each system's memory (resumes after a kill); LiveError naming the
        fix when one failed (its memory stays at its last checkpoint)."""
        conv = conv or self.conversation()
        out: dict[str, IngestReport] = {}
        if not conv.turns:
            return out
        try:
            for name in self.systems:
                rep = self.wb.ingest(name, conv, wait_timeout=APPEND_WAIT_S)
                if rep.error:
                    raise LiveError(f"{rep.message} (the message is stored as turn {len(conv.turns)}; fix the "
                                    "provider and call again: memory resumes from its last checkpoint)")
                out[name] = rep
        finally:
            self.wb.ledger.flush()
        return out

    # ------------------------------------------------------------------ reads
    def _question(self, conv: Conversation, query: str) -> Question:
        if not query.strip():
            raise ValueError("give a non-empty query")
        return Question(id="live", conv_id=conv.id, text=query, answer="")

    def _ready(self) -> Conversation:
        conv = self.conversation()
        if not conv.turns:
            raise ValueError(f"conversation {self.conv_id} has no messages yet: call remember first")
        self.catch_up(conv)
        return conv

    def recall(self, query: str) -> dict[str, tuple[Trace, str]]:
        """Per system: the context it retrieves for `query` (its trace) and the trace id (the stored tool
        call's). LLM calls made while retrieving go to the ledger and the stored call."""
        t0 = time.perf_counter()
        conv = self._ready()
        q = self._question(conv, query)
        out: dict[str, tuple[Trace, str]] = {}
        logged: list[ToolCall] = []
        for name in self.systems:
            t1 = time.perf_counter()
            with UsageLedger.collect() as records, UsageLedger.variant(name):
                try:
                    trace = self.wb.system(name, conv).retrieve(q)
                except LLMError as e:
                    self._fail("recall", name, query, e, t1)
                    raise LiveError(f"recall with {name} failed: {e}") from None
            trace.variant = name
            if not trace.context:  # as the answer step renders it (BaseSystem.answer)
                trace.context = render_context(trace.items)
            call = ToolCall(self.conv_id, "recall", name, (time.perf_counter() - t1) * 1000, step=len(conv.turns),
                            request={"query": query}, result={"trace": trace.to_dict()},
                            calls=[r.to_dict() for r in records], client=self.client)
            logged.append(call)
            out[name] = (trace, call.id)
        if len(logged) == 1:
            logged[0].ms = (time.perf_counter() - t0) * 1000  # one system: the whole call, catch-up included
        self.wb.ledger.flush()
        log_calls(self.wb.store, logged)
        return out

    def answer(self, query: str) -> dict[str, tuple[Answer, str]]:
        """Per system: its answer to `query` from its memory (the configured provider's reader; the offline
        engine's when offline) and the trace id."""
        t0 = time.perf_counter()
        conv = self._ready()
        q = self._question(conv, query)
        out: dict[str, tuple[Answer, str]] = {}
        logged: list[ToolCall] = []
        for name in self.systems:
            t1 = time.perf_counter()
            with UsageLedger.collect() as records:
                try:
                    ans = self.wb.ask(name, conv, q)
                except LLMError as e:
                    self._fail("answer", name, query, e, t1)
                    raise LiveError(f"answer with {name} failed: {e}") from None
            call = ToolCall(self.conv_id, "answer", name, (time.perf_counter() - t1) * 1000, step=len(conv.turns),
                            request={"query": query}, result={"answer": ans.to_dict(),
                                                              "provider": self.wb.provider_label},
                            calls=[r.to_dict() for r in records], client=self.client)
            logged.append(call)
            out[name] = (ans, call.id)
        if len(logged) == 1:
            logged[0].ms = (time.perf_counter() - t0) * 1000
        self.wb.ledger.flush()
        log_calls(self.wb.store, logged)
        return out

    def _fail(self, tool: str, name: str, query: str, err: Exception, t0: float) -> None:
        self.wb.ledger.flush()
        log_calls(self.wb.store, [ToolCall(self.conv_id, tool, name, (time.perf_counter() - t0) * 1000, ok=False,
                                           error=str(err), request={"query": query}, client=self.client)])

    def status(self) -> dict[str, Any]:
        """The conversation's turns, its last message id, and per system the built step and item counts."""
        conv = self.conversation()
        out: dict[str, Any] = {"conversation": conv.id, "turns": len(conv.turns),
                               "last_message_id": conv.turns[-1].turn_id if conv.turns else None,
                               "provider": self.wb.provider_label, "store": redact(self.wb.store.uri), "systems": {}}
        for name in self.systems:
            mem = self.wb.memory(name, conv)
            step, done = mem.status()
            out["systems"][name] = {"built_turns": min(step, len(conv.turns)), "complete": done,
                                    "items": mem.kind_counts()}
        return out
