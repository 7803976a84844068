"""BaseSystem: the base class every built-in system builds on; it implements the MemorySystem protocol
(memcore/systems/protocol.py, re-exported here with SystemConfig, query_field and TurnContext)."""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, ClassVar

import numpy as np

from memcore.embed import Embedder
from memcore.llm.client import LLMClient
from memcore.llm.ledger import UsageLedger, by_stage
from memcore.llm.roles.readers import Reader, reader_for, uses_category
from memcore.systems.memory import WorkingMemory
from memcore.systems.parts import Fidelity, Mechanism
from memcore.systems.protocol import Batch, RunAhead, SystemConfig, SystemStore, memory_space
from memcore.systems.protocol import MemorySystem as MemorySystem  # re-exported
from memcore.systems.protocol import TurnContext as TurnContext  # re-exported
from memcore.systems.protocol import query_field as query_field  # re-exported
from memcore.types import Answer, Candidate, Conversation, Event, MemoryItem, Question, Trace, TraceItem, Turn


@dataclass
class Runtime:
    """What a system needs from the outside world."""

    store: SystemStore
    embedder: Embedder
    llm: LLMClient

    def space(self, name: str, config: SystemConfig) -> str:
        """The memory space system `name` with `config` writes to with this embedder and LLM."""
        return memory_space(name, config, self.embedder.name, self.llm.identity)


