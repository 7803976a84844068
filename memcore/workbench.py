"""Workbench: the one object the app, the CLI and the evaluator use to reach memcore."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd

from memcore import gcpause
from memcore.datasets import load_dataset, load_demo
from memcore.embed import Embedder, make_embedder, warm
from memcore.errors import LLMError
from memcore.ingest import IngestReport, ProgressFn, StageFn, ensure_turns, ingest_conversation
from memcore.llm import LLMClient, UsageLedger, make_client
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.store.replay_steps import steps_version
from memcore.store.variants import is_saved_name, save_variant, saved_variant, saved_variants
from memcore.store.view import MemoryView
from memcore.systems import get_system, load_all, make_config
from memcore.systems.base import BaseSystem, Runtime, SystemConfig, query_dict
from memcore.systems.variants import Variant, parse_variant, presets
from memcore.types import Answer, Conversation, Event, Question
from memcore.viz.replay import build_replay, events_frame_of_table, replay_payload

_UNREAD = object()  # a checkpoint not read yet
COMPACT_FROM = 64  # small fragments in a table from which a finished build compacts it (Workbench.compact_store)


def _for_query(sys_: Any, cfg: SystemConfig) -> Any:
    """The held system with the query-time settings of `cfg` (itself when they are its own)."""
    return sys_.with_query(query_dict(cfg)) if isinstance(sys_, BaseSystem) else sys_


def _answer(sys_: Any, question: Question, cfg: SystemConfig) -> Answer:
    """The held system's answer with the query-time settings of `cfg` for this call."""
    if isinstance(sys_, BaseSystem):
        return sys_.answer(question, query=query_dict(cfg))
    return sys_.answer(question)


def _config(v: Variant) -> SystemConfig:
    """The config a parsed variant stands for (its system's, with its settings; validated)."""
    return make_config(v.system, **v.settings)


def _named(ans: Answer, v: Variant) -> Answer:
    """The answer with its trace naming the variant that gave it."""
    ans.trace.variant = v.name
    return ans


