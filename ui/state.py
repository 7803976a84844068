"""Cached accessors: one Workbench per process and settings, replay aggregates per memory space."""

from __future__ import annotations

import hashlib
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import streamlit as st

from memcore.errors import MemcoreError, MemoryBusy
from memcore.ingest import FINISHING
from memcore.ingest.context import is_open
from memcore.llm.ledger import CallRecord, UsageLedger
from memcore.settings import Settings
from memcore.store.records import EventStream
from memcore.store.replay_steps import steps_version
from memcore.store.view import MemoryView
from memcore.types import Answer, Conversation, Event, Question
from memcore.viz.replay import (
    ReplayData,
    build_replay,
    events_frame_of_table,
    replay_from_payload,
    replay_payload,
)
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui import fixes, jobs, provider
from ui.variant_names import page_settings


def settings() -> Settings:
    """Environment settings overridden by the provider chosen in this session (ui/provider.py)."""
    return provider.session_settings()


_SECRET_FIELDS = ("openai_api_key", "storage_options")  # in the cache key only as fingerprints


def settings_key(s: Settings) -> tuple[tuple[str, str], ...]:
    """Every field of the settings, secrets as a 12-hex fingerprint: two settings with the same key make the
    same Workbench (a changed ledger_text, cache, timeout or provider gives another one)."""
    out = []
    for f in fields(s):
        value = getattr(s, f.name)
        if f.name in _SECRET_FIELDS:
            value = hashlib.sha256(repr(value).encode()).hexdigest()[:12] if value else ""
        out.append((f.name, repr(value)))
    return tuple(out)


@st.cache_resource(show_spinner="Opening the store and loading the embedder…", max_entries=8)
def _workbench(key: tuple[tuple[str, str], ...], _settings: Settings) -> Workbench:
    return Workbench(_settings)


def workbench() -> Workbench:
    """The Workbench for the current settings (created once per process and settings: every field counts,
    so a changed environment such as $MEMCORE_LEDGER_TEXT gets a new Workbench, not the old one). A provider
    that cannot start leaves the session on the offline engine, its error kept for the provider form."""
    s = settings()
    try:
        return _workbench(settings_key(s), s)
    except Exception as e:
        if s.provider == "offline":
            raise  # not the provider: the store or the embedder (workbench_or_stop names it)
        off = provider.offline_settings()
        wb = _workbench(settings_key(off), off)  # a store or embedder that cannot start raises here, not blamed on
        provider.failed(s.provider, e, fell_back=True)  # the provider
        return wb


def preload_embedder() -> None:
    """Start loading the MiniLM model in the background (once per process) when it is the embedder."""
    if settings().embedder == "minilm":
        from memcore.embed import start_model_preload

        start_model_preload()


def workbench_or_stop() -> Workbench:
    """The Workbench, or an error naming the fix and a stopped page."""
    try:
        return workbench()
    except Exception as e:
        st.error(md_escape(fixes.in_app(f"Cannot start memcore: {e}")))
        st.stop()
        raise


# ---------------------------------------------------------------- conversations
@st.cache_resource(show_spinner=False, max_entries=16)
def _stored_conversation(_store: Any, uri: str, conv_id: str, version: int) -> Conversation:
    return _store.load_conversation(conv_id)


_CONV_VERSIONS: dict[tuple[str, str], int] = {}  # (store uri, conv id) -> the version cached last (one held per conv)
_CONV_LOCK = threading.Lock()


def conversation(wb: Workbench, conv_id: str) -> Conversation:
    """A stored conversation, read and parsed once per server and version of the store's conversations table, and
    shared by every session (a 10M-token chat took 0.4-0.6 s to read and parse, once per session before): a new
    write of any conversation (a load, a live turn, new questions; by this process or another) is a new version,
    so no session is served a replaced conversation (a live one, memcore.live, that grew included). One version per
    conversation is kept (the one replaced is dropped when the new one is read). The object is shared by every
    session: callers only read it."""
    store = wb.store
    version = store.conversations_version()
    key = (store.uri, conv_id)
    conv = _stored_conversation(store, store.uri, conv_id, version)
    with _CONV_LOCK:
        old = _CONV_VERSIONS.get(key)
        _CONV_VERSIONS[key] = version if old is None else max(old, version)
    if old is not None and old < version:
        _stored_conversation.clear(store, store.uri, conv_id, old)  # the replaced one: not held next to the new
    if is_open(conv):  # a live one still growing (memcore.live): the memory rows other processes committed since
        store.refresh()
    return conv


