"""Core data types shared by loaders, the store, memory systems, evaluation and the app."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}

EVENT_KINDS = ("created", "merged", "split", "moved", "deleted", "linked", "updated", "promoted", "indexed")


@dataclass
class Turn:
    """One message of a conversation. `turn_id` is the dataset's id, e.g. "D3:7"."""

    conv_id: str
    turn_id: str
    index: int  # position in the whole conversation, 0-based
    session: int
    session_date: str  # as written in the dataset, e.g. "1:56 pm on 8 May, 2023"
    timestamp: str  # ISO 8601 (session date, or the message's own time)
    speaker: str
    text: str
    image_caption: str = ""

    @property
    def content(self) -> str:
        """Text with the shared image rendered as words."""
        if self.image_caption:
            photo = f"[shares a photo of {self.image_caption}]"
            return f"{self.text} {photo}".strip()
        return self.text

    @property
    def embed_text(self) -> str:
        """The turn as it is embedded (the `turns` table) and shown in traces: "Speaker: content"."""
        return self.speaker_line(self.speaker, self.content)

    @staticmethod
    def speaker_line(speaker: str, content: str) -> str:
        """"Speaker: content": `embed_text` for a turn known only by its stored row."""
        return f"{speaker}: {content}"

    def render(self) -> str:
        """One line as shown to a model: "[date] Speaker: text"."""
        return f"[{self.session_date}] {self.embed_text}"


@dataclass
class Question:
    """A question about one conversation, with its gold answer and evidence turn ids."""

    id: str
    conv_id: str
    text: str
    answer: str
    evidence: list[str] = field(default_factory=list)
    category: int | str = 0
    question_date: str = ""
    adversarial_answer: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def category_name(self) -> str:
        if isinstance(self.category, int):
            return CATEGORY_NAMES.get(self.category, str(self.category))
        return str(self.category)


@dataclass
class Conversation:
    """A whole conversation (all sessions) and its questions."""

    id: str
    speakers: list[str]
    turns: list[Turn]
    questions: list[Question] = field(default_factory=list)
    source: str = ""  # "locomo", "longmemeval", "jsonl", "demo"
    metadata: dict[str, Any] = field(default_factory=dict)

    def sessions(self) -> dict[int, list[Turn]]:
        """Turns grouped by session index, in order."""
        out: dict[int, list[Turn]] = {}
        for t in self.turns:
            out.setdefault(t.session, []).append(t)
        return out

    def turn(self, turn_id: str) -> Turn | None:
        """The turn with this id, or None."""
        for t in self.turns:
            if t.turn_id == turn_id:
                return t
        return None


