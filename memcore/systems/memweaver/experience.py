"""MemWeaver experience memory: DBSCAN clusters of turns, coherence checks, routing, induction.

Per session, turns are taken in windows of 12. While no cluster exists, a window is clustered
with DBSCAN (cosine, eps 0.3, min_samples 2); every group, the noise group too, gets a
coherence check (`mw_coherence`); coherent groups become clusters, incoherent ones are
re-clustered (at most 3 rounds; a round stops early when DBSCAN returns the same groups, as
a deterministic re-run cannot change them), and what is left pends. Once clusters exist,
each turn is routed by cosine to the cluster centroids: >= 0.8 joins directly; otherwise the
top-5 clusters with cosine >= 0.5 go to the router (`mw_router`); otherwise the turn pends.
Pending turns are re-clustered once more than 12 have pended since the last attempt (so a
stubborn noise group costs one attempt per 12 turns, not one per turn). A cluster whose add
buffer reaches `buffer` turns (4: the paper's App. B; the public code uses 5) gets its centroid
recomputed and its experiences re-induced (`mw_experience`). An induced experience is accepted
only when it cites at least `experience_min_sources` (2) distinct turns of the cluster (Sec. 4.3:
"explicitly supported by multiple dialogue units"); the rest are rejected with an event.
Single-turn groups are not clustered (no call): they pend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from memcore.llm.client import LLMClient
from memcore.systems.memory import WorkingMemory
from memcore.systems.memweaver.config import MemWeaverConfig
from memcore.systems.memweaver.graph import GraphMemory
from memcore.types import Event, MemoryItem

MAX_INDUCTION_TURNS = 24  # most recent members shown to the induction role


def dbscan_groups(vecs: np.ndarray, eps: float, min_samples: int) -> list[list[int]]:
    """DBSCAN (cosine) groups as index lists: clusters in label order, then the noise group."""
    if len(vecs) == 0:
        return []
    if len(vecs) == 1:
        return [[0]]
    from sklearn.cluster import DBSCAN  # lazy: scikit-learn takes seconds to import

    labels = DBSCAN(eps=eps, min_samples=min_samples, metric="cosine").fit_predict(vecs)
    groups: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(int(lab), []).append(i)
    return [groups[k] for k in sorted(groups) if k >= 0] + ([groups[-1]] if -1 in groups else [])


def cohesion(vecs: np.ndarray) -> float:
    """Mean cosine of unit vectors to their normalised centroid."""
    c = vecs.mean(axis=0)
    n = float(np.linalg.norm(c))
    return float((vecs @ (c / n)).mean()) if n > 0 else 0.0


def induced_members(cluster: dict[str, Any]) -> list[str]:
    """A cluster's members as of its last induction: the buffered joins are the last members."""
    members, buffered = cluster["members"], len(cluster["buffer"])
    return members[: len(members) - buffered] if buffered else list(members)


@dataclass
class Route:
    """A routing decision for one turn: join (direct), router (shortlist for the LLM) or pending."""

    decision: str
    best: str = ""
    best_sim: float = 0.0
    shortlist: dict[str, float] = field(default_factory=dict)


def route(vec: np.ndarray, centroids: dict[str, np.ndarray], join: float, low: float, top: int) -> Route:
    """Three-way routing by cosine to cluster centroids (ties broken by cluster id)."""
    if not centroids:
        return Route("pending")
    sims = sorted(((float(vec @ c), cid) for cid, c in centroids.items()), key=lambda x: (-x[0], x[1]))
    best_sim, best = sims[0]
    if best_sim >= join:
        return Route("join", best, best_sim)
    short = {cid: round(s, 4) for s, cid in sims[:top] if s >= low}
    return Route("router" if short else "pending", best, best_sim, short)