_DERIVED: dict[tuple[int, str], tuple[weakref.ref, Any]] = {}  # (id(conv), name) -> (the conversation, a value)


def per_conversation(conv: Conversation, name: str, make: Callable[[Conversation], Any]) -> Any:
    """`make(conv)`, computed once per conversation object and `name` and kept while the object lives (the stored
    conversation is one object per server and version: conversation), so every session and run shares it (e.g. the
    10M chat's turn texts, ~0.1 s to build). The value is shared: callers only read it."""
    key = (id(conv), name)
    hit = _DERIVED.get(key)
    if hit is not None and hit[0]() is conv:
        return hit[1]
    value = make(conv)
    _DERIVED[key] = (weakref.ref(conv, lambda _ref, k=key: _DERIVED.pop(k, None)), value)
    return value


CONV_KEY = "conv_id"  # the session's one current conversation: every page, picker, link and the sidebar read it


MISSING_LINKED_KEY = "_conv_link_missing"


def current_conv_id(wb: Workbench) -> str | None:
    """The session's current conversation: a link's ?conv= (once per link), else the one loaded or picked
    last, else the demo (or the first stored one). Pages, pickers and the sidebar all read it here, so no page
    falls back to the demo while another conversation is current."""
    stored = list(wb.store.conversations()["conv_id"])
    linked = st.query_params.get("conv")
    if (linked is not None and linked not in stored
            and linked not in st.session_state.get("_url_written", {}).get("conv", ())):
        st.session_state[MISSING_LINKED_KEY] = linked  # said on every page until a conversation is chosen
    url_seed(CONV_KEY, "conv", stored)
    conv_id = st.session_state.get(CONV_KEY)
    if conv_id not in stored:
        conv_id = "demo" if "demo" in stored else (stored[0] if stored else None)
        if conv_id is not None:
            st.session_state[CONV_KEY] = conv_id
    return conv_id


def missing_linked_conv() -> str | None:
    """The conversation a link named that this store does not hold (the page shows another, or none)."""
    return st.session_state.get(MISSING_LINKED_KEY)


def make_current(conv_id: str) -> None:
    """Make a stored conversation current for every page and link of this session."""
    st.session_state[CONV_KEY] = conv_id
    st.session_state.pop(MISSING_LINKED_KEY, None)


LOADED_FILE = "_loaded_file"  # session state: the dataset file loaded on Home (its name, path, format, conversations)
_UPLOADS: list[str] = []  # this process's folder of uploaded dataset files (made once)


def uploads_dir() -> Path:
    """A folder of this app process for uploaded dataset files, so a Benchmark run can read an upload again."""
    if not _UPLOADS:
        _UPLOADS.append(tempfile.mkdtemp(prefix="memcore-uploads-"))
    return Path(_UPLOADS[0])


def remember_loaded_file(name: str, path: str, fmt: str | None, lenient: bool, conv_ids: list[str]) -> None:
    """Record the dataset file just loaded on Home: Benchmark offers (and defaults to) a run on it, by its `name`
    (an upload's copy lives at `path` in uploads_dir)."""
    st.session_state[LOADED_FILE] = {"name": name, "path": path, "format": fmt or "auto", "lenient": lenient,
                                     "conv_ids": list(conv_ids)}


def loaded_file() -> dict[str, Any] | None:
    """The dataset file loaded on Home in this session (remember_loaded_file), or None (the demo, or nothing)."""
    return st.session_state.get(LOADED_FILE)


def current_conversation(wb: Workbench) -> Conversation | None:
    """The current conversation (current_conv_id), parsed; None when nothing is stored."""
    conv_id = current_conv_id(wb)
    return None if conv_id is None else conversation(wb, conv_id)


