"""The embedding map of a memory: every stored item of every kind projected to 2-D, and a question placed on it.

Method pinned: PCA (`METHOD`). bench/embedding_map.py measured (2 cores, load 16-19, all-MiniLM-L6-v2 vectors,
offline engine), trustworthiness (sklearn.manifold.trustworthiness, cosine, k=10) and time:
    demo, a hierarchy memory     99 items   PCA 0.858 in <2 s    t-SNE 0.905 in 105 s
    demo, a graph memory        331 items   PCA 0.837 in <5 s    t-SNE 0.959 in 162 s
    LoCoMo conv-26, hierarchy   240 items   PCA 0.860 in 0.45 s  t-SNE 0.929 in 140 s
(the memories of the built-in systems that keep them; bench/embedding_map.py names each)
(PCA's first times include sklearn's warm-up.) t-SNE keeps neighbourhoods better but costs minutes on a loaded
machine and has no transform for a question (it is placed by a rule, not by the model); PCA places the question
with the same model (`transform`), is deterministic, and keeps the first computation within the page budget.
umap-learn is not installed (it brings numba and llvmlite). t-SNE stays selectable (`METHODS`): its question
goes to `TSNE_RULE`.

The projection is computed once per memory and method and cached in the store (memcore.store.projections),
keyed by the memory's version: a memory that changed is projected again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE, trustworthiness

from memcore.embed import normalise
from memcore.store.schema import INF_STEP
from memcore.store.view import MemoryView
from memcore.types import Conversation

METHOD = "pca"  # the pinned choice (see the module docstring and bench/embedding_map.py)
METHODS = ("pca", "tsne")
SEED = 0
TSNE_NEIGHBOURS = 10
TSNE_RULE = (f"t-SNE has no transform: the question is placed at the similarity-weighted mean of its "
             f"{TSNE_NEIGHBOURS} nearest items (cosine)")
PCA_RULE = "placed by the same PCA model (transform)"
COLUMNS = ["id", "kind", "text", "x", "y", "created_step", "session", "theme"]


@dataclass
class EmbeddingMap:
    """A memory's items in 2-D: `points` (COLUMNS, one row per item, the order of `vectors`), unit `vectors`,
    the projection `model` (PCA: mean and components), and whether this call `computed` it (False: from the
    store's cache)."""

    method: str
    version: str
    points: pd.DataFrame
    vectors: np.ndarray
    model: dict[str, Any] = field(default_factory=dict)
    computed: bool = False
    cache_error: str = ""  # why a computed projection could not be cached (it is shown all the same)


def project(vectors: np.ndarray, method: str = METHOD, seed: int = SEED) -> tuple[np.ndarray, dict[str, Any]]:
    """(n, 2) coordinates of unit vectors by `method` ('pca' or 'tsne', seeded) and the model to place new points
    (PCA: mean and components; t-SNE: none). Fewer than 3 items are laid out without a model fit."""
    n = len(vectors)
    if method not in METHODS:
        raise ValueError(f"unknown projection {method!r}; use one of {METHODS}")
    if n < 3:
        return np.array([[float(i), 0.0] for i in range(n)]).reshape(n, 2), {}
    if method == "pca":
        pca = PCA(n_components=2, random_state=seed).fit(vectors)
        return pca.transform(vectors), {"mean": pca.mean_.tolist(), "components": pca.components_.tolist()}
    perplexity = float(min(30.0, max(2.0, (n - 1) / 3)))
    xy = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed, metric="cosine").fit_transform(
        vectors)
    return xy, {}


