"""The ingest driver: feeds turns to a system, commits batches, resumes after a kill.

It talks to a system only through the MemorySystem protocol (memcore/systems/protocol.py) and to the
store only for checkpoints, rollback, commits and the conversation's shared rows. What one ingest owns
besides the system (the store it commits to, the LLM-call records, work issued ahead, session
boundaries) is its IngestContext (memcore/ingest/context.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from memcore.embed import Embedder, embedding_order
from memcore.errors import LLMError
from memcore.ingest.context import IngestContext, adapt, is_open
from memcore.llm.ledger import UsageLedger
from memcore.store import LanceStore
from memcore.systems.protocol import MemorySystem
from memcore.types import Conversation, Event


@dataclass
class IngestReport:
    """What one ingest call did."""

    system: str
    space: str
    conv_id: str
    turns_done: int
    turns_total: int
    resumed_from: int = 0
    events: int = 0
    seconds: float = 0.0
    complete: bool = False
    skipped: bool = False  # already complete before this call
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""  # why the ingest stopped early: an LLM call failed for good (nothing built from it)
    failed_calls: int = 0  # LLM calls that failed for good in this call
    degraded_calls: int = 0  # replies replaced by the role's fallback (llm_unusable=fallback)
    committed_step: int = 0  # the checkpoint a rerun resumes from
    rerun_fixes: bool = True  # False: the failure repeats on a rerun (its error names the change that helps)

    @property
    def message(self) -> str:
        """One line for the CLI and the app when the memory is incomplete."""
        if not self.error:
            return ""
        return (f"{self.failed_calls or 1} LLM call(s) failed, memory for {self.system}/{self.conv_id} incomplete "
                f"(kept up to turn {max(0, min(self.committed_step, self.turns_total))} of {self.turns_total}): "
                f"{self.error}." + (" Rerun to resume" if self.rerun_fixes else
                                    " A rerun resumes from that turn but fails the same way until that changes"))


ProgressFn = Callable[[int, int, list[Event]], None]
# (stage, done, total) of the steps around the turns: EMBEDDING (turns embedded so far, per batch) and
# FINISHING (0 of 1 when the system's end-of-conversation work starts, 1 of 1 when it is done)
StageFn = Callable[[str, int, int], None]
EMBEDDING, FINISHING = "embedding turns", "finishing"
EMBED_BATCH = 16  # turns per embedding call of the shared turn index: progress moves at least this often


def ensure_turns(conv: Conversation, store: LanceStore, embed: Callable[[list[str]], np.ndarray],
                 stage: StageFn | None = None, embedder: Embedder | None = None) -> None:
    """Store the conversation and its turns embedded with `embed` once (shared by every system).

    Both are written together, so stored turns mean a stored conversation and a later ingest of the
    conversation writes nothing here; a conversation whose id is stored with other turns is refused
    (StoreError: the memories of that id were built from those). Workbench.load stores (or updates) a loaded conversation itself;
    this covers callers that ingest a conversation never loaded into this store (the evaluator, tests).
    The turns are embedded `EMBED_BATCH` at a time, in `embedder`'s order (memcore.embed.embedding_order: by
    token count for MiniLM, so a batch shares forward passes; the vectors are the same in any order), and
    `stage(EMBEDDING, done, total)` follows each batch.
    """
    if conv.turns and store.has_turns(conv.id) == len(conv.turns):
        store.check_turns(conv)  # StoreError when the id is stored with other turns
        return
    store.save_conversation(conv)  # idempotent: no write when the stored row is the same
    texts = [t.embed_text for t in conv.turns]
    order = embedding_order(embedder, texts)
    vecs: np.ndarray = np.zeros((0, 0), dtype=np.float32)
    for i in range(0, len(texts), EMBED_BATCH):
        part = order[i:i + EMBED_BATCH]
        got = np.asarray(embed([texts[j] for j in part]))
        if not vecs.size:
            vecs = np.zeros((len(texts), got.shape[1]), dtype=got.dtype)
        vecs[part] = got
        if stage is not None:
            stage(EMBEDDING, min(i + EMBED_BATCH, len(texts)), len(texts))
    store.save_turns(conv.turns, vecs)


def ingest_conversation(
    system: MemorySystem,
    store: LanceStore,
    ledger: UsageLedger,
    *,
    commit_every: int = 50,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
    stop_after: int | None = None,
    stage: StageFn | None = None,
    embedder: Embedder | None = None,
) -> IngestReport:
    """Ingest every turn of `system`'s conversation not yet committed to `store`; resumable and idempotent.

    `ledger` is the one the system's LLM client books its calls in (Workbench.ledger): the ingest hands its
    records to the store before each checkpoint and rollback, and counts the failed and degraded calls among
    those made while it runs. Commits at every session end and every `commit_every` turns. `should_stop()`
    (checked after each turn) or `stop_after` (turn count, for tests) end the call early after a
    commit; calling again resumes. An ingest killed between commits resumes from the last
    checkpoint: partial writes after it are rolled back first. An open live conversation (memcore.live,
    ingest.context.is_open) commits after its newest turn and stops there: no end-of-conversation step, the
    checkpoint stays not done, and the next call ingests the turns added meanwhile. `progress(turn, total, events)`
    follows every turn; `stage` the steps around them (embedding the shared turns, finishing). `embedder`, the
    runtime's (the one behind `system.embed_texts`), only orders the shared turns' embedding (ensure_turns); the
    driver never reaches past the protocol into the system for it.
    """
    t0 = time.perf_counter()
    system = adapt(system)
    conv: Conversation = system.conv
    space = system.space
    ensure_turns(conv, store, system.embed_texts, stage, embedder)
    total = len(conv.turns)
    ck = store.checkpoint(space, conv.id)
    report = IngestReport(system.name, space, conv.id, 0, total)
    if ck is not None and ck["done"]:
        report.turns_done, report.complete, report.skipped = total, True, True
        report.counts = store.kind_counts(space, conv.id)
        return report
    start = ck["step"] if ck else 0
    live = is_open(conv)
    if live and start >= total:  # an open live conversation with no new turn: nothing to do
        report.turns_done, report.committed_step = total, start
        report.counts = store.kind_counts(space, conv.id)
        return report
    ctx = IngestContext(conv, ledger)
    ctx.flush_calls()  # a crashed ingest's unflushed calls reach the store before they are rolled back
    store.rollback(space, conv.id, start)
    if start:
        system.restore()
    report.resumed_from = start
    config = {"system": system.name, **system.config.construction_dict()}
    pending: list[Event] = []
    report.committed_step = start

    def commit(step: int, done: bool = False) -> None:
        ups, dels, state = system.pending_batch()
        ctx.flush_calls()  # before the checkpoint: a kill after it must not lose these steps' calls
        store.commit(space, system.name, conv.id, step, ups, dels, pending, state, config, done)
        report.events += len(pending)
        report.committed_step = step
        pending.clear()

    def failed(e: LLMError) -> IngestReport:
        # Nothing after the last checkpoint is kept: the next run rolls it back and redoes those steps.
        ctx.discard_ahead()
        ctx.flush_calls()
        report.error = str(e)
        report.rerun_fixes = getattr(e, "rerun_fixes", True)
        report.failed_calls = ctx.failed_calls() or 1
        report.degraded_calls = ctx.degraded_calls()
        report.seconds = time.perf_counter() - t0
        return report

    with ctx.counting():
        since_commit = 0
        for turn in conv.turns[start:]:
            turn_ctx = ctx.turn(turn)
            try:
                evs = system.ingest(turn, turn_ctx)
            except LLMError as e:
                return failed(e)
            pending.extend(evs)
            since_commit += 1
            report.turns_done = turn.index + 1
            if progress is not None:
                progress(turn.index + 1, total, evs)
            stopping = (should_stop is not None and should_stop()) or (
                stop_after is not None and turn.index + 1 - start >= stop_after) or (live and turn.index + 1 == total)
            if turn_ctx.session_end or since_commit >= commit_every or stopping:
                commit(turn.index + 1)
                since_commit = 0
            if stopping:
                ctx.discard_ahead()
                report.seconds = time.perf_counter() - t0
                report.degraded_calls = ctx.degraded_calls()
                if live:
                    report.counts = store.kind_counts(space, conv.id)
                return report
        if stage is not None:
            stage(FINISHING, 0, 1)
        try:
            pending.extend(system.finish(ctx.end()))
        except LLMError as e:
            return failed(e)
        commit(total + 1, done=True)
    if stage is not None:
        stage(FINISHING, 1, 1)
    report.complete = True
    report.degraded_calls = ctx.degraded_calls()
    report.seconds = time.perf_counter() - t0
    report.counts = store.kind_counts(space, conv.id)
    return report