def forget_conversation(conv_id: str) -> None:
    """Drop a parsed conversation (after it was reloaded from a file): the next read parses the stored one again.
    A write that changed it is found by its version anyway (conversation); this also covers a store replaced on
    disk under the same path, whose versions may repeat."""
    with _CONV_LOCK:
        keys = [k for k in _CONV_VERSIONS if k[1] == conv_id]
        dropped = [(k, _CONV_VERSIONS.pop(k)) for k in keys]
    for (uri, cid), version in dropped:
        _stored_conversation.clear(None, uri, cid, version)


# ----------------------------------------------------------------------- ingest
_MEMORIES: dict[tuple[int, str, str], MemoryView] = {}


def memory_of(wb: Workbench, system: str, conv: Conversation) -> MemoryView:
    """Read access to a system's (or a variant's: `sys[alpha=0.8]`, `@NAME`) stored memory of a conversation
    (worked out once)."""
    key = (id(wb), system, conv.id)
    if key not in _MEMORIES:
        _MEMORIES[key] = wb.memory(system, conv)
    return _MEMORIES[key]


@st.cache_data(show_spinner=False, ttl=2, max_entries=256)
def _status(_mem: MemoryView, store_uri: str, space: str, conv_id: str) -> tuple[int, bool]:
    return _mem.status()


def ingest_status(wb: Workbench, system: str, conv: Conversation) -> tuple[int, bool]:
    """(last committed step, complete) of a system's ingest (re-read at most every 2 s). A live conversation that
    is still growing (memcore.live) counts as complete once its memory is built up to the newest turn: there is no
    end-of-conversation step while it is open, and Replay, Ask, Explore and Export show it."""
    job = jobs.get(ingest_job_id(conv))
    if job is not None and (job.running or time.time() - (job.finished or 0) < 10):
        _status.clear()  # memory is being (or was just) built: read the checkpoint afresh
    mem = memory_of(wb, system, conv)
    step, done = _status(mem, wb.store.uri, mem.space, conv.id)
    return step, done or (is_open(conv) and 0 < len(conv.turns) <= step)


def ingest_job_id(conv: Conversation) -> str:
    """The id of the ingest job for a conversation."""
    return f"ingest:{conv.id}"


def start_ingest(wb: Workbench, systems: list[str], conv: Conversation) -> jobs.Job:
    """Ingest systems one after another in the background (resumes; cancel stops after a commit).

    The job reports what it really processes: the shared turn embedding per batch, each system's turns one
    by one, its finishing step; the bar counts systems done plus the current system's share."""

    def run(job: jobs.Job) -> dict[str, Any]:
        n, k = len(conv.turns), len(systems)
        embed = 0 if wb.store.has_turns(conv.id) == n else n  # the shared turn embedding is part of the bar too
        job.total = embed + n * k
        reports, busy = {}, []
        for i, name in enumerate(systems):
            if job.stop.is_set():
                break
            job.message = f"{name} (system {i + 1} of {k})"

            def progress(step: int, total: int, _evs: list, i: int = i) -> None:
                job.done = embed + i * n + step
                job.report("building memory", step, total, "turns")

            def stage(what: str, done: int, total: int) -> None:
                if what == FINISHING:
                    job.report("finishing (end-of-conversation work)", 0, 0, "")
                else:  # the turns are embedded once per conversation, for every system
                    job.done = min(done, embed)
                    job.report(f"{what} (shared by all systems)", done, total, "turns")

            try:  # another process building this memory: say so at once instead of waiting silently
                rep = wb.ingest(name, conv, progress=progress, should_stop=job.stop.is_set, wait=False, stage=stage)
            except MemoryBusy as e:
                busy.append(str(e))
                continue
            reports[name] = rep
            job.done = embed + (i + 1) * n if rep.complete else job.done
        failed = [r.message for r in reports.values() if r.error] + busy
        if failed:  # the job fails with the one-line message per system: nothing built from a failed call
            raise MemcoreError(" · ".join(failed))
        job.step = ""
        job.message = "cancelled: committed work is kept; building again resumes" if job.stop.is_set() else "done"
        return reports

    what = systems[0] if len(systems) == 1 else f"{len(systems)} systems"
    return jobs.start(ingest_job_id(conv), f"Building memory of {conv.id} ({what})", run)


