"""xMemory (Hu et al.): messages -> episodes -> semantics -> themes, restructured by f = sparsity + semantics.

Construction: a boundary decision per incoming message closes episodes; each episode yields
semantics (.writing: the paper's episodic and semantic prompts by default, the earlier shared
roles as named options); each semantic attaches to the nearest theme or starts one; themes split
and merge when that raises f (see .themes) and are summarised by the paper's theme prompt.
Retrieval is top-down (Stage I / II, see .retrieval and .trace). Settings: .config; the Stage II
uncertainty proxy: .proxy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from memcore.systems import register_system
from memcore.systems.base import BaseSystem, turn_sort_key
from memcore.systems.xmemory import presets as _presets  # noqa: F401  (registers its ablation presets, sweeps)
from memcore.systems.xmemory import reader as _reader  # noqa: F401  (registers its reader family)
from memcore.systems.xmemory import roles as _roles  # noqa: F401  (registers this system's LLM roles)
from memcore.systems.xmemory import themes as xt
from memcore.systems.xmemory import trace as xtr
from memcore.systems.xmemory import writing as xw
from memcore.systems.xmemory.config import XMemoryConfig
from memcore.systems.xmemory.fidelity import FIDELITY
from memcore.systems.xmemory.offline import LABEL_END
from memcore.systems.xmemory.stats import MECHANISM
from memcore.types import MemoryItem, Question, Trace, Turn


def _minutes(a: str, b: str) -> float | None:
    try:
        return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds() / 60
    except ValueError:
        return None


def boundary_lane(llm: Any, cfg: XMemoryConfig, buffer: list[Turn], turns: list[Turn]) -> Any:
    """Yield (turn id, reason to close the episode before it or "", the role's error) for `turns` in order,
    starting from `buffer`: hard rules first (buffer cap, new session, time gap), then `episode_boundary`."""
    buffer = list(buffer)
    for turn in turns:
        reason, error = "", ""
        if buffer:
            last = buffer[-1]
            gap = _minutes(last.timestamp, turn.timestamp)
            if len(buffer) >= cfg.buffer_cap:
                reason = f"buffer cap {cfg.buffer_cap}"
            elif turn.session != last.session:
                reason = f"new session {turn.session}"
            elif gap is not None and gap > cfg.gap_minutes:
                reason = f"time gap {gap:.0f} min > {cfg.gap_minutes} min"
            else:
                llm.step = turn.index + 1
                res = llm.run("episode_boundary", {
                    "history": [t.render() for t in buffer], "new_messages": [turn.render()],
                    "gap_minutes": cfg.gap_minutes, "max_messages": cfg.episode_messages,
                }, stage="construction")
                error = res.error
                reason = (res.output.reason or "boundary") if res.output.should_end else ""
        if reason:
            buffer = []
        buffer.append(turn)
        yield turn.turn_id, reason, error


def theme_label_of(summary: str, words: int = 8) -> str:
    """A theme's short label: the summary's text before a colon that ends a word (": " or a final ":"; a colon
    inside a word, as in "10:30" or "javascript:alert", is part of the label), else its first sentence, at most
    8 words."""
    end = LABEL_END.search(summary[:81])
    head = summary[:end.start()] if end else summary.split(". ", 1)[0]
    toks = head.strip().rstrip(".").split()
    return " ".join(toks[:words]) + (" ..." if len(toks) > words else "")


@register_system
class XMemorySystem(BaseSystem):
    """Hierarchical memory with sparsity-semantics guided themes and top-down retrieval."""

    name = "xmemory"
    rank = 70
    title = "xMemory"
    paper = "Beyond RAG for Agent Memory: Retrieval by Decoupling and Aggregation (Hu et al.)"
    reader_family = "xmemory"  # its paper's reader prompts (reader.py)
    config_class = XMemoryConfig
    mechanism = MECHANISM
    fidelity = FIDELITY
    kinds = ("episode", "semantic", "theme")
    config: XMemoryConfig

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.buffer: list[Turn] = []
        self.moved: set[str] = set()
        self.stats: dict[str, int] = {}
        self.dirty: dict[str, None] = {}  # themes changed since the last merge pass / relabel
        self.retrieval_cache = xtr.RetrievalCache()  # kNN graphs and the proxy's term index

    # ------------------------------------------------------------- episodes
    def on_turn(self, turn: Turn) -> None:
        tid, reason, error = self._lane(turn).next()
        if tid != turn.turn_id:  # pragma: no cover - the lane walks the same turns
            raise RuntimeError(f"boundary lane at {tid}, ingest at {turn.turn_id}")
        if error:
            self.emit("updated", [turn.turn_id], f"boundary role failed: {error}", item_kind="turn")
        if reason:
            self._close_episode(reason)
        self.buffer.append(turn)

    def on_finish(self) -> None:
        if self.buffer:
            self._close_episode("end of conversation")

    def _turn_vec(self, turn: Turn) -> np.ndarray:
        return xt.unit(self.turn_vector(turn.turn_id))

    def _lane(self, turn: Turn) -> Any:
        """The boundary lane from this turn on: boundary decisions depend on the episode buffer alone, and
        the buffer on the decisions alone, so a hosted model decides the next boundaries while this thread
        writes episodes, facts and themes (produced ahead at concurrency > 1; see LLMClient.stream)."""
        return self.open_stream("boundary-lane", boundary_lane, self.config, list(self.buffer),
                                self.conv.turns[turn.index:], depth=0)

    def _close_episode(self, reason: str) -> None:
        turns, self.buffer = self.buffer, []
        ep = xw.write_episode(self, turns, reason)
        xw.distil(self, ep, turns)
        xt.merge_passes(self)
        self._relabel()

    def turn_vec(self, turn: Turn) -> np.ndarray:
        """A turn's unit vector (the shared turn embedding)."""
        return self._turn_vec(turn)

    # --------------------------------------------------------------- themes
    def members(self, theme_id: str) -> list[str]:
        """Semantic ids of a theme."""
        return xtr.members(self.memory, theme_id)

    def local_themes(self, theme_ids: list[str], extra: dict[str, list[str]] | None = None) -> xt.Local:
        """`theme_ids` plus the 10 nearest themes of the first; `extra` overrides membership."""
        tids, M = self.memory.matrix("theme")
        near = [tids[j] for j in np.argsort(-(M @ self.memory.vector(theme_ids[0])), kind="stable")
                if tids[j] not in theme_ids][: self.config.neighbour_themes] if tids else []
        ids = [*theme_ids, *near]
        mem = {t: (extra or {}).get(t) or self.members(t) for t in ids}
        ids = [t for t in ids if mem[t]]
        return xt.Local.build(ids, [np.stack([self.memory.vector(s) for s in mem[t]]) for t in ids])

    def set_members(self, theme: MemoryItem, members: list[str]) -> None:
        """Make `members` the theme's semantics (moves are tracked; centroid and turn ids refreshed)."""
        for sid in members:
            sem = self.memory.get(sid)
            if sem.metadata.get("theme") != theme.id:
                if sem.metadata.get("theme"):
                    self.moved.add(sid)
                else:
                    sem.metadata["first_theme"] = theme.id
                sem.metadata["theme"] = theme.id
                self.memory.touch(sem, self.step)
        theme.metadata["members"] = list(members)
        theme.metadata["size"] = len(members)
        theme.sources = list(members)
        theme.turn_ids = sorted({t for s in members for t in self.memory.get(s).turn_ids}, key=turn_sort_key)
        theme.updated_step = self.step
        self.memory.put(theme, xt.centroid(np.stack([self.memory.vector(s) for s in members])))
        self.dirty[theme.id] = None

    def new_theme(self, members: list[str]) -> MemoryItem:
        """A new theme holding `members`."""
        first = self.memory.get(members[0])
        th = self.new_item("theme", first.text, members, [], vector=self.memory.vector(first.id), members=[],
                           label="", summary="")
        self.set_members(th, members)
        return th

    def attach(self, sem: MemoryItem) -> None:
        """Attach a new semantic to the nearest theme (cos >= its threshold) or start a theme."""
        cfg, v = self.config, self.memory.vector(sem.id)
        tids, M = self.memory.matrix("theme")
        if not tids:
            th = self.new_theme([sem.id])
            self.stats["new_theme"] = self.stats.get("new_theme", 0) + 1
            self.emit("created", [th], f"first theme, seeded by {sem.id}", f_before=None, f_after=None, candidates=[])
            return
        sims = M @ v
        top = [int(j) for j in np.argsort(-sims, kind="stable")[:3]]
        local = self.local_themes([tids[top[0]]])
        cands = []
        for j in top:
            size = len(self.members(tids[j]))
            thr = cfg.attach_cos_small if size < cfg.max_theme else cfg.attach_cos
            extra = {tids[j]: [*self.members(tids[j]), sem.id]}
            f = self.local_themes([tids[top[0]]], extra).f(cfg.sem_eps) if tids[j] in local.theme_ids else None
            cands.append({"theme": tids[j], "cos": round(float(sims[j]), 4), "size": size, "threshold": thr,
                          "f": None if f is None else round(f, 6)})
        X_new = np.concatenate([local.X, v[None, :]])
        f_new = xt.objective(X_new, [*local.parts, np.array([len(local.X)])], cfg.sem_eps)
        cands.append({"theme": "(new theme)", "f": round(f_new, 6)})
        f0, best = local.f(cfg.sem_eps), cands[0]
        if best["cos"] >= best["threshold"]:
            th = self.memory.get(best["theme"])
            self.set_members(th, [*self.members(th.id), sem.id])
            self.stats["attached"] = self.stats.get("attached", 0) + 1
            self.emit("linked", [sem, th], f"attached to {th.id}: cos {best['cos']:.2f} >= {best['threshold']}",
                      f_before=round(f0, 6), f_after=best["f"], candidates=cands)
            xt.split_theme(self, th)
        else:
            th = self.new_theme([sem.id])
            self.stats["new_theme"] = self.stats.get("new_theme", 0) + 1
            self.emit("created", [th, sem], f"new theme: nearest {best['theme']} cos {best['cos']:.2f} < "
                      f"{best['threshold']}", f_before=round(f0, 6), f_after=round(f_new, 6), candidates=cands)

    def _relabel(self) -> None:
        """Summarise every changed theme (`xmemory_theme`, the paper's Theme Generation prompt); the label is
        the summary's head (before a colon that ends a word, at most 8 words). Independent of each other: asked at once."""
        tids, M = self.memory.matrix("theme")
        pos = {t: i for i, t in enumerate(tids)}
        todo = [t for t in self.dirty if t in pos]
        calls = []
        for tid in todo:
            near = [tids[j] for j in np.argsort(-(M @ M[pos[tid]]), kind="stable")[1:21]]
            facts = [self.memory.get(s).text for s in self.members(tid)]
            others = [" ".join(self.memory.get(s).text for s in self.members(t)) for t in near]
            calls.append(("xmemory_theme", {"facts": facts, "other_themes": others}))
        for tid, (_, inputs), res in zip(todo, calls, self.llm.run_many(calls, stage="construction"), strict=True):
            th = self.memory.get(tid)
            summary = " ".join(str(res.output.text).split())
            label = theme_label_of(summary) or "theme"
            th.metadata.update(label=label, summary=summary)
            th.text = summary or label
            self.memory.touch(th, self.step)
            self.emit("updated", [th], f"theme labelled {label!r} ({len(inputs['facts'])} members)", label=label,
                      **({"error": res.error} if res.error else {}))
        self.dirty.clear()

    # ---------------------------------------------------------------- state
    def reassignment_ratio(self) -> float:
        """Paper Sec. 5.3 "dynamic reassignment ratio": semantics moved by a split or merge at least once
        during construction (counted once; attaching is not a move) / all semantics."""
        n = len(self.memory.of_kind("semantic"))
        return len(self.moved) / n if n else 0.0

    def net_reassignment_ratio(self) -> float:
        """Share of semantics whose current theme differs from the one they were first attached to."""
        sems = self.memory.of_kind("semantic")
        moved = [s for s in sems if s.metadata.get("first_theme", s.metadata.get("theme")) != s.metadata.get("theme")]
        return len(moved) / len(sems) if sems else 0.0

    def state(self) -> dict[str, Any]:
        return {**super().state(), "buffer": [t.index for t in self.buffer], "moved": sorted(self.moved),
                "stats": dict(self.stats), "theme_count": len(self.memory.of_kind("theme")),
                "reassignment_ratio": round(self.reassignment_ratio(), 4),
                "net_reassignment_ratio": round(self.net_reassignment_ratio(), 4)}

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        self.buffer = [self.conv.turns[i] for i in state.get("buffer", [])]
        self.moved = set(state.get("moved", []))
        self.stats = dict(state.get("stats", {}))

    def restore(self, at_step: int | None = None, *, kinds: Sequence[str] | None = None,
                checkpoint: Mapping[str, Any] | None = None) -> None:
        """BaseSystem.restore; a finished memory restored whole to answer questions (the checkpoint given, done, as
        Workbench's held memories are) also gets the term index of its offline uncertainty proxy now (~0.5 s on a
        BEAM 1M chat, else paid by the first question; Ask restores while the question is written)."""
        super().restore(at_step, kinds=kinds, checkpoint=checkpoint)
        if (at_step is None and checkpoint is not None and checkpoint.get("done") and self.config.stage_two
                and self.llm.is_offline and "episode" in (self.kinds if kinds is None else kinds)):
            xtr.prime(self.memory, self.conv.turns, self.retrieval_cache)

    # ------------------------------------------------------------ retrieval
    def retrieve(self, question: Question) -> Trace:
        tr = self.new_trace(question)
        rt = xtr.Retrieval(self.memory, self.config, self.llm, self.conv.turns, self.search_items, self.embed_one,
                           self.retrieval_cache)
        return xtr.retrieve(rt, question, tr, self.reassignment_ratio(), self.net_reassignment_ratio())


__all__ = ["XMemoryConfig", "XMemorySystem", "boundary_lane", "theme_label_of"]