class CentroidIndex:
    """The cluster centroids as one float64 matrix, so routing a turn costs one matrix-vector product and
    not a Python sort over every cluster (routing against all clusters is the paper's; only its constant
    changes).

    The product only picks the clusters that can rank in the top `top`: every float32 dot product is within
    `delta` of its float64 value (d * 2^-24 * |v| * |c| bounds the rounding of any summation order; twice that
    is kept), so a cluster more than 2 * delta below the top-th approximate cosine has an exact cosine below
    at least `top` others. `route()` then runs on those clusters alone, computing the same exact cosines
    (float(vec @ c)), rounding and tie-break by cluster id: the same Route as `route()` over all centroids."""

    def __init__(self) -> None:
        self.cents: dict[str, np.ndarray] = {}
        self.ids: list[str] = []
        self._row: dict[str, int] = {}
        self._mat = np.zeros((0, 0))
        self._cmax = 0.0  # the largest centroid norm ever set (a larger bound is still a bound)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, cid: object) -> bool:
        return cid in self.cents

    def __getitem__(self, cid: str) -> np.ndarray:
        return self.cents[cid]

    def __setitem__(self, cid: str, centroid: np.ndarray) -> None:
        self.put(cid, centroid)

    def put(self, cid: str, centroid: np.ndarray) -> None:
        """Set (add or replace) a cluster's centroid."""
        c = np.asarray(centroid)
        if self._mat.shape[1] != c.shape[0]:
            self._mat = np.zeros((max(16, 2 * len(self.ids)), c.shape[0]))
            for i, old in enumerate(self.ids):
                self._mat[i] = self.cents[old]
        if cid not in self._row:
            if len(self.ids) == len(self._mat):
                self._mat = np.concatenate([self._mat, np.zeros_like(self._mat)])
            self._row[cid] = len(self.ids)
            self.ids.append(cid)
        self._mat[self._row[cid]] = c
        self.cents[cid] = centroid
        self._cmax = max(self._cmax, float(np.linalg.norm(c.astype(np.float64))))

    def candidates(self, vec: np.ndarray, top: int) -> dict[str, np.ndarray]:
        """The centroids that can rank in the top max(top, 1) by exact cosine to `vec` (all, when unsure)."""
        k = len(self.ids)
        kk = min(max(top, 1), k)
        if kk >= k:
            return self.cents
        v = np.asarray(vec, dtype=np.float64)
        approx = self._mat[:k] @ v
        if not np.isfinite(approx).all():
            return self.cents
        delta = 2.0 * len(v) * 2.0 ** -24 * float(np.linalg.norm(v)) * self._cmax
        kth = float(np.partition(approx, k - kk)[k - kk])
        return {self.ids[i]: self.cents[self.ids[i]] for i in np.flatnonzero(approx >= kth - 2.0 * delta)}

    def route(self, vec: np.ndarray, join: float, low: float, top: int) -> Route:
        """`route(vec, centroids, join, low, top)` over every centroid, computed on the candidates alone."""
        return route(vec, self.candidates(vec, top), join, low, top)


class ExperienceHost(Protocol):
    """What the experience memory needs of its system: the model, the memory and graph it prunes, the
    event log, turn texts and vectors, and the system's writer of experience items (graph edges too)."""

    memory: WorkingMemory
    graph: GraphMemory
    llm: LLMClient

    def emit(self, kind: str, items: list[MemoryItem] | list[str], reason: str, **data: Any) -> Event: ...

    def new_id(self, kind: str) -> str: ...

    def turn_line(self, turn_id: str) -> str: ...

    def turn_unit(self, turn_id: str) -> dict[str, str]: ...

    def turn_vector(self, turn_id: str) -> np.ndarray: ...

    def add_experience(self, kind: str, content: str, turn_ids: list[str], cluster: str) -> MemoryItem: ...