# ----------------------------------------------------------------------- replay
class StoredEvents:
    """A memory's stored events as Replay's frames (memcore.viz.replay.EventSource): all of them, or one step's."""

    def __init__(self, mem: MemoryView, offline: bool, ck_step: int) -> None:
        self.mem, self.offline, self.ck_step = mem, offline, ck_step

    def all(self) -> pd.DataFrame:
        """Every stored event (`events_frame_of_table`: stored columns, no Event per row), from the rows the step
        diff holds (`event_stream`: one read of the table for both, where Replay's warm-up read it twice)."""
        return events_frame_of_table(event_stream(self.mem, self.ck_step).table, self.offline)

    def at(self, step: int) -> pd.DataFrame:
        """The stored events of one step."""
        return events_frame_of_table(self.mem.events_table(upto=step, after=step - 1), self.offline)


def step_events_ahead(data: dict[str, ReplayData], step: int) -> None:
    """Read one step's events of every memory on Replay whose events are not loaded yet (built from cached counts)
    in one store read, not one per memory (a filtered scan each: ~70 ms at BEAM 1M); the same frames as each
    memory's own read (StoredEvents.at)."""
    todo = [rd for rd in data.values() if isinstance(rd.source, StoredEvents) and rd.needs_step(step)]
    groups: dict[tuple, list[ReplayData]] = {}
    for rd in todo:
        groups.setdefault((id(rd.source.mem.store), rd.source.mem.conv_id), []).append(rd)
    for rds in groups.values():
        if len(rds) < 2:
            continue
        mem0 = rds[0].source.mem
        tb = mem0.store.events_table([rd.source.mem.space for rd in rds], mem0.conv_id, upto=step, after=step - 1)
        for rd in rds:
            own = None if tb is None else tb.filter(pc.equal(tb.column("space"), rd.source.mem.space))
            rd.keep_step(step, events_frame_of_table(own, rd.source.offline))


@st.cache_resource(show_spinner="Reading stored events…", max_entries=64)
def _replay(_mem: MemoryView, store_uri: str, provider: str, system: str, space: str, conv_id: str,
            n_steps: int, ck_step: int, offline: bool = False, version: str | None = None) -> ReplayData:
    """A memory's ReplayData (a resource shared by every session: callers only read it). A finished memory's
    per-step counts are cached in the store at its `version` (memcore.store.replay_steps): with them its first build
    reads no event, no item version and no call (the events load when used: Replay's warm-up, a step's alone before);
    without them it reads everything and stores the counts (a read-only store, or a write that fails, stores nothing:
    the next server reads everything again)."""
    source = StoredEvents(_mem, offline, ck_step)
    if version is not None:
        try:
            payload = _mem.replay_steps(provider, version)
        except Exception:  # an unreadable cache row: computed from the stored events below, as without one
            payload = None
        if payload is not None and int(payload.get("n_steps", -1)) == n_steps:
            return replay_from_payload(system, payload, source)
    calls = construction_calls(_mem, provider, ck_step)
    # the events as stored columns, not Event objects (those are read for a step's diff: events_of)
    rd = build_replay(system, source.all(), versions_of(_mem, ck_step), calls, n_steps, offline)
    if version is not None and not getattr(_mem.store.tables, "read_only", False):
        try:
            _mem.save_replay_steps(provider, version, replay_payload(rd))
        except Exception:  # not cached: shown all the same, computed again by the next server
            pass
    return rd


@st.cache_resource(show_spinner=False, max_entries=64)
def _construction_calls(_mem: MemoryView, key: tuple, provider: str, ck_step: int) -> pd.DataFrame:
    return _mem.construction_calls(provider)


def construction_calls(mem: MemoryView, provider: str, ck_step: int) -> pd.DataFrame:
    """The memory's construction calls by `provider` sorted by step (stable: a step's calls keep their order),
    without their prompt and completion texts (ui.calls_view reads those of the step it opens), read once per
    memory and checkpoint step: Replay's cost curves and its LLM-calls expander share them. A resource, so a step's
    lookup reads nothing from the store (callers only read it); on the 10M chat 0.5 CPU s and ~60 MB, with the
    texts 2 s and 545 MB."""
    return _construction_calls(mem, mem.key, provider, ck_step)


@st.cache_resource(show_spinner=False, max_entries=64)
def _versions(_mem: MemoryView, key: tuple[str, str, str], ck_step: int) -> pd.DataFrame:
    return _mem.step_versions()


