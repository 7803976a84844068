"""Baselines: naive RAG over turns and over sessions (top-k by the configured retriever)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcore.embed import normalise
from memcore.systems import register_system
from memcore.systems.base import (
    BaseSystem,
    SystemConfig,
    candidates_from,
    item_trace_item,
    query_field,
    turn_sort_key,
    turn_trace_item,
)
from memcore.systems.fields import param
from memcore.systems.parts import Fidelity, FidelityRow
from memcore.types import Question, Trace, TraceItem, Turn


def top_k(tr: Trace, ranked: list[TraceItem], k: int, reason: str) -> list[TraceItem]:
    """The first k of `ranked`; the trace gets one "search" stage whose candidates are all of them."""
    chosen = ranked[:k]
    tr.stages = ["search"]
    tr.candidates = candidates_from("search", ranked, {t.id for t in chosen}, reason=reason)
    return chosen


@dataclass
class NaiveRAGConfig(SystemConfig):
    """k: how many turns go into the context; pool: how many candidates the trace keeps."""

    k: int = query_field(20, range=(1, None), source="xMemory Sec. 4.1 (Naive RAG: top-20 chunks); CoM Sec. 4.1 "
                         "(k = 20)", help="turns in the context")
    pool: int = query_field(50, range=(1, None), source="memcore extension (trace display only)",
                            help="candidates the trace keeps")


@register_system
class NaiveRAGSystem(BaseSystem):
    """Turn-level RAG: every turn is indexed as it arrives; the top-k turns form the context."""

    name = "naive_rag"
    rank = 20
    title = "Naive RAG (turns)"
    paper = "baseline"
    config_class = NaiveRAGConfig
    fidelity = Fidelity("Baselines", (FidelityRow("Naive RAG (turns)", "top-k turns, k = 20 (CoM's RAG-turn baseline)",
                                                  "`naive_rag.k` = 20", "faithful"),))

    def on_turn(self, turn: Turn) -> None:
        self.emit("indexed", [turn.turn_id], "turn embedded and added to the flat index",
                  item_kind="turn", speaker=turn.speaker)

    def retrieve(self, question: Question) -> Trace:
        cfg = self.config
        tr = self.new_trace(question)
        rows = self.search_turns(question.text, max(cfg.k, cfg.pool))
        ranked = [turn_trace_item(r, s, i + 1, origin=f"{cfg.retriever} top-{cfg.k}") for i, (r, s) in enumerate(rows)]
        chosen = top_k(tr, ranked, cfg.k, f"ranked below the top {cfg.k}")
        tr.items = sorted(chosen, key=lambda t: turn_sort_key(t.id))  # conversation order reads better
        tr.structure = {"k": cfg.k, "retriever": cfg.retriever}
        return tr


@dataclass
class NaiveRAGSessionConfig(SystemConfig):
    """k: how many whole sessions go into the context. session_vector: "turns_mean" (the normalised
    mean of the session's turn embeddings) or "text" (the block's own embedding; MiniLM reads only
    its first 256 word pieces, about the first third of a LoCoMo session)."""

    k: int = query_field(3, range=(1, None), source="memcore choice (CoM Sec. 4.1 has a session-level "
                         "Naive RAG baseline)", help="whole sessions in the context")
    session_vector: str = param("turns_mean", choices=("turns_mean", "text"), source="memcore choice",
                                help="a session's vector: mean of its turns' or its block's own embedding")


@register_system
class NaiveRAGSessionSystem(BaseSystem):
    """Session-level RAG: each finished session is one retrievable block."""

    name = "naive_rag_session"
    rank = 30
    title = "Naive RAG (sessions)"
    paper = "baseline"
    config_class = NaiveRAGSessionConfig
    fidelity = Fidelity("Baselines", (FidelityRow(
        "Naive RAG (sessions)", "top-k sessions, k = 3",
        '`naive_rag_session.k` = 3, `naive_rag_session.session_vector` = "turns_mean"',
        "our reading (session vector = mean of its turn vectors)"),))
    kinds = ("session",)
    query_kinds = ()  # retrieval searches the store only

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.buffer: list[Turn] = []

    def on_turn(self, turn: Turn) -> None:
        if self.buffer and self.buffer[-1].session != turn.session:
            self._close_session()
        self.buffer.append(turn)

    def on_finish(self) -> None:
        if self.buffer:
            self._close_session()

    def _close_session(self) -> None:
        turns, self.buffer = self.buffer, []
        text = "\n".join(t.embed_text for t in turns)
        ids = [t.turn_id for t in turns]
        vec = None
        if self.config.session_vector == "turns_mean":
            vec = normalise(np.mean([self.turn_vector(i) for i in ids], axis=0, keepdims=True))[0]
        item = self.new_item("session", text, ids, ids, vector=vec, date=turns[0].session_date,
                             session=turns[0].session, vector_of=self.config.session_vector)
        how = "mean of its turn embeddings" if vec is not None else "embedding of the block's text"
        self.emit("created", [item], f"session {turns[0].session} closed: {len(turns)} turns in one block "
                  f"(vector = {how})", n_turns=len(turns))

    def state(self) -> dict:
        return {**super().state(), "buffer": [t.index for t in self.buffer]}

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        self.buffer = [self.conv.turns[i] for i in state.get("buffer", [])]

    def retrieve(self, question: Question) -> Trace:
        tr = self.new_trace(question)
        hits = self.search_items("session", question.text, max(self.config.k * 3, 10))
        ranked = [item_trace_item(it, s, i + 1, origin="session") for i, (it, s) in enumerate(hits)]
        tr.items = top_k(tr, ranked, self.config.k, f"session ranked below the top {self.config.k}")
        tr.structure = {"k": self.config.k}
        return tr