def quality(vectors: np.ndarray, xy: np.ndarray, k: int = 10) -> float:
    """Trustworthiness of a 2-D layout (sklearn.manifold.trustworthiness, cosine, k neighbours): 1 = every
    2-D neighbour is a neighbour in the embedding space."""
    k = min(k, max(1, (len(vectors) - 1) // 2 - 1))
    return float(trustworthiness(vectors, xy, n_neighbors=k, metric="cosine"))


def _themes(rows: pd.DataFrame) -> dict[str, str]:
    """Each item's theme: the top of what was built on it (following `sources` up: the item none other is built
    from), as 'id: text'; an item nothing was built on and built on nothing stays without one ('')."""
    text = dict(zip(rows["id"], rows["text"], strict=True))
    parents: dict[str, str] = {}
    has_item_source: set[str] = set()
    for iid, sources in zip(rows["id"], rows["sources"], strict=True):
        for src in sources if sources is not None else ():
            if src in text and src != iid:
                parents.setdefault(src, iid)
                has_item_source.add(iid)
    out: dict[str, str] = {}
    for iid in rows["id"]:
        top, seen = iid, {iid}
        while top in parents and parents[top] not in seen:
            top = parents[top]
            seen.add(top)
        lone = top == iid and iid not in has_item_source
        out[iid] = "" if lone else f"{top}: {text[top][:40]}"
    return out


ITEM_COLUMNS = ["id", "kind", "text", "vector", "sources", "turn_ids", "created_step"]


def memory_items(mem: MemoryView, conv: Conversation | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """Every current item of every kind of a memory with a vector: a frame (COLUMNS but x, y) and the unit
    vectors in its row order; `session` is the session of the item's first turn (with `conv`), `theme` as in
    `_themes`. Read as columns (the store's typed row query), not as MemoryItem objects: 5,000 items in a
    fraction of a second."""
    frames = [mem.store.rows(f"mem_{kind}", columns=ITEM_COLUMNS, space=mem.space, conv_id=mem.conv_id,
                             valid_to=INF_STEP) for kind in sorted(mem.kind_counts())]
    rows = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else \
        pd.DataFrame(columns=ITEM_COLUMNS)
    rows = rows[rows["vector"].map(lambda v: v is not None and len(v) > 0)]
    rows = rows.sort_values(["kind", "id"], ignore_index=True)
    session = {t.turn_id: t.session for t in conv.turns} if conv is not None else {}
    df = pd.DataFrame({"id": rows["id"], "kind": rows["kind"], "text": rows["text"],
                       "created_step": rows["created_step"].astype(int),
                       "session": [next((session[t] for t in (ts if ts is not None else ()) if t in session), None)
                                   for ts in rows["turn_ids"]],
                       "theme": rows["id"].map(_themes(rows))}, columns=[c for c in COLUMNS if c not in ("x", "y")])
    vecs = normalise(np.stack(rows["vector"].to_numpy()).astype(np.float32)) if len(rows) else np.zeros((0, 0))
    return df, vecs


def embedding_map(mem: MemoryView, conv: Conversation | None = None, method: str = METHOD) -> EmbeddingMap:
    """The memory's map by `method`: the store's cached projection when the memory has not changed since,
    else computed now and cached (EmbeddingMap.computed says which; a cache write that fails leaves the map
    uncached, its error in EmbeddingMap.cache_error, and the next call computes again)."""
    version = mem.version()
    df, vecs = memory_items(mem, conv)
    cached = mem.projection(method, version)
    if cached is not None and cached.get("ids") == df["id"].tolist():
        xy, model, computed = np.array(cached["xy"], dtype=float).reshape(len(df), 2), cached["model"], False
        cache_error = ""
    else:
        xy, model = project(vecs, method)
        computed, cache_error = True, ""
        try:
            mem.save_projection(method, version, {"ids": df["id"].tolist(), "xy": np.round(xy, 5).tolist(),
                                                  "model": model})
        except Exception as e:
            cache_error = f"{type(e).__name__}: {e}"
    df = df.assign(x=xy[:, 0] if len(df) else [], y=xy[:, 1] if len(df) else [])[COLUMNS]
    return EmbeddingMap(method, version, df, vecs, model, computed, "" if not computed else cache_error)


def place(emap: EmbeddingMap, qvec: np.ndarray) -> tuple[float, float, str]:
    """(x, y, rule) of a question vector on the map: PCA's transform, or for t-SNE the TSNE_RULE."""
    q = normalise(np.asarray(qvec, dtype=np.float32).reshape(1, -1))[0]
    if emap.model.get("components"):
        x, y = (q - np.array(emap.model["mean"])) @ np.array(emap.model["components"]).T
        return float(x), float(y), PCA_RULE
    if not len(emap.points):
        return 0.0, 0.0, "an empty map"
    sims = emap.vectors @ q
    top = np.argsort(-sims, kind="stable")[:TSNE_NEIGHBOURS]
    w = np.clip(sims[top], 1e-6, None)
    xy = emap.points[["x", "y"]].to_numpy()[top]
    x, y = (w[:, None] * xy).sum(0) / w.sum()
    return float(x), float(y), TSNE_RULE


def mark_question(emap: EmbeddingMap, qvec: np.ndarray, retrieved: Iterable[str], near: int = 5) -> dict[str, Any]:
    """The question on the map: its place, the points with `mark` ('retrieved', 'near-miss' or '') and `rank`
    (a retrieved item's position in the context, 1 = first; a near-miss's rank by cosine to the question among
    all items), and the retrieved ids that are not items of this map (raw turns, items of another memory).
    Near-misses: the `near` items most similar to the question by cosine on the stored vectors that were not
    retrieved."""
    x, y, rule = place(emap, qvec)
    retrieved = list(dict.fromkeys(retrieved))
    pos = {i: r for r, i in enumerate(retrieved, start=1)}
    pts = emap.points.copy()
    pts["mark"], pts["rank"] = "", 0
    if len(pts):
        q = normalise(np.asarray(qvec, dtype=np.float32).reshape(1, -1))[0]
        sims = emap.vectors @ q
        pts["similarity"] = sims
        order = np.argsort(-sims, kind="stable")
        in_map = pts["id"].isin(list(pos))
        pts.loc[in_map, "mark"] = "retrieved"
        pts.loc[in_map, "rank"] = pts.loc[in_map, "id"].map(pos)
        misses = [i for i in order if not in_map.iloc[i]][:near]
        cos_rank = {i: r for r, i in enumerate(order, start=1)}
        for i in misses:
            pts.iloc[i, pts.columns.get_loc("mark")] = "near-miss"
            pts.iloc[i, pts.columns.get_loc("rank")] = cos_rank[i]
    else:
        pts["similarity"] = []
    off_map = [i for i in retrieved if i not in set(pts["id"])]
    return {"x": x, "y": y, "rule": rule, "points": pts, "off_map": off_map}