@st.cache_resource(show_spinner=False, max_entries=64)
def _events(_mem: MemoryView, key: tuple[str, str, str], ck_step: int) -> EventStream:
    return EventStream(_mem.events_table())


def versions_of(mem: MemoryView, ck_step: int) -> pd.DataFrame:
    """Every stored item version of a memory (`mem.versions()`), read once per memory and checkpoint step (Replay
    builds its data and each step's diff from it). A resource shared by every session: callers only read it."""
    return _versions(mem, mem.key, ck_step)


def event_stream(mem: MemoryView, ck_step: int) -> EventStream:
    """A memory's stored event rows in order (memcore.store.records.EventStream), read once per memory and
    checkpoint step and shared by every session (Replay's warm-up loads it); read only."""
    return _events(mem, mem.key, ck_step)


def events_of(mem: MemoryView, ck_step: int, after: int | None = None, upto: int | None = None) -> list[Event]:
    """A memory's stored events in order (`mem.events()`), those of the steps after `after` and up to `upto` when
    given, built from the stream read once per memory and checkpoint step (`event_stream`): only the Events asked
    for are built (a step's few, not the 10M chat's 126k)."""
    return event_stream(mem, ck_step).between(after, upto)


@st.cache_data(show_spinner=False, max_entries=256)
def _kind_counts(_mem: MemoryView, key: tuple[str, str, str], ck_step: int) -> dict[str, int]:
    return _mem.kind_counts()


def kind_counts(mem: MemoryView, ck_step: int) -> dict[str, int]:
    """A memory's current items per kind (`mem.kind_counts()`), read once per memory and checkpoint step and shared by
    every session and page (Explore's kinds, Ask's overview): a row count per kind table, ~0.5 s a memory on the 10M
    chat. A read that fails raises (nothing cached) and is read again next time."""
    return _kind_counts(mem, mem.key, ck_step)


def read_together(*reads: Callable[[], Any]) -> None:
    """Run independent cached reads at once and wait for them all: the first in this thread, each other one in a
    thread carrying this run's script context. Each result lands in its own cache (st.cache_data or
    st.cache_resource, one computation per key: a read under way is waited for, not repeated), where the page's own
    calls then find it. The store's reads mostly wait on LanceDB's threads, so they overlap: Explore's first run on
    the synthetic 10M chat read its kind counts and its entities and relations one after the other (0.4-0.8 s +
    0.5-0.7 s). A read that fails raises nothing here (nothing is cached): the page's own call reads again and
    shows its error where it belongs."""
    from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

    def run(read: Callable[[], Any]) -> None:
        try:
            read()
        except Exception:  # the page's own call raises it (see above)
            return

    ctx = get_script_run_ctx()
    threads = []
    for read in reads[1:]:
        thread = threading.Thread(target=run, args=(read,), name="memcore-read", daemon=True)
        if ctx is not None:
            add_script_run_ctx(thread, ctx)
        thread.start()
        threads.append(thread)
    if reads:
        run(reads[0])
    for thread in threads:
        thread.join()


@st.cache_resource(show_spinner=False, max_entries=64)
def _current_items(_mem: MemoryView, key: tuple[str, str, str], kind: str, ck_step: int) -> list:
    return MemoryView(_mem.store, _mem.system, _mem.conv_id, _mem.space, _mem.variant).items(kind, with_vectors=False)


@dataclass(frozen=True)
class CheckpointView(MemoryView):
    """A memory as of its checkpoint step `ck_step`: its current items of a kind without vectors (`items(kind,
    with_vectors=False)`) are read once per memory and step and shared by every session (the same MemoryItem
    objects: callers only read them); every other read goes to the store as MemoryView's do."""

    ck_step: int = -1

    def items(self, kind: str, at_step: int | None = None, with_vectors: bool = True) -> list:
        """Current items of a kind (shared, once per memory and step) when neither a step nor vectors are asked."""
        if at_step is None and not with_vectors:
            return _current_items(self, self.key, kind, self.ck_step)
        return super().items(kind, at_step=at_step, with_vectors=with_vectors)