class BaseSystem:
    """Shared machinery: working memory, events, ids, search, context rendering, answering."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    config_class: ClassVar[type[SystemConfig]] = SystemConfig
    kinds: ClassVar[tuple[str, ...]] = ()  # memory kinds this system stores
    # the kinds its retrieval reads from working memory (None: all `kinds`); a query-time restore loads only these
    query_kinds: ClassVar[tuple[str, ...] | None] = None
    rank: ClassVar[int] = 1000  # place in system lists (lower first, ties by name); built-ins 10..80
    mechanism: ClassVar[Mechanism | None] = None  # its mechanism statistics (memcore.eval.mechanism)
    fidelity: ClassVar[Fidelity | None] = None  # its rows of docs/fidelity.md
    reader_family: ClassVar[str] = "short"  # config reader = "paper" uses this family (memcore.llm.roles.readers)
    # LoCoMo judge prompt styles its paper brings: style -> (prompt name in results, template); memcore.eval.judge_prompts
    judge_styles: ClassVar[dict[str, tuple[str, str]]] = {}

    def __init__(self, runtime: Runtime, conv: Conversation, config: SystemConfig | None = None) -> None:
        self.config = config or self.config_class()
        self.config.validate()
        self.rt = runtime
        self.store, self.embedder = runtime.store, runtime.embedder
        self.conv = conv
        self.llm = runtime.llm.bind(system=self.name, conv_id=conv.id)
        self.memory = WorkingMemory()
        self.step = 0
        self.turn: Turn | None = None
        self.session_end = False  # the current turn ends its session (TurnContext.session_end)
        self._events: list[Event] = []
        self._counters: dict[str, int] = {}
        self._turn_vecs: dict[str, np.ndarray] | None = None
        self._ahead = RunAhead()  # the ingest's pool once a turn arrives (TurnContext.ahead)
        self._space: tuple[dict[str, Any], str] | None = None  # (construction config, its memory space)

    # ------------------------------------------------------------ run-ahead
    def issue_ahead(self, key: Any, fn: Any, *args: Any, step: int | None = None, depth: int | None = None
                    ) -> None:
        """Issue LLM work `fn(client, *args)` that does not depend on later decisions, ahead of its use
        (see LLMClient.ahead; `depth`: the call depth it depends on, for the critical-path measure);
        `take_ahead(key)` returns its result. Issuing a key twice is a no-op. The work is kept in the
        ingest's RunAhead, which drops it when the ingest stops or fails."""
        if key not in self._ahead:
            self._ahead.put(key, self.llm.ahead(fn, *args, step=step, depth=depth))

    def open_stream(self, key: Any, gen_fn: Any, *args: Any, depth: int | None = None) -> Any:
        """A Stream of LLM work produced ahead (see LLMClient.stream), dropped with the ingest's RunAhead."""
        if key not in self._ahead:
            self._ahead.put(key, self.llm.stream(gen_fn, *args, lookahead=2 * self.llm.scheduler.concurrency,
                                                 depth=depth))
        return self._ahead.get(key)

    def take_ahead(self, key: Any, fn: Any, *args: Any) -> Any:
        """The result of the work issued under `key` (issued now if it was not), booked in the ledger now."""
        self.issue_ahead(key, fn, *args)
        return self._ahead.pop(key).result()

    # ------------------------------------------------------------- identity
    @property
    def space(self) -> str:
        """The memory space: memory_space(name, construction config, embedder, LLM identity: provider, model
        and the LLM options that change what is built, LLMClient.options); worked out once per construction
        config."""
        key = self.config.construction_dict()
        if self._space is None or self._space[0] != key:
            self._space = (key, memory_space(self.name, self.config, self.embedder.name, self.llm.identity))
        return self._space[1]

    def adopt_space(self, space: str) -> None:
        """Take the memory space the caller worked out for this system's config with this runtime
        (Runtime.space), so it is not worked out again."""
        self._space = (self.config.construction_dict(), space)

    # --------------------------------------------------------------- ingest
    def ingest(self, turn: Turn, ctx: TurnContext) -> list[Event]:
        """Process one turn (step = turn.index + 1; `self.session_end` = ctx.session_end) and return the
        events it caused."""
        self._ahead, self.session_end = ctx.ahead, ctx.session_end
        self.step, self.turn = turn.index + 1, turn
        self.llm.step = self.memory.step = self.step
        self._events = []
        self.on_turn(turn)
        self.memory.seal()
        return self._take_events()

    def finish(self, ctx: TurnContext) -> list[Event]:
        """End of conversation: step = number of turns + 1."""
        self._ahead, self.session_end = ctx.ahead, ctx.session_end
        self.step, self.turn = len(self.conv.turns) + 1, None
        self.llm.step = self.memory.step = self.step
        self._events = []
        self.on_finish()
        self.memory.seal()
        return self._take_events()

    def on_turn(self, turn: Turn) -> None:
        """Subclasses: process one turn, calling self.emit for each change (`self.session_end`: the turn is
        its session's last)."""
        raise NotImplementedError

    def on_finish(self) -> None:
        """Subclasses: flush buffers at the end of the conversation."""

    def _take_events(self) -> list[Event]:
        ev, self._events = self._events, []
        return ev

    def emit(self, kind: str, items: list[MemoryItem] | list[str], reason: str, **data: Any) -> Event:
        """Record an event about items (objects or ids) at the current step."""
        ids = [i if isinstance(i, str) else i.id for i in items]
        item_kind = next((i.kind for i in items if not isinstance(i, str)), data.pop("item_kind", ""))
        e = Event(step=self.step, kind=kind, item_ids=ids, reason=reason, system=self.name,
                  conv_id=self.conv.id, turn_id=self.turn.turn_id if self.turn else "", item_kind=item_kind,
                  data=data)
        self._events.append(e)
        return e

    def new_id(self, kind: str) -> str:
        """A fresh item id like "episode-12" (unique within this memory space)."""
        n = self._counters.get(kind, 0) + 1
        self._counters[kind] = n
        return f"{kind}-{n}"

    def new_item(self, kind: str, text: str, sources: list[str], turn_ids: list[str],
                 vector: np.ndarray | None = None, embed: bool = True, **metadata: Any) -> MemoryItem:
        """Create and store an item in working memory, embedded now unless a vector is given or
        `embed=False` (then it is embedded in one batch at the next commit, and not searchable
        in working memory before that)."""
        item = MemoryItem(id=self.new_id(kind), kind=kind, text=text, system=self.name, conv_id=self.conv.id,
                          sources=list(sources), turn_ids=sorted(set(turn_ids), key=turn_sort_key),
                          created_step=self.step, updated_step=self.step,
                          timestamp=self.turn.timestamp if self.turn else "", metadata=metadata)
        if vector is None and embed:
            vector = self.embed_one(text)
        return self.memory.put(item, vector)

    def embed_one(self, text: str) -> np.ndarray:
        """The unit vector of one text."""
        return self.embedder.embed([text])[0]

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of texts (one batched call)."""
        return self.embedder.embed(list(texts))

    def turn_vector(self, turn_id: str) -> np.ndarray:
        """The shared turn embedding (the store's `turns` table, read once; embedded when absent)."""
        if self._turn_vecs is None:
            ids, mat = self.store.turn_matrix(self.conv.id)
            self._turn_vecs = {t: np.asarray(v, dtype=np.float32) for t, v in zip(ids, mat, strict=True)}
        if turn_id not in self._turn_vecs:
            t = next(t for t in self.conv.turns if t.turn_id == turn_id)
            self._turn_vecs[turn_id] = self.embed_one(t.embed_text)
        return self._turn_vecs[turn_id]

    # ------------------------------------------------------- persist/restore
    def pending_batch(self) -> Batch:
        """Drain working memory for a commit: every version of every changed item, the deletions and
        `state()`. Items created with embed=False are embedded here in one batched call (the live item
        gets the vector too when its text did not change since)."""
        ups, dels = self.memory.drain()
        todo = [it for it in ups if it.embedding is None]
        if todo:
            for it, vec in zip(todo, self.embed_texts([it.text for it in todo]), strict=True):
                it.embedding = [float(x) for x in vec]
                live = self.memory.items.get(it.id)
                if live is not None and live.embedding is None and live.text == it.text:
                    self.memory.put(live, vec, dirty=False)
        return ups, dels, self.state()

    def state(self) -> dict[str, Any]:
        """JSON-able state beyond the items (counters, buffers); extend in subclasses."""
        return {"counters": dict(self._counters)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what `state()` returned."""
        self._counters = dict(state.get("counters", {}))

    def restore(self, at_step: int | None = None, *, kinds: Sequence[str] | None = None,
                checkpoint: Mapping[str, Any] | None = None) -> None:
        """Load the stored items and state of this memory space into working memory: the items of `kinds`
        (default: all of `kinds`), the state from `checkpoint` (read from the store when not given)."""
        space = self.space
        for kind in self.kinds if kinds is None else kinds:
            for it in self.store.items(space, self.conv.id, kind, at_step=at_step):
                self.memory.put(it, dirty=False)
        ck = self.store.checkpoint(space, self.conv.id) if checkpoint is None else checkpoint
        if ck is not None:
            self.load_state(ck["state"])

    def with_query(self, query: Mapping[str, Any] | None = None) -> BaseSystem:
        """This system with query-time settings `query` (fields marked query_field) for one call: itself when
        they equal its config, else a shallow copy sharing its memory, state and caches with a config copy
        (the held system never changes, so another query setting answers from the same loaded memory).
        ValueError for a construction field (that is another memory space)."""
        if not query:
            return self
        qf = {f.name for f in fields(self.config) if f.metadata.get("query")}
        bad = sorted(set(query) - qf)
        if bad:
            raise ValueError(f"{self.name}: {', '.join(bad)} not query-time setting(s) (a construction field is "
                             f"another memory space); query-time: {', '.join(sorted(qf))}")
        if all(getattr(self.config, k) == v for k, v in query.items()):
            return self
        cfg = replace(self.config, **query)
        cfg.validate()
        twin = copy.copy(self)
        twin.config = cfg
        return twin

    # ------------------------------------------------------------ retrieval
    def search_turns(self, query: str, k: int, qvec: np.ndarray | None = None) -> list[tuple[dict, float]]:
        """Top-k raw turns of this conversation with the configured retriever."""
        qvec = self.embed_one(query) if qvec is None else qvec
        return self.store.search_turns(self.conv.id, query, qvec, k, self.config.retriever)

    def search_items(self, kind: str, query: str, k: int,
                     qvec: np.ndarray | None = None) -> list[tuple[MemoryItem, float]]:
        """Top-k stored items of a kind with the configured retriever."""
        qvec = self.embed_one(query) if qvec is None else qvec
        return self.store.search_items(self.space, self.conv.id, kind, query, qvec, k, self.config.retriever)

    def new_trace(self, q: Question) -> Trace:
        """An empty trace for a question."""
        return Trace(system=self.name, question=q.text, question_id=q.id, retriever=self.config.retriever)

    def retrieve(self, question: Question) -> Trace:
        """Subclasses: fill a trace with items, candidates and structure."""
        raise NotImplementedError

    def answer(self, question: Question, query: Mapping[str, Any] | None = None) -> Answer:
        """Retrieve, then answer from the rendered context with the `answer` role; `query`: query-time settings
        for this call only (see with_query)."""
        if query:
            sys_ = self.with_query(query)
            if sys_ is not self:
                return sys_.answer(question)
        self.llm.step = 0
        t0 = time.perf_counter()
        with UsageLedger.collect() as records:  # this question's calls only, whatever else runs meanwhile
            trace = self.retrieve(question)
            retrieve_ms = (time.perf_counter() - t0) * 1000  # the retrieve step alone (paper metric: latency)
            if not trace.context:
                trace.context = render_context(trace.items)
            text = self.generate(question, trace)
        usage = by_stage(records)
        return Answer(text=text, trace=trace, usage=usage, latency_ms=(time.perf_counter() - t0) * 1000,
                      error="; ".join(trace.errors), retrieve_ms=retrieve_ms)

    def reader(self, question: Question) -> Reader:
        """The reader (answer) prompt for this question: config `reader` ("paper": this system's paper's own,
        memcore.llm.roles.readers), the data's source and the question's category pick it; the category is the
        gold label or, with config category_source = "predicted", the question_type role's (one LLM call)."""
        choice, source = getattr(self.config, "reader", "paper"), getattr(self.config, "category_source", "gold")
        category = question.category
        if source == "predicted" and uses_category(self.name, choice, self.conv.source):
            category = self.llm.run("question_type", {"question": question.text}, stage="question_type").output.category
        return reader_for(self.name, choice, self.conv.source, category, list(self.conv.speakers),
                          seed=getattr(self.config, "seed", None), category_source=source)

    def generate(self, question: Question, trace: Trace) -> str:
        """Run the reader role (self.reader) over the trace's context; the prompt used and errors go into the
        trace."""
        reader = self.reader(question)
        trace.reader = reader.record()
        self.fit_context(question, trace, reader)
        res = self.llm.run(reader.role, self.reader_inputs(question, trace.items, trace.context, reader),
                           stage="answer", temperature=reader.temperature, seed=reader.seed)
        trace.notes.extend(res.notes)
        if res.error:
            trace.errors.append(res.error)
        return getattr(res.output, "text", "") or ""

    def reader_inputs(self, question: Question, items: list[TraceItem], context: str, reader: Reader) -> dict[str, Any]:
        """The reader role's inputs for a context (rendered) and its items."""
        return {"question": question.text, "context": context, "question_date": question.question_date,
                "passages": [{"text": i.text, "date": i.metadata.get("date", ""), "score": i.score,
                              "speaker": i.metadata.get("speaker", ""), "turn_ids": list(i.turn_ids)} for i in items],
                "speakers": list(self.conv.speakers), **reader.extra}

    def fit_context(self, question: Question, trace: Trace, reader: Reader) -> None:
        """Cut the trace's context to fit the model's context window under a named rule, before the reader runs.
        Systems keep their context as built (a prompt that does not fit is not sent: memcore.llm.windows); a system
        with a rule of its own overrides this (full_context)."""


def turn_sort_key(turn_id: str) -> tuple[int, int, str]:
    """Sort "D3:12" after "D3:2" and "D10:1" after "D9:40"."""
    try:
        s, t = turn_id.lstrip("DS").split(":")
        return int(s), int(t), ""
    except ValueError:
        return (1 << 30, 0, turn_id)


def turn_row(turn: Turn) -> dict[str, Any]:
    """A turn as the store's `turns` rows look (without the vector), for turn_trace_item."""
    return {"turn_id": turn.turn_id, "speaker": turn.speaker, "text": turn.content,
            "session_date": turn.session_date, "session": turn.session}


def turn_trace_item(row: dict, score: float, rank: int, origin: str = "turns") -> TraceItem:
    """A TraceItem for a raw turn row from the store."""
    return TraceItem(id=row["turn_id"], kind="turn", text=Turn.speaker_line(row["speaker"], row["text"]),
                     score=score,
                     turn_ids=[row["turn_id"]], origin=origin, rank=rank,
                     metadata={"date": row["session_date"], "speaker": row["speaker"], "session": row["session"]})


def item_trace_item(item: MemoryItem, score: float, rank: int, origin: str) -> TraceItem:
    """A TraceItem for a memory item."""
    return TraceItem(id=item.id, kind=item.kind, text=item.text, score=score, turn_ids=list(item.turn_ids),
                     origin=origin, rank=rank, metadata={"date": item.metadata.get("date", item.timestamp[:10])})


def candidates_from(stage: str, scored: list[tuple[TraceItem, float]] | list[TraceItem], kept: set[str],
                    reason: str = "") -> list[Candidate]:
    """Candidate records for a stage from ranked trace items; `kept` are the ids that went on."""
    out = []
    for r, ti in enumerate(scored, start=1):
        ti = ti[0] if isinstance(ti, tuple) else ti
        out.append(Candidate(stage=stage, id=ti.id, score=ti.score, rank=r, kept=ti.id in kept,
                             turn_ids=list(ti.turn_ids), reason="" if ti.id in kept else reason))
    return out


def render_context(items: list[TraceItem]) -> str:
    """The context block given to the answer model: one line per item, dated, de-duplicated."""
    seen: set[str] = set()
    lines = []
    for it in items:
        if it.id in seen:
            continue
        seen.add(it.id)
        date = it.metadata.get("date", "")
        lines.append(f"[{date}] {it.text}" if date else it.text)
    return "\n".join(lines)


def query_dict(cfg: SystemConfig) -> dict[str, Any]:
    """The query-time part of a config (fields marked query_field): what `answer(question, query=)` takes."""
    return {f.name: getattr(cfg, f.name) for f in fields(cfg) if f.metadata.get("query")}


def config_to_dict(cfg: SystemConfig) -> dict[str, Any]:
    """All config values (for results files and traces)."""
    return asdict(cfg)
