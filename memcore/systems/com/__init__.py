"""CoM (Chain-of-Memory): a flat turn index with post-retrieval chains.

Paper: "Chain-of-Memory: Lightweight Memory Construction with Dynamic Evolution for LLM
Agents" (../shared/papers/000_*.txt). Construction is the shared `turns` table (no LLM).
At question time: a pool of K turns by the configured retriever; the top-L become
anchors; each anchor grows one chain by the gate S(m) = cos(m, q) * cos(m, C), C the
mean embedding of the chain so far; a chain stops when the best gate falls below
beta * the previous gate (a "cliff"), when the pool is exhausted, or at max_len nodes.

With the lexical or hybrid retriever only the pool changes: the gate's relevance term
stays the cosine cos(m, q), because the gate multiplies two cosines (BM25 or RRF scores
are on other scales).

Extended mode (not in the paper; every option off by default, `EXTENDED` turns them on):
query-side re-ranking of the whole turn index before the pool is cut - a boost for turns
by a speaker named in the question, and neighbour smoothing (a turn's score plus a share
of its same-session neighbours', since the reply to a matching turn often holds the
answer) - then, after the chains, a backfill of ranked turns up to a word budget, and dates
rendered as days ("8 May 2023"). The chains themselves are grown exactly as in the paper.
The pure mechanics (chain growth, score fusion, re-ranking) are in .chains; settings in .config.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from memcore.systems import register_system
from memcore.systems.base import (
    BaseSystem,
    render_context,
    turn_row,
    turn_trace_item,
)
from memcore.systems.com import presets as _presets  # noqa: F401  (registers this system's ablations, sweeps)
from memcore.systems.com import reader as _reader  # noqa: F401  (registers its reader family)
from memcore.systems.com.chains import Chain, day_date, fused_scores, grow_chain, rerank, unit
from memcore.systems.com.config import EXTENDED, CoMConfig, ablation_note
from memcore.systems.com.fidelity import FIDELITY
from memcore.systems.com.judge import JUDGE_STYLES
from memcore.systems.com.stats import MECHANISM
from memcore.types import Candidate, Question, Trace, TraceItem, Turn


@register_system
class CoMSystem(BaseSystem):
    """Chain-of-Memory: flat turn index, query-time chains grown by a relevance x consistency gate."""

    name = "com"
    rank = 40
    title = "CoM (Chain-of-Memory)"
    paper = "000"
    reader_family = "com"  # its paper's reader prompts (reader.py)
    judge_styles = JUDGE_STYLES  # its paper's LoCoMo judge wording (judge.py)
    config_class = CoMConfig
    mechanism = MECHANISM
    fidelity = FIDELITY

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self._index: dict[str, tuple[list[str], np.ndarray]] = {}  # the turn index, read once (shared by views)

    def on_turn(self, turn: Turn) -> None:
        self.emit("indexed", [turn.turn_id], "turn stored as a memory node (raw text, time, speaker, embedding)",
                  item_kind="turn", speaker=turn.speaker, session=turn.session)

    def retrieve(self, question: Question) -> Trace:
        cfg = self.config
        tr = self.new_trace(question)
        tr.stages = ["pool", "chains"] + (["backfill"] if cfg.word_budget else [])
        tr.structure = {"chains": [], "K": cfg.K, "L": cfg.L, "beta": cfg.beta, "max_len": cfg.max_len,
                        "retriever": cfg.retriever, "extended": cfg.extended}
        qvec = unit(self.embed_one(question.text))
        n = max(cfg.K, cfg.trace_pool)
        if cfg.speaker_boost or cfg.neighbour_weight:
            ranked = self._reranked(question.text, qvec, n, tr)
        else:
            ranked = self.search_turns(question.text, n, qvec)
        rows, below = ranked[: cfg.K], ranked[cfg.K:]
        if not rows:
            tr.notes.append("no turns indexed for this conversation: empty context")
            return tr
        if cfg.retriever != "dense":
            tr.notes.append(f"pool by {cfg.retriever} search; the gate's relevance term is still cos(m, q)")
        ids = [r["turn_id"] for r, _ in rows]
        emb = unit(np.stack([np.asarray(r["vector"], dtype=np.float64) for r, _ in rows]))
        rel = emb @ qvec
        anchors = range(min(cfg.L, len(rows)))
        if not (cfg.framework and cfg.dmce and cfg.apt) or cfg.L > cfg.K:
            tr.notes.append(ablation_note(cfg))
        if not cfg.framework:  # w/o Framework: the plain top-K pool, no anchors, no chains
            chains = []
            tr.stages = ["pool"] + tr.stages[2:]
            tr.items = [self._item(row, s, r, "pool") for r, (row, s) in enumerate(rows, start=1)]
        elif not cfg.dmce:  # w/o DMCE: no chain evolution, each chain is its anchor
            chains = [Chain(a, [a], [float(rel[a])], stop_reason="w/o DMCE: anchor only (no chain evolution)")
                      for a in anchors]
        else:
            chains = [grow_chain(emb, rel, a, cfg.beta, cfg.max_len, ids, truncate=cfg.apt) for a in anchors]
        self._fill(tr, rows, below, ids, rel, chains)
        if cfg.word_budget:
            self._backfill(tr, ranked, {it.id for it in tr.items})
        tr.context = render_context(tr.items)
        return tr

    def _item(self, row: dict, score: float, rank: int, origin: str) -> TraceItem:
        ti = turn_trace_item(row, score, rank, origin=origin)
        if self.config.date_style == "day":
            ti.metadata["date"] = day_date(ti.metadata["date"])
        return ti

    def _reranked(self, text: str, qvec: np.ndarray, n: int, tr: Trace) -> list[tuple[dict, float]]:
        """Extended pool: the whole index scored by the retriever, speaker-boosted and neighbour-smoothed."""
        cfg = self.config
        if not self._index:
            ids, mat = self.store.turn_matrix(self.conv.id)
            if not ids:
                return []
            self._index["turns"] = (ids, unit(mat))
        ids, mat = self._index["turns"]
        by_id = {t.turn_id: t for t in self.conv.turns}
        turns = [by_id[i] for i in ids]
        dense = mat @ qvec
        lexical = None
        if cfg.retriever != "dense":
            pos = {t: i for i, t in enumerate(ids)}
            lexical = np.zeros(len(ids))
            for r, s in self.store.search_turns(self.conv.id, text, qvec, len(ids), "lexical"):
                lexical[pos[r["turn_id"]]] = s
        named_spk = [s for s in self.conv.speakers if re.search(rf"\b{re.escape(s)}\b", text, re.I)]
        named = np.array([t.speaker in named_spk for t in turns], dtype=float)
        sessions = np.array([t.session for t in turns])
        score = rerank(fused_scores(dense, lexical, cfg.retriever), named, sessions, cfg.speaker_boost,
                       cfg.neighbour_weight)
        order = np.argsort(-score, kind="stable")[:n]
        tr.notes.append(f"extended pool (not in the paper): whole index by {cfg.retriever}, speaker boost "
                        f"{cfg.speaker_boost} for {named_spk or 'no named speaker'}, neighbour weight "
                        f"{cfg.neighbour_weight}")
        return [({**turn_row(turns[i]), "vector": mat[i]}, float(score[i])) for i in order]

    def _backfill(self, tr: Trace, ranked: list[tuple[dict, float]], in_chain: set[str]) -> None:
        """Extended: after the chains, turns in ranked order (pool, then beyond) within the word budget."""
        budget = self.config.word_budget
        words = len(render_context(tr.items).split())
        full = False
        for i, (row, s) in enumerate(ranked):
            if row["turn_id"] in in_chain:
                continue
            ti = self._item(row, s, len(tr.items) + 1, "backfill")
            w = len(render_context([ti]).split())
            full = full or words + w > budget
            if not full:
                tr.items.append(ti)
                words += w
            tr.candidates.append(Candidate(stage="backfill", id=ti.id, score=float(s), rank=i + 1, kept=not full,
                                           turn_ids=[ti.id], reason=f"word budget {budget} reached" if full else ""))
        tr.notes.append(f"extended: ranked turns after the chains up to {budget} words ({words} used)")

    def _fill(self, tr: Trace, rows: list[tuple[dict, float]], below: list[tuple[dict, float]], ids: list[str],
              rel: np.ndarray, chains: list[Chain]) -> None:
        """Items (chain by chain), candidates per stage and the chain structure."""
        cfg = self.config
        for ci, ch in enumerate(chains, start=1):
            for pos, (m, g) in enumerate(zip(ch.members, ch.gates, strict=True), start=1):
                ti = self._item(rows[m][0], g, len(tr.items) + 1, f"chain {ci}")
                ti.metadata.update(chain=ci, position=pos, relevance=round(float(rel[m]), 4))
                tr.items.append(ti)
            tr.structure["chains"].append({
                "anchor": ids[ch.anchor], "anchor_score": round(float(rows[ch.anchor][1]), 4),
                "anchor_relevance": round(float(rel[ch.anchor]), 4), "steps": ch.steps,
                "members": [ids[m] for m in ch.members], "gates": [round(g, 4) for g in ch.gates],
                "stop_reason": ch.stop_reason, "stop_step": ch.stop_step})
        for r, (row, s) in enumerate(rows + below, start=1):
            in_pool = r <= cfg.K
            tr.candidates.append(Candidate(
                stage="pool", id=row["turn_id"], score=float(s), rank=r, kept=in_pool, turn_ids=[row["turn_id"]],
                reason="" if in_pool else f"ranked below the top {cfg.K} by {cfg.retriever} search",
                data={"relevance": round(float(rel[r - 1]), 4) if in_pool else None,
                      "anchor": cfg.framework and r <= cfg.L}))
        if not cfg.framework:
            return
        in_chain = {m for ch in chains for m in ch.members}
        rejected: dict[int, tuple[int, int]] = {}  # first chain (in anchor order) whose cliff it was
        for ci, ch in enumerate(chains, start=1):
            if ch.rejected is not None:
                rejected.setdefault(ch.rejected, (ci, ch.stop_step))
        best_gate: dict[int, float] = {}
        for ch in chains:
            for st in ch.steps:
                for c in st["candidates"]:
                    i = ids.index(c["id"])
                    best_gate[i] = max(best_gate.get(i, -1.0), c["gate"])
        for i, tid in enumerate(ids):
            if i in in_chain:
                reason = ""
            elif i in rejected:
                ci, st = rejected[i]
                reason = f"gate dropped below beta * previous at step {st} of chain {ci}"
            else:
                reason = "never the best gate" if cfg.dmce else "w/o DMCE: only the anchors enter the context"
            chains_of = [ci for ci, ch in enumerate(chains, start=1) if i in ch.members]
            tr.candidates.append(Candidate(
                stage="chains", id=tid, score=round(best_gate.get(i, float(rel[i])), 4), rank=i + 1,
                kept=i in in_chain, turn_ids=[tid], reason=reason, data={"chains": chains_of}))


__all__ = ["EXTENDED", "CoMConfig", "CoMSystem"]