class ExperienceMemory:
    """Clusters, pending buffer and window of one conversation, writing experience items via the host."""

    def __init__(self, host: ExperienceHost, cfg: MemWeaverConfig) -> None:
        self.host = host
        self.cfg = cfg
        self.clusters: dict[str, dict[str, Any]] = {}
        self.pending: list[str] = []
        self.window: list[str] = []
        self.pended_since = 0
        self._pending_set: set[str] = set()  # membership of `pending` (a list scan per pended turn grew with it)
        self._cent = CentroidIndex()  # cluster id -> centroid, kept as one matrix for routing

    # ------------------------------------------------------------- state
    def state(self) -> dict[str, Any]:
        """JSON-able state: clusters, pending, window."""
        return {"clusters": self.clusters, "pending": self.pending, "window": self.window,
                "pended_since": self.pended_since}

    def load(self, st: dict[str, Any]) -> None:
        """Restore `state()`; centroids are recomputed as the live run holds them.

        The live run sets a centroid when a cluster is created or re-induced (from all members
        then) and leaves it alone while turns join the add buffer; members and buffer grow
        together, so the members as of the last induction are the members minus the buffer.
        """
        self.clusters = {k: dict(v) for k, v in (st.get("clusters") or {}).items()}
        self.pending, self.window = list(st.get("pending", [])), list(st.get("window", []))
        self.pended_since = int(st.get("pended_since", 0))
        self._pending_set = set(self.pending)
        self._cent = CentroidIndex()
        for cid, c in self.clusters.items():
            self._cent[cid] = self._centroid(induced_members(c))

    # ------------------------------------------------------------ driver
    def add_turn(self, turn_id: str, session_end: bool) -> None:
        """Buffer a turn; process the window when it holds 12 turns or the session ends."""
        self.window.append(turn_id)
        if len(self.window) >= self.cfg.window or session_end:
            self.process_window()

    def process_window(self) -> None:
        """Cluster (no clusters yet) or route the window's turns; re-cluster pending; re-induce."""
        ids, self.window = self.window, []
        if not ids:
            return
        if not self.clusters:
            self.cluster(ids, origin="window")
        else:
            for tid in ids:
                self.route_turn(tid)
        if self.pended_since > self.cfg.window:
            self.cluster(list(self.pending), origin="pending")
        for cid in sorted(self.clusters):
            if len(self.clusters[cid]["buffer"]) >= self.cfg.buffer:
                self.induce(cid, reason=f"add buffer reached {self.cfg.buffer}")

    def finish(self) -> None:
        """End of conversation: process the window and give recent pending turns a last clustering."""
        self.process_window()
        if self.pended_since > 0 and len(self.pending) >= 2:
            self.cluster(list(self.pending), origin="pending (end of conversation)")

    # ---------------------------------------------------------- clustering
    def cluster(self, ids: list[str], origin: str) -> None:
        """DBSCAN + coherence rounds over turns; coherent groups become clusters, the rest pends."""
        h, cfg = self.host, self.cfg
        taken = set(ids)
        self.pending = [t for t in self.pending if t not in taken]
        self._pending_set -= taken
        self.pended_since = 0
        remaining, last_groups = list(ids), None
        for rnd in range(1, cfg.recluster_rounds + 1):
            if len(remaining) < 2:
                break
            vecs = np.stack([h.turn_vector(t) for t in remaining])
            groups = [[remaining[i] for i in g] for g in dbscan_groups(vecs, cfg.eps, cfg.min_samples)]
            if last_groups is not None and sorted(map(sorted, groups)) == last_groups:
                h.emit("split", list(remaining), f"re-clustering round {rnd} gave the same groups as round {rnd - 1}: stop",
                       item_kind="cluster", decision="recluster-stop", turns=remaining)
                break
            last_groups = sorted(map(sorted, groups))
            nxt: list[str] = []
            for g in groups:
                if len(g) < 2:
                    nxt += g
                    continue
                if not self._coherent(g, rnd, origin):
                    nxt += g
            remaining = nxt
        for t in remaining:
            self._pend(t, f"left over after clustering ({origin})", count=False)

    def _coherent(self, group: list[str], rnd: int, origin: str) -> bool:
        h = self.host
        vecs = np.stack([h.turn_vector(t) for t in group])
        coh = cohesion(vecs)
        res = h.llm.run("mw_coherence", {"turns": [h.turn_line(t) for t in group]}, stage="construction")
        out = res.output
        if not out.is_coherent:
            h.emit("split", list(group), f"candidate group of {len(group)} turns judged incoherent; "
                   f"back to re-clustering: {out.reason}", item_kind="cluster", decision="incoherent",
                   turns=group, cohesion=round(coh, 4), round=rnd, origin=origin, error=res.error, role="mw_coherence")
            return False
        cid = h.new_id("cluster")
        self.clusters[cid] = {"members": list(group), "buffer": [], "center_text": out.label, "experiences": []}
        self._cent[cid] = self._centroid(group)
        h.emit("created", [cid], f"cluster from DBSCAN ({origin}, round {rnd}), judged coherent: "
               f"{out.reason}", item_kind="cluster", decision="cluster-created", turns=group,
               cohesion=round(coh, 4), label=out.label, round=rnd, role="mw_coherence")
        self.induce(cid, reason="new coherent cluster")
        return True

    # ------------------------------------------------------------- routing
    def route_turn(self, tid: str) -> None:
        """Route one turn: join the best cluster, ask the router, or pend."""
        h, cfg = self.host, self.cfg
        r = self._cent.route(h.turn_vector(tid), cfg.join_sim, cfg.route_sim, cfg.router_top)
        if r.decision == "join":
            self._join(r.best, tid, f"cosine {r.best_sim:.3f} to the centroid >= {cfg.join_sim}: joined directly",
                       decision="joined", sim=round(r.best_sim, 4))
            return
        if r.decision == "pending":
            self._pend(tid, f"best centroid cosine {r.best_sim:.3f} < {cfg.route_sim}", best=r.best,
                       sim=round(r.best_sim, 4))
            return
        cands = [{"cluster_id": cid, "center_text": self.clusters[cid]["center_text"],
                  "samples": [h.turn_line(t) for t in self._representatives(cid)]} for cid in r.shortlist]
        res = h.llm.run("mw_router", {"turn": h.turn_line(tid), "candidates": cands, "_sims": r.shortlist},
                        stage="construction")
        choice = str(res.output.cluster_id).strip()
        if choice in r.shortlist:
            self._join(choice, tid, f"router chose it among {len(r.shortlist)} clusters with cosine in "
                       f"[{cfg.route_sim}, {cfg.join_sim}): {res.output.reason}", decision="routed",
                       sim=r.shortlist[choice], shortlist=r.shortlist, role="mw_router")
        else:
            self._pend(tid, f"router returned none among {len(r.shortlist)} candidates: "
                       f"{res.output.reason}", shortlist=r.shortlist, error=res.error, role="mw_router")

    def _join(self, cid: str, tid: str, reason: str, **data: Any) -> None:
        c = self.clusters[cid]
        c["members"].append(tid)
        c["buffer"].append(tid)
        self.host.emit("linked", [cid, tid], reason, item_kind="cluster", buffer=len(c["buffer"]), **data)

    def _pend(self, tid: str, reason: str, count: bool = True, **data: Any) -> None:
        if tid not in self._pending_set:
            self.pending.append(tid)
            self._pending_set.add(tid)
        if count:
            self.pended_since += 1
        self.host.emit("moved", [tid], f"pending: {reason}", item_kind="cluster", decision="pending",
                       pending=len(self.pending), **data)

    # ----------------------------------------------------------- induction
    def induce(self, cid: str, reason: str) -> None:
        """Recompute the centroid and (re-)induce the cluster's experiences, replacing the old ones."""
        h, c = self.host, self.clusters[cid]
        self._cent[cid] = self._centroid(c["members"])
        c["buffer"] = []
        members = c["members"][-MAX_INDUCTION_TURNS:]
        units = [h.turn_unit(t) for t in members]
        res = h.llm.run("mw_experience", {
            "turns": [f"[{i}] Speaker={u['speaker']}: {u['text']}" for i, u in enumerate(units)]},
            stage="construction")
        out = res.output
        if out.center_text:
            c["center_text"] = out.center_text
        for old in c["experiences"]:
            if h.memory.remove(old) is not None:
                h.graph.unlink(old)
                h.emit("deleted", [old], f"experience replaced by re-induction of {cid}", item_kind="experience",
                       cluster=cid)
        c["experiences"] = []
        seen: set[str] = set()
        need = max(1, self.cfg.experience_min_sources)
        for spec in out.experiences:
            src = list(dict.fromkeys(members[i] for i in spec.source_indices if 0 <= i < len(members)))
            if not spec.content or not src or spec.content.lower() in seen:
                continue
            if len(src) < need:
                h.emit("updated", [cid], f"experience rejected: supported by {len(src)} turn(s) < {need} "
                       f"(paper: multiple units): {spec.content}", item_kind="cluster", decision="rejected",
                       turns=src, min_sources=need)
                continue
            seen.add(spec.content.lower())
            item = h.add_experience(spec.type, spec.content, src, cid)
            c["experiences"].append(item.id)
            h.emit("created", [item], f"experience induced ({reason}) from {len(src)} turns of {cid}",
                   cluster=cid, type=spec.type, about=item.metadata.get("about", []), error=res.error,
                   role="mw_experience")

    def _representatives(self, cid: str, k: int = 3) -> list[str]:
        """The k members closest to the cluster centroid (the router's samples)."""
        members = self.clusters[cid]["members"]
        sims = np.stack([self.host.turn_vector(t) for t in members]) @ self._cent[cid]
        return [members[i] for i in np.argsort(-sims, kind="stable")[:k]]

    def _centroid(self, members: list[str]) -> np.ndarray:
        v = np.stack([self.host.turn_vector(t) for t in members]).mean(axis=0)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v