def as_of_checkpoint(mem: MemoryView, ck_step: int) -> CheckpointView:
    """`mem` with its current items read once per memory and checkpoint step (CheckpointView): Explore's entity graph
    read a 10M chat's entities and relations on every run (~0.5 s)."""
    return CheckpointView(mem.store, mem.system, mem.conv_id, mem.space, mem.variant, ck_step=ck_step)


def checkpoint(mem: MemoryView) -> tuple[int, bool]:
    """(last committed step, complete) of a memory, re-read at most every 2 s: its step keys the per-checkpoint
    caches."""
    return _status(mem, mem.store.uri, mem.space, mem.conv_id)


def replay_data(wb: Workbench, system: str, conv: Conversation) -> ReplayData:
    """Per-step aggregates of a system's stored ingest (computed once per checkpoint)."""
    mem = memory_of(wb, system, conv)
    ck = mem.checkpoint()
    n_steps = len(conv.turns) + 1
    return _replay(mem, wb.store.uri, wb.llm.provider.name, system, mem.space, conv.id, n_steps,
                   ck["step"] if ck else -1, wb.llm.is_offline, steps_version(ck, n_steps))


@st.cache_resource(show_spinner=False, max_entries=64)
def _kind_versions(_mem: MemoryView, key: tuple[str, str, str], kind: str, ck_step: int) -> tuple[list, Any, Any]:
    """Every stored version of one kind (no vectors), read once per memory and checkpoint: (items, valid_from,
    valid_to). A resource (never pickled): items_at hands out the same MemoryItem objects, which views only read."""
    items, valid_to = _mem.kind_versions(kind)
    _HELD_KINDS.add((key, kind, ck_step))
    return items, np.array([it.updated_step for it in items], dtype=np.int64), valid_to


_HELD_KINDS: set[tuple] = set()  # (memory key, kind, checkpoint step) whose versions _kind_versions has loaded


def items_held_at(mem: MemoryView, kind: str, step: int) -> list | None:
    """`items_at` if this server holds the kind's versions already (a warm-up loaded them), else None at once: a
    step's diff then reads its few changed items by id instead of waiting for the whole load (~2 CPU s for the
    synthetic 10M chat's graph memory, during which the second Replay step waited 1.2 s)."""
    ck_step = _status(mem, mem.store.uri, mem.space, mem.conv_id)[0]
    return items_at(mem, kind, step) if (mem.key, kind, ck_step) in _HELD_KINDS else None


def items_at(mem: MemoryView, kind: str, step: int) -> list:
    """Items of one kind as they were at a step (for growth views): the versions alive at the step (valid_from <=
    step < valid_to) out of the kind's versions read once per memory and checkpoint, in the store's order (what
    `mem.items(kind, at_step=step)` reads, without a read per step)."""
    ck_step = _status(mem, mem.store.uri, mem.space, mem.conv_id)[0]
    items, valid_from, valid_to = _kind_versions(mem, mem.key, kind, ck_step)
    alive = np.flatnonzero((valid_from <= step) & (valid_to > step))
    return [items[i] for i in alive]


# ---------------------------------------------------------------------- answers
def ask(wb: Workbench, system: str, conv: Conversation, question: Question, retriever: str = "dense") -> Answer:
    """A system's answer with a retriever, computed once per session, question and provider; the LLM calls it
    made are kept for the call inspector (answer_calls)."""
    cache: dict = st.session_state.setdefault("_answers", {})
    key = (wb.store.uri, wb.provider_label, system, conv.id, question.id, question.text, retriever)
    if key not in cache:
        with UsageLedger.collect() as records:
            # a variant's own retriever wins over the page's
            cache[key] = wb.ask(system, conv, question, **page_settings(wb, system, retriever))
        st.session_state.setdefault("_answer_calls", {})[id(cache[key])] = list(records)
    return cache[key]


_HOLDING: dict[tuple, threading.Thread] = {}  # per process: the memories a page started restoring ahead


