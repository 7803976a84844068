"""The MemorySystem protocol, the config base class and the memory space: what the rest of memcore
relies on about a system (memcore/systems/base.py implements it for every built-in system); what a
system is given in return: the store it reads (SystemStore) and, with each turn, a TurnContext."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memcore.llm.roles.readers import CATEGORY_SOURCES, check_category_source, check_reader, reader_choices
from memcore.retrievers import get_retriever, retriever_names
from memcore.systems.fields import check_fields
from memcore.types import Answer, Conversation, Event, MemoryItem, Question, Trace, Turn

# What one commit writes: item versions (upserts), deletions (kind, id, step) and the system's state
Batch = tuple[list[MemoryItem], list[tuple[str, str, int]], dict[str, Any]]


def query_field(default: Any, **kw: Any) -> Any:
    """A config field that only affects retrieval/answering (not what ingest builds); keywords: its spec
    (source, range or choices, help: memcore.systems.fields.param)."""
    return field(default=default, metadata={"query": True, **kw})


@dataclass
class SystemConfig:
    """Parameters shared by every system. Subclasses add theirs at the papers' defaults."""

    retriever: str = query_field("dense", choices=retriever_names, source="dense: the papers' embedding search "
                                 "(cosine); others: memcore extensions", help="the store search (memcore.retrievers): dense = the papers' cosine")
    # the answer prompt: "paper" (the system's paper's own; baselines: memcore's shared one), "short" (the
    # shared one) or another paper's family (memcore.llm.roles.readers)
    reader: str = query_field("paper", choices=reader_choices, source="paper: the system's paper's answer "
                              "prompt; others: memcore extension", help="the answer prompt family")
    # where a reader that picks its prompt by question category gets the category: "gold" (the dataset's
    # label, as the papers' code does; results mark it) or "predicted" (the question_type role); docs/fidelity.md
    category_source: str = query_field("gold", choices=lambda: CATEGORY_SOURCES, source="gold: the papers' code; "
                                       "predicted: memcore extension", help="where a category-picked reader gets "
                                       "the question's category (docs/fidelity.md)")

    def construction_dict(self) -> dict[str, Any]:
        """The fields that change what ingest builds (they key the memory space; an `omit_default` field only
        when set away from its default)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.metadata.get("query")
                and not (f.metadata.get("omit_default") and getattr(self, f.name) == f.default)}

    def validate(self) -> None:
        """Raise ValueError on an invalid setting."""
        get_retriever(self.retriever)  # ValueError naming the registered retrievers
        check_reader(self.reader)  # ValueError naming the reader choices
        check_category_source(self.category_source)
        check_fields(self, type(self).__name__)  # every field's range or choices (memcore.systems.fields)


def memory_space(name: str, config: SystemConfig, embedder: str, llm: Sequence[str]) -> str:
    """The memory space a system's ingest writes to: its name + a hash of what determines the built
    memory (the construction fields of `config`, the embedder's name, the LLM's (provider, model)).

    A pure function: the same inputs give the same space in every process and release (stored
    memories are found by it, so its output must never change for the same inputs)."""
    key = {"config": config.construction_dict(), "embedder": embedder, "llm": list(llm)}
    h = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{name}-{h}"


@runtime_checkable
class SystemStore(Protocol):
    """What a system sees of the store (memcore.store.LanceStore implements it): reads of its memory
    space and of the conversation's shared turns. Commits, checkpoints written, rollbacks and the
    conversation rows belong to the ingest driver (memcore/ingest.py), which is given the whole store."""

    def turn_matrix(self, conv_id: str) -> tuple[list[str], np.ndarray]:
        """Turn ids in conversation order and their embedding matrix."""
        ...

    def search_turns(self, conv_id: str, query: str, vector: np.ndarray | None, k: int,
                     retriever: str = "dense") -> list[tuple[dict, float]]:
        """Top-k turns of one conversation by a registered retriever."""
        ...

    def items(self, space: str, conv_id: str, kind: str, at_step: int | None = None,
              with_vectors: bool = True) -> list[MemoryItem]:
        """Items of one kind now (or as they were at `at_step`)."""
        ...

    def search_items(self, space: str, conv_id: str, kind: str, query: str, vector: np.ndarray | None,
                     k: int, retriever: str = "dense") -> list[tuple[MemoryItem, float]]:
        """Top-k current items of one kind by a registered retriever."""
        ...

    def kind_counts(self, space: str, conv_id: str, at_step: int | None = None) -> dict[str, int]:
        """Number of current items per kind (or at `at_step`)."""
        ...

    def checkpoint(self, space: str, conv_id: str) -> dict | None:
        """The last checkpoint {step, done, state, config} of an ingest, or None."""
        ...


class RunAhead:
    """LLM work a system issued ahead of its use, by key (an `Ahead` or a `Stream` of memcore.llm.ahead:
    anything with `cancel()`). The ingest owns it and hands it to the system with every turn
    (TurnContext.ahead); when the ingest stops or fails it drops what is left (`discard`), and a
    resume redoes that work."""

    def __init__(self) -> None:
        self._work: dict[Any, Any] = {}

    def __contains__(self, key: Any) -> bool:
        return key in self._work

    def get(self, key: Any) -> Any:
        """The work issued under `key` (KeyError when none)."""
        return self._work[key]

    def put(self, key: Any, work: Any) -> None:
        """Keep `work` under `key` until it is taken or discarded."""
        self._work[key] = work

    def pop(self, key: Any) -> Any:
        """Take the work issued under `key` out of the pool (its result is used now)."""
        return self._work.pop(key)

    def discard(self) -> None:
        """Cancel every piece of work not taken (an ingest that stops or fails)."""
        for work in self._work.values():
            work.cancel()
        self._work.clear()


@dataclass(frozen=True)
class TurnContext:
    """What the ingest driver tells a system with each turn (and at the end of the conversation)."""

    session_end: bool  # this turn is the last of its session (finish: True, the conversation ended)
    ahead: RunAhead  # the ingest's pool of work issued ahead (BaseSystem.issue_ahead keeps its work there)


@runtime_checkable
class MemorySystem(Protocol):
    """What every memory system offers to the ingest driver, the app and the evaluator.

    The ingest driver (memcore/ingest.py) uses only these members: it reads `name`, `config`, `conv`
    and `space`, stores the conversation's turns embedded with `embed_texts`, feeds turns to
    `ingest` with a TurnContext and ends with `finish`, asks `pending_batch` what to commit, and on
    resume calls `restore`. Everything else about an ingest (the store it commits to, the LLM-call
    records: flushing, failed and degraded calls; work issued ahead; session boundaries) is the
    driver's IngestContext. The app and the evaluator use `retrieve` and `answer`.
    """

    name: str
    config: SystemConfig
    conv: Conversation

    @property
    def space(self) -> str:
        """The memory space this system writes to (memory_space of its name, config, embedder, LLM)."""
        ...

    def ingest(self, turn: Turn, ctx: TurnContext) -> list[Event]:
        """Process one turn (`ctx.session_end`: it ends its session); return what was created, merged,
        split, moved, and why."""
        ...

    def finish(self, ctx: TurnContext) -> list[Event]:
        """Flush buffers at the end of the conversation."""
        ...

    def pending_batch(self) -> Batch:
        """What the next commit writes: every item version changed since the last call (all
        embedded), the deletions, and the JSON-able state a resume needs. Drains the changes."""
        ...

    def restore(self, at_step: int | None = None) -> None:
        """Load this memory space's stored items and state (a resume continues from them)."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of texts with this system's embedder (one batched call)."""
        ...

    def retrieve(self, question: Question) -> Trace:
        """Find the context for a question; the trace says how."""
        ...

    def answer(self, question: Question) -> Answer:
        """Answer a question: text, trace and usage by stage."""
        ...
