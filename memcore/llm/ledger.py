"""The usage ledger: one record per LLM call, summed into Usage by stage."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

from memcore.types import Usage


@dataclass
class CallRecord:
    """One LLM call as the ledger keeps it."""

    role: str
    stage: str
    system: str = ""
    conv_id: str = ""
    provider: str = ""
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cache_hit: bool = False
    ok: bool = True
    error: str = ""
    step: int = 0  # ingest step (turn index + 1) for construction calls, else 0
    attempt: int = 1  # 2 for the one JSON-repair call that follows a malformed reply
    ts: float = field(default_factory=time.time)  # when the call ended (its start: ts - latency_ms / 1000)
    prompt: str = ""  # the messages sent, as prompt_text renders them (the offline engine: its inputs)
    completion: str = ""  # the reply text (the offline engine: its output; a cache hit: the cached reply)
    # the response_format sent: "json_schema", "json_object+schema" (llama.cpp grammar), "json_object" (no
    # schema), "text"; "offline" for the offline engine (no request); "" in older rows
    request_format: str = ""
    # what became of the reply: "ok", "empty" (valid and empty, where the role may return nothing),
    # "malformed" (repair asked), "repaired", "unusable" (failed after the repair), "fallback"
    # (llm_unusable=fallback), "error" (no reply); "" in older rows
    outcome: str = ""
    # the canonical variant name (memcore.systems.variants) the call was made for: the full variant for query
    # calls, the memory's construction variant for ingest calls; filled from `UsageLedger.variant(name)` when
    # booked, else the system name (so older rows and calls outside a variant read as the plain system)
    variant: str = ""
    depth: int = 0  # position on the longest chain of dependent calls before it (not stored)

    def to_dict(self) -> dict:
        """The record as a `llm_calls` row."""
        d = {f.name: getattr(self, f.name) for f in _FIELDS if f.name != "depth"}  # flat fields (asdict: a deepcopy)
        d["variant"] = self.variant or self.system
        return d


_FIELDS = fields(CallRecord)


def prompt_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """Chat messages as one text: each message's role in brackets, then its content."""
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages)


# Lists that also receive the records added in this context (see UsageLedger.collect).
_COLLECTORS: contextvars.ContextVar[tuple[list[CallRecord], ...]] = contextvars.ContextVar(
    "memcore_ledger_collectors", default=())
# The variant name the records booked in this context are made for (see UsageLedger.variant).
_VARIANT: contextvars.ContextVar[str] = contextvars.ContextVar("memcore_ledger_variant", default="")


class UsageLedger:
    """Records every LLM call; `mark()` / `since(mark)` isolate one operation's calls.

    An optional `sink(records)` receives records in batches (the store persists them). With keep_text=False
    (Settings.ledger_text, $MEMCORE_LEDGER_TEXT=0) every record's prompt and completion are emptied as it
    arrives, before the ledger, its collectors or the sink see it; role, stage, tokens, latency, cache hit
    and error stay.
    """

    def __init__(self, sink: Callable[[list[CallRecord]], None] | None = None, batch: int = 200,
                 keep_text: bool = True) -> None:
        self.records: list[CallRecord] = []
        self.keep_text = keep_text
        self._sink = sink
        self._batch = batch
        self._flushed = 0
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()

    def add(self, rec: CallRecord) -> None:
        """Append one record (thread-safe)."""
        self.extend([rec])

    def extend(self, recs: list[CallRecord]) -> None:
        """Append records in order, as one block (thread-safe); active collectors get them too."""
        if not recs:
            return
        if not self.keep_text:
            for r in recs:
                r.prompt = r.completion = ""
        variant = _VARIANT.get()
        if variant:
            for r in recs:
                r.variant = r.variant or variant
        with self._lock:
            self.records.extend(recs)
            pending = len(self.records) - self._flushed
        for sink in _COLLECTORS.get():
            sink.extend(recs)
        if self._sink is not None and pending >= self._batch:
            self.flush()

    @staticmethod
    @contextmanager
    def collect() -> Iterator[list[CallRecord]]:
        """Collect the records added in this thread/context while the block runs (one question's usage,
        exact even when other threads add records to the same ledger meanwhile)."""
        got: list[CallRecord] = []
        token = _COLLECTORS.set((*_COLLECTORS.get(), got))
        try:
            yield got
        finally:
            _COLLECTORS.reset(token)

    @staticmethod
    @contextmanager
    def variant(name: str) -> Iterator[None]:
        """Record `name` (a canonical variant name) as the variant of every call booked in this thread/context
        while the block runs (records booked elsewhere keep theirs; an inner block wins)."""
        token = _VARIANT.set(name)
        try:
            yield
        finally:
            _VARIANT.reset(token)

    def flush(self) -> None:
        """Hand unflushed records to the sink (one flush at a time, in order)."""
        if self._sink is None:
            return
        with self._flush_lock:
            with self._lock:
                todo = self.records[self._flushed :]
                self._flushed = len(self.records)
            if todo:
                self._sink(todo)

    def mark(self) -> int:
        """A position to pass to `since` later."""
        return len(self.records)

    def since(self, mark: int) -> list[CallRecord]:
        """Records added after `mark`."""
        return self.records[mark:]

    def total(self, records: Iterable[CallRecord] | None = None, **where: str) -> Usage:
        """Sum of records (all by default) matching every `field=value` in `where`."""
        return summarize(r for r in (self.records if records is None else records)
                         if all(getattr(r, k) == v for k, v in where.items()))


def summarize(records: Iterable[CallRecord]) -> Usage:
    """Sum call records into one Usage."""
    u = Usage()
    for r in records:
        u.prompt_tokens += r.prompt_tokens
        u.completion_tokens += r.completion_tokens
        u.calls += 0 if r.cache_hit else 1
        u.cache_hits += 1 if r.cache_hit else 0
        u.latency_ms += r.latency_ms
    return u


PROBE_STAGE = "probe"  # the structured-outputs probe (once per endpoint and model and process)


def by_stage(records: Iterable[CallRecord]) -> dict[str, Usage]:
    """Records summed per stage. The structured-outputs probe (stage PROBE_STAGE) is left out: it is the
    endpoint's one-time overhead, kept in the ledger but charged to no question or ingest step."""
    groups: dict[str, list[CallRecord]] = {}
    for r in records:
        if r.stage != PROBE_STAGE:
            groups.setdefault(r.stage, []).append(r)
    return {k: summarize(v) for k, v in groups.items()}