def hold_ahead(wb: Workbench, conv: Conversation, systems: list[str]) -> threading.Thread | None:
    """Start restoring the built memories of `systems` in a background thread (Workbench.hold), once per process,
    workbench, conversation and systems, so that the Ask a user is writing finds them held (the largest restore
    measured ~1 s of CPU on the BEAM 1M chat). An ask meanwhile waits for the restore under way and uses it. A
    restore that fails holds nothing and is not reported here: the ask restores again and shows the error.
    Returns the thread (None when one was started before)."""
    key = (id(wb), wb.store.uri, conv.id, tuple(systems))
    if key in _HOLDING:
        return None

    def run() -> None:
        for name in systems:
            try:
                wb.hold(name, conv)
            except Exception:  # reported by the ask that needs it (see above)
                continue

    _HOLDING[key] = t = threading.Thread(target=run, name=f"memcore-hold-{conv.id}", daemon=True)
    t.start()
    return t


def answer_calls(answer: Answer) -> list[CallRecord]:
    """The LLM calls an answer of this session made (ledger records with prompts and completions)."""
    return st.session_state.get("_answer_calls", {}).get(id(answer), [])


def answers_all(conv: Conversation) -> dict[tuple[str, str, str], Answer]:
    """Answers computed this session for a conversation: (system, question id, question text) -> Answer."""
    cache: dict = st.session_state.get("_answers", {})
    return {(k[2], k[4], k[5]): v for k, v in cache.items() if k[3] == conv.id}


def adhoc_question(conv: Conversation, text: str) -> Question:
    """A free-text question (no gold answer or evidence)."""
    return Question(id="adhoc", conv_id=conv.id, text=text, answer="")


def benchmark_results() -> dict | None:
    """The results JSON loaded on the Benchmark page, if any."""
    return st.session_state.get("bm_results")


def answers_for(conv: Conversation, question: Question) -> dict[str, Answer]:
    """Answers already computed this session for one question, by system."""
    cache: dict = st.session_state.get("_answers", {})
    return {k[2]: v for k, v in cache.items() if k[3] == conv.id and k[4] == question.id and k[5] == question.text}


# ------------------------------------------------------------------ shareable URL
def url_seed(key: str, param: str, options: list | None = None, many: bool = False,
             parse: Callable[[str], Any] = str, split: Callable[[str], list[str]] | None = None) -> None:
    """Start widget `key` at the URL's ?param= (comma-separated when `many`, or cut by `split`; each value
    through `parse`, unreadable ones ignored), once per session and link, and only with a value among `options`:
    a shared link reopens the same view."""
    seeded: set = st.session_state.setdefault("_url_seeded", set())
    raw = st.query_params.get(param)
    if raw is None or (key, raw) in seeded or raw in st.session_state.get("_url_written", {}).get(param, ()):
        return  # nothing to open, opened already, or a value the page wrote itself (url_set), even an old
        # one: a rerun the browser sent before it saw the newer URL must not switch the widget back
    seeded.add((key, raw))
    try:
        value: Any = [parse(v) for v in (split or (lambda t: t.split(",")))(raw) if v] if many else parse(raw)
    except ValueError:
        return
    if options is not None:
        value = [v for v in value if v in options] if many else (value if value in options else None)
    if value is not None and value != []:
        st.session_state[key] = value


KEPT = "_kept"  # session state: widget key -> its last value, kept while its page is not shown


def keep_widget(key: str) -> None:
    """Before drawing widget `key`: give it back the value it had when its page was last left (Streamlit removes a
    widget's state at the end of a run that does not draw it, so a page visit would reset it to its default).
    Nothing when the widget has a value (a link's, or this page's)."""
    last = st.session_state.get(KEPT, {}).get(key)
    if key not in st.session_state and last is not None:
        st.session_state[key] = last


def kept(key: str, value: Any) -> None:
    """After drawing widget `key`: remember its value for keep_widget (in a key Streamlit does not clean up); None
    forgets it (the widget then starts at its page's default again)."""
    st.session_state.setdefault(KEPT, {})[key] = value


def url_set(**params: str | list[str] | None) -> None:
    """Write the view's choices into the URL (lists comma-separated; None or empty removes a parameter)."""
    written: dict = st.session_state.setdefault("_url_written", {})
    for name, v in params.items():
        text = ",".join(v) if isinstance(v, list | tuple) else ("" if v is None else str(v))
        written.setdefault(name, set()).add(text)
        if not text:
            if name in st.query_params:
                del st.query_params[name]
        elif st.query_params.get(name) != text:
            st.query_params[name] = text
