"""The MemorySystem protocol, the config base class and the memory space: what the rest of memcore
relies on about a system (memcore/systems/base.py implements it for every built-in system)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memcore.llm.roles.readers import CATEGORY_SOURCES, check_category_source, check_reader, reader_choices
from memcore.retrievers import get_retriever, retriever_names
from memcore.store import LanceStore
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
        """The fields that change what ingest builds (they key the memory space)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.metadata.get("query")}

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
class MemorySystem(Protocol):
    """What every memory system offers to the ingest driver, the app and the evaluator.

    The ingest driver (memcore/ingest.py) uses only these members: it reads `name`, `conv`,
    `store` and `space`, feeds turns to `ingest` and ends with `finish`, asks `pending_batch`
    what to commit, and on resume / stop / failure calls `restore`, `flush_calls`,
    `discard_ahead`, `llm_mark`, `failed_calls` and `degraded_calls`. The app and the evaluator use
    `retrieve` and `answer`.
    """

    name: str
    config: SystemConfig
    conv: Conversation
    store: LanceStore

    @property
    def space(self) -> str:
        """The memory space this system writes to (memory_space of its name, config, embedder, LLM)."""
        ...

    def ingest(self, turn: Turn) -> list[Event]:
        """Process one turn; return what was created, merged, split, moved, and why."""
        ...

    def finish(self) -> list[Event]:
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

    def flush_calls(self) -> None:
        """Hand the LLM-call records not yet stored to the store."""
        ...

    def discard_ahead(self) -> None:
        """Drop LLM work issued ahead and not used (an ingest that stops or fails)."""
        ...

    def llm_mark(self) -> int:
        """A position in the LLM-call records, for `failed_calls`."""
        ...

    def failed_calls(self, since: int) -> int:
        """LLM calls of this system on this conversation that failed for good after `since`."""
        ...

    @property
    def degraded_calls(self) -> int:
        """Replies replaced by the role's fallback so far (the named llm_unusable=fallback option)."""
        ...

    def retrieve(self, question: Question) -> Trace:
        """Find the context for a question; the trace says how."""
        ...

    def answer(self, question: Question) -> Answer:
        """Answer a question: text, trace and usage by stage."""
        ...