@dataclass
class MemoryItem:
    """A unit of memory built by a system: episode, semantic fact, theme, entity, ...

    `sources` are the direct parents (turn ids or item ids); `turn_ids` is the set of raw
    turns the item ultimately derives from, used for evidence recall and provenance views.
    """

    id: str
    kind: str
    text: str
    system: str = ""
    conv_id: str = ""
    embedding: list[float] | None = None
    sources: list[str] = field(default_factory=list)
    turn_ids: list[str] = field(default_factory=list)
    created_step: int = 0
    updated_step: int = 0
    timestamp: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Event:
    """Something a system did while ingesting: created, merged, split, moved, ... and why."""

    step: int
    kind: str
    item_ids: list[str]
    reason: str
    system: str = ""
    conv_id: str = ""
    turn_id: str = ""
    item_kind: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Usage:
    """Token and call counts for one stage."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    latency_ms: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.cache_hits + other.cache_hits,
            self.latency_ms + other.latency_ms,
        )


@dataclass
class TraceItem:
    """One piece of retrieved context, with where it came from and its score."""

    id: str
    kind: str
    text: str
    score: float
    turn_ids: list[str] = field(default_factory=list)
    origin: str = ""  # store / stage / chain the item came from, e.g. "episodic", "chain 2"
    rank: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Candidate:
    """An item a retrieval stage considered; `kept` says whether it went on, `reason` why not."""

    stage: str
    id: str
    score: float
    rank: int
    kept: bool
    turn_ids: list[str] = field(default_factory=list)
    reason: str = ""
    data: dict[str, Any] = field(default_factory=dict)


CANDIDATE_COLUMNS = tuple(f.name for f in fields(Candidate))  # the columns of a stored trace's candidate table


@dataclass
class Trace:
    """Everything a system did to answer one question: context, candidates, structure."""

    system: str
    question: str
    question_id: str = ""
    retriever: str = "dense"
    items: list[TraceItem] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)  # candidate stages in pipeline order
    structure: dict[str, Any] = field(default_factory=dict)  # system-specific (chains, path, ...)
    notes: list[str] = field(default_factory=list)  # fallbacks and proxies used
    errors: list[str] = field(default_factory=list)
    context: str = ""  # the context text given to the answer model
    reader: dict[str, Any] = field(default_factory=dict)  # the answer prompt used: role, temperature, seed, source
    variant: str = ""  # the canonical variant name answering (memcore.systems.variants); "" or unset: the system

    def __post_init__(self) -> None:
        self.variant = self.variant or self.system

    def context_turn_ids(self) -> list[str]:
        """Raw turns present in the context, in first-seen order."""
        seen: dict[str, None] = {}
        for item in self.items:
            for tid in item.turn_ids:
                seen.setdefault(tid, None)
        return list(seen)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form stored with eval results and exported (read back by `from_dict`).

        Shallow: nested metadata, data and structure values are shared with the trace, not copied (a
        deep `asdict` was 31% of MemWeaver's answering time in eval, issue 28). Candidates are one
        table: {"columns": CANDIDATE_COLUMNS, "rows": [[value per column], ...]} instead of one
        dict per candidate (hundreds per question)."""
        return {"system": self.system, "question": self.question, "question_id": self.question_id,
                "retriever": self.retriever, "items": [vars(i).copy() for i in self.items],
                "candidates": {"columns": list(CANDIDATE_COLUMNS),
                               "rows": [[getattr(c, k) for k in CANDIDATE_COLUMNS] for c in self.candidates]},
                "stages": list(self.stages), "structure": dict(self.structure), "notes": list(self.notes),
                "errors": list(self.errors), "context": self.context, "reader": dict(self.reader),
                **({"variant": self.variant} if self.variant and self.variant != self.system else {})}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        """A trace from `to_dict`'s form (or the older one with one dict per candidate)."""
        d = dict(d)
        d["items"] = [TraceItem(**i) for i in d.get("items", [])]
        cands = d.get("candidates") or []
        if isinstance(cands, dict):  # the table form
            cols = cands["columns"]
            cands = [dict(zip(cols, row, strict=True)) for row in cands["rows"]]
        d["candidates"] = [Candidate(**c) for c in cands]
        return cls(**d)


@dataclass
class Answer:
    """A system's answer with its trace and usage split by stage."""

    text: str
    trace: Trace
    usage: dict[str, Usage] = field(default_factory=dict)
    latency_ms: float = 0.0
    error: str = ""
    retrieve_ms: float | None = None  # the retrieve step alone (no answer call); None: not measured

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "trace": self.trace.to_dict(),
            "usage": {k: vars(v).copy() for k, v in self.usage.items()},
            "latency_ms": self.latency_ms,
            "error": self.error,
            "retrieve_ms": self.retrieve_ms,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Answer:
        return cls(
            text=d["text"],
            trace=Trace.from_dict(d["trace"]),
            usage={k: Usage(**v) for k, v in d.get("usage", {}).items()},
            latency_ms=d.get("latency_ms", 0.0),
            error=d.get("error", ""),
            retrieve_ms=d.get("retrieve_ms"),
        )


def system_of(name: str) -> str:
    """The registered system of a canonical variant name (`com:no-apt[K=10]` -> `com`), without parsing it (the
    grammar is memcore.systems.variants'; this part of it is vocabulary: views and pages key by the system)."""
    return re.split(r"[:\[]", name.strip(), maxsplit=1)[0]