class Workbench:
    """Store + embedder + LLM client, and the operations built on them."""

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None,
                 provider: Any = None, store: LanceStore | None = None) -> None:
        self.settings = settings or Settings()
        self.embedder = embedder if embedder is not None else make_embedder(self.settings)
        self.store = store or LanceStore(self.settings.store_uri, dim=self.embedder.dim,
                                         storage_options=self.settings.storage_options)
        self.ledger = UsageLedger(sink=self.store.add_llm_calls, keep_text=self.settings.ledger_text)
        self.llm: LLMClient = make_client(self.settings, self.ledger, provider, embedder=self.embedder)
        self.runtime = Runtime(self.store, self.embedder, self.llm)
        self._systems: dict[tuple, BaseSystem] = {}
        self._holding: dict[tuple, threading.Lock] = {}  # one restore at a time per memory space (see _held)
        self._holding_lock = threading.Lock()
        self._complete: set[tuple] = set()  # keys of cached systems restored from a finished ingest
        self._parsed: dict[tuple, Variant] = {}  # variant names already parsed (not presets, not saved names)

    @property
    def provider_label(self) -> str:
        """What answers LLM roles, as shown in the UI and results."""
        return self.llm.label

    # -------------------------------------------------------- conversations
    def load(self, path: str | Path, fmt: str | None = None, lenient: bool = False) -> list[Conversation]:
        """Load a dataset file and store its conversations (so the app lists them; an ingest of a
        stored conversation writes no conversation row again, memcore.ingest.ensure_turns).

        A file that breaks its format raises DatasetError naming each place; `lenient=True` accepts
        it with one DatasetWarning (memcore.datasets.checks)."""
        convs = load_dataset(path, fmt, lenient=lenient)
        for c in convs:
            self.store.save_conversation(c)
        return convs

    def load_demo(self) -> Conversation:
        """The built-in demo conversation (stored on first use)."""
        conv = load_demo()
        self.store.save_conversation(conv)
        return conv

    def conversation(self, conv_id: str) -> Conversation:
        """A stored conversation by id."""
        return self.store.load_conversation(conv_id)

    # ------------------------------------------------------------- variants
    def variant(self, name: str, **config: Any) -> Variant:
        """A system or variant name parsed once, with keyword settings on top: `com`, `com[beta=0.8]`,
        `com:no-apt`, or `@NAME` (a variant saved in this store); its system, settings and canonical name
        (memcore.systems.variants; `wb.variant("com[beta=0.8]", retriever="hybrid").name` is
        `com[beta=0.8,retriever=hybrid]`). Every method taking a system name takes any of these; a bad name or
        setting is a ValueError of one line naming the field, its type, paper default and valid values."""
        if is_saved_name(name):  # looked up each time: a saved name may be saved again meanwhile
            return parse_variant(saved_variant(self.store, name)).combined(config)
        try:
            key: Any = (name, tuple(sorted(config.items())))
            hash(key)
        except TypeError:  # a setting of an unhashable type: parsed, not kept
            key = None
        hit = self._parsed.get(key) if key is not None and ":" not in name else None  # presets may be replaced
        if hit is None:
            hit = parse_variant(name).combined(config)
            if key is not None and ":" not in name and len(self._parsed) < 4096:
                self._parsed[key] = hit
        return hit

    def variant_names(self) -> list[str]:
        """Every name a picker offers: the registered systems, the presets (`system:preset`), then the variants
        saved in this store (`@NAME`)."""
        return [*load_all(), *(f"{p.system}:{p.name}" for p in presets()),
                *(f"@{n}" for n in saved_variants(self.store))]

    def save_variant(self, name: str, variant: str) -> str:
        """Keep `name` (written `@name`) in the store for a variant (its canonical form, returned); saving a
        name again replaces it. ValueError (one line) for a bad name or variant."""
        v = self.variant(variant)
        save_variant(self.store, name, v.name, v.system)
        return v.name

    def saved_variants(self) -> dict[str, str]:
        """The variants saved in this store: {name: canonical variant}."""
        return {n: str(v["variant"]) for n, v in saved_variants(self.store).items()}

    # -------------------------------------------------------------- systems
    def system(self, name: str, conv: Conversation, restore: bool = True, **config: Any) -> BaseSystem:
        """A system bound to a conversation; restored from the store when already ingested. One system is held
        per memory space (name, construction config, embedder, LLM): another query-time setting (the retriever,
        the reader, K, ...) gets a view of it with that setting (BaseSystem.with_query), never a second restore."""
        v = self.variant(name, **config)
        name, cfg = v.system, _config(v)
        if not restore:  # never cached: a cached empty instance would answer from no memory
            return get_system(name)(self.runtime, conv, cfg)
        return _for_query(self._held(name, conv, cfg, self.runtime.space(name, cfg)), cfg)

    def _held(self, name: str, conv: Conversation, cfg: SystemConfig, space: str,
              ck: dict | None | object = _UNREAD) -> BaseSystem:
        """The system held for this memory space (built and restored on first use: the kinds its retrieval
        reads, BaseSystem.query_kinds, and its state from the checkpoint `ck`, read here when not given)."""
        key = (name, conv.id, space)
        if key in self._systems:
            return self._systems[key]
        with self._holding_lock:
            lock = self._holding.setdefault(key, threading.Lock())
        with lock:  # a restore already under way in another thread (a page's prefetch, hold()): wait for it, use it
            if key in self._systems:
                return self._systems[key]
            return self._restore_held(name, conv, cfg, space, key, ck)

    def _restore_held(self, name: str, conv: Conversation, cfg: SystemConfig, space: str, key: tuple,
                      ck: dict | None | object) -> BaseSystem:
        sys_ = get_system(name)(self.runtime, conv, cfg)
        if isinstance(sys_, BaseSystem):
            sys_.adopt_space(space)
        if ck is _UNREAD:
            ck = self.store.checkpoint(space, conv.id)
        if ck:
            with gcpause.paused():  # a bulk load of long-lived objects: no full GC pass stalls other threads meanwhile
                if isinstance(sys_, BaseSystem):
                    sys_.restore(kinds=sys_.query_kinds, checkpoint=ck)
                else:  # a system implementing the protocol itself
                    sys_.restore()
            self._systems[key] = sys_
            if ck["done"]:
                self._complete.add(key)
        return sys_

    def hold(self, name: str, conv: Conversation, **config: Any) -> bool:
        """Restore and hold a system's finished memory of a conversation ahead of a question (Ask's page calls it
        in the background while the question is written), so that `ask` finds it held. Safe in another thread:
        an `ask` of the same memory meanwhile waits for this restore and uses it (no second restore). Returns
        whether the memory is held; a memory not finished is neither built nor restored here (False), and an
        error while restoring propagates (nothing is held: `ask` restores again and reports it)."""
        v = self.variant(name, **config)
        name, cfg = v.system, _config(v)
        space = self.runtime.space(name, cfg)
        key = (name, conv.id, space)
        if key in self._complete:
            return True
        ck = self.store.checkpoint(space, conv.id)
        if not (ck and ck["done"]):
            return False
        self._held(name, conv, cfg, space, ck)
        return key in self._complete

    def space(self, name: str, conv: Conversation, **config: Any) -> str:
        """The memory space a system's ingest of a conversation writes to (memcore.systems.protocol.memory_space
        of the name, the construction config, this embedder and this LLM; no system is built)."""
        v = self.variant(name, **config)
        return self.runtime.space(v.system, _config(v))

    # ----------------------------------------------------------------- reads
    def memory(self, name: str, conv: Conversation, **config: Any) -> MemoryView:
        """Read access to a system's (variant's) stored memory of a conversation (items, versions, events,
        calls); variants differing only in query-time settings read the same memory."""
        v = self.variant(name, **config)
        return MemoryView(self.store, v.system, conv.id, self.runtime.space(v.system, _config(v)), v.memory_name)

    def events(self, name: str, conv: Conversation, upto: int | None = None, **config: Any) -> list[Event]:
        """The stored ingest events of a system's memory of a conversation, in order."""
        return self.memory(name, conv, **config).events(upto)

    def llm_calls(self, **filters: Any) -> pd.DataFrame:
        """Persisted LLM calls matching system=, conv_id=, stage=, provider=, role=, after_step=, variant=
        (LanceStore.llm_calls; a variant's ingest calls carry its Variant.memory_name, its answers its name)."""
        return self.store.llm_calls(**filters)

    def ingest(self, name: str, conv: Conversation, progress: ProgressFn | None = None,
               should_stop: Any = None, *, wait: bool = True, wait_timeout: float | None = None,
               stage: StageFn | None = None, **config: Any) -> IngestReport:
        """Build a system's memory of a conversation (resumes; no-op when already complete).

        `progress(turn, total, events)` follows every turn, `stage(name, done, total)` the shared turn
        embedding (per batch) and the system's finishing step (memcore.ingest).

        One process at a time builds a memory (memcore.store.lease): when another holds it, wait up to
        `wait_timeout` s (default MEMCORE_LEASE_WAIT_S) and then find it done, or with wait=False
        raise MemoryBusy at once.
        """
        v = self.variant(name, **config)
        with UsageLedger.variant(v.memory_name):  # the calls build that memory, whichever variant asked
            report = self._ingest(v.system, conv, _config(v), progress=progress, should_stop=should_stop, wait=wait,
                                  wait_timeout=wait_timeout, stage=stage)
        if report.complete and not report.skipped:
            self.cache_replay_steps(name, conv, **config)
            self.compact_store()
        return report

    def compact_store(self, min_fragments: int | None = None) -> dict[str, str]:
        """Compact the store's tables that a build left in many small fragments (at least `min_fragments`, default
        COMPACT_FROM): the app's first reads of a 10M-token memory then take a tenth of the time. Only an
        optimisation: a table that cannot be compacted now (another process committed meanwhile, a read-only
        store) stays as it was, nothing is raised, and the next finished build tries again. Returns table ->
        "" (compacted) or the error, for the tables it tried."""
        try:
            return self.store.optimize(min_fragments=COMPACT_FROM if min_fragments is None else min_fragments)
        except Exception as e:  # e.g. the table list cannot be read: the build is done all the same
            return {"*": f"{type(e).__name__}: {e}"}

    def cache_replay_steps(self, name: str, conv: Conversation, **config: Any) -> bool:
        """Store Replay's per-step counts of a finished memory (memcore.store.replay_steps), computed as the app's
        Replay computes them (memcore.viz.replay.build_replay): its first visit after a build then reads them
        instead of every event, version and call (0.2-0.6 s a memory at BEAM 1M; seconds at 10M tokens).
        Only a cache: a failure stores nothing and is not raised (Replay computes them, as without it); False then,
        or when the memory is unfinished or its counts are cached already."""
        try:
            self.ledger.flush()  # the build's construction calls are in the store before they are counted
            mem, n_steps, provider, offline = (self.memory(name, conv, **config), len(conv.turns) + 1,
                                               self.llm.provider.name, self.llm.is_offline)
            version = steps_version(mem.checkpoint(), n_steps)  # what the app's Replay looks the counts up by
            if version is None or mem.replay_steps(provider, version) is not None:
                return False
            rd = build_replay(mem.system, events_frame_of_table(mem.events_table(), offline), mem.step_versions(),
                              mem.construction_calls(provider), n_steps, offline)
            mem.save_replay_steps(provider, version, replay_payload(rd))
            return True
        except Exception:  # a read-only store, a failed read or write: the app computes the counts on its visit
            return False

    def _ingest(self, name: str, conv: Conversation, cfg: SystemConfig, progress: ProgressFn | None = None,
                should_stop: Any = None, *, wait: bool = True, wait_timeout: float | None = None,
                stage: StageFn | None = None) -> IngestReport:
        sys_ = get_system(name)(self.runtime, conv, cfg)
        with self.store.lease(sys_.space, conv.id, f"memory {name}/{conv.id}", wait=wait, timeout=wait_timeout):
            report = ingest_conversation(sys_, self.store, self.ledger, progress=progress, should_stop=should_stop,
                                         stage=stage, embedder=self.embedder)
        # an ingest that found the memory complete changed nothing: a system held from the finished memory stays
        keep = self._complete if report.skipped else set()
        self._systems = {k: v for k, v in self._systems.items() if not (k[0] == name and k[1] == conv.id) or k in keep}
        self._complete = {k for k in self._complete if not (k[0] == name and k[1] == conv.id) or k in keep}
        return report

    def prepare(self, conv: Conversation, stage: StageFn | None = None) -> dict[str, float]:
        """Do the work every system of a conversation shares, once, and time it (seconds by step): load
        the embedding model and embed and store the conversation's turns (memcore.ingest.ensure_turns,
        `stage` as there). The CLI reports it on its own line, so it is not charged to whichever system
        runs first; an ingest after it finds it done."""
        t0 = time.perf_counter()
        warm(self.embedder)
        t1 = time.perf_counter()
        ensure_turns(conv, self.store, self.embedder.embed, stage, self.embedder)
        return {"model load": t1 - t0, "turn embedding": time.perf_counter() - t1}

    def is_ingested(self, name: str, conv: Conversation, **config: Any) -> bool:
        """Whether this system's memory of the conversation is complete."""
        return self.memory(name, conv, **config).status()[1]

    def ask(self, name: str, conv: Conversation, question: Question | str, **config: Any) -> Answer:
        """Answer a question with a system (ingesting first if needed). The config and the memory space are
        worked out once; the system held for that space answers with this call's query-time settings
        (`answer(question, query=...)`), so changing only those never restores memory. A held system restored
        from a finished ingest answers without reading the checkpoint again (an ingest through this workbench
        that builds or resumes the memory drops it; one that finds it complete keeps it).

        `name` may be a variant (`com[beta=0.8]`, `com:no-apt`, `@NAME`): parsed once here; its answer's trace
        and its LLM calls carry the canonical variant name. A variant with construction settings answers from
        its own memory: when that memory is missing or incomplete, ask builds it first, as for any system (an
        explicit `ingest` shows progress), and a failed build raises LLMError naming the variant's memory."""
        if isinstance(question, str):
            question = Question(id="adhoc", conv_id=conv.id, text=question, answer="")
        v = self.variant(name, **config)
        name, cfg = v.system, _config(v)
        space = self.runtime.space(name, cfg)
        key = (name, conv.id, space)
        with UsageLedger.variant(v.name):
            if key in self._complete:
                return _named(_answer(self._systems[key], question, cfg), v)
            ck = self.store.checkpoint(space, conv.id)
            if not (ck and ck["done"]):
                with UsageLedger.variant(v.memory_name):
                    rep = self._ingest(name, conv, cfg)
                if rep.error:  # never answer from a memory that is missing the failed steps
                    raise LLMError(rep.message if v.name == name else f"{v.name} (memory {v.memory_name}): "
                                   f"{rep.message}")
                ck = _UNREAD
            return _named(_answer(self._held(name, conv, cfg, space, ck), question, cfg), v)

    @staticmethod
    def systems() -> list[str]:
        """Registered system names in display order."""
        return list(load_all())
