"""MemWeaver's fast paths give the plain computation's results: the routing index (the centroid matrix picks
candidates, `route()` decides on them: the Route `route()` gives over every centroid, the same exact cosines,
rounding and tie-break by cluster id), the pending membership set, the graph's kept counts per kind."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.systems.memweaver.experience import CentroidIndex, ExperienceMemory, route
from memcore.systems.memweaver.graph import GraphMemory


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _centroids(rng: np.random.Generator, k: int, dim: int) -> dict[str, np.ndarray]:
    """Random unit centroids with exact ties (copies under other ids) and near-ties (one ulp apart)."""
    base = _unit(rng, k, dim)
    cents = {}
    for i, c in enumerate(base):
        cents[f"cluster-{rng.integers(0, 10**6)}-{i}"] = c
        if i % 7 == 0:  # an exact copy: its cosine ties, the id breaks it
            cents[f"cluster-{rng.integers(0, 10**6)}-{i}b"] = c.copy()
        if i % 11 == 0:  # one ulp away in a few components: the float32 and float64 orders may differ
            near = c.copy()
            j = rng.integers(0, dim, size=3)
            near[j] = np.nextafter(near[j], np.float32(2.0))
            cents[f"cluster-{rng.integers(0, 10**6)}-{i}n"] = near
    return cents


@pytest.mark.parametrize("seed", range(12))
def test_index_routes_exactly_as_route_over_all_centroids(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dim = int(rng.choice([8, 64, 384]))
    cents = _centroids(rng, int(rng.integers(1, 400)), dim)
    index = CentroidIndex()
    for cid, c in cents.items():
        index[cid] = c
    filtered = 0
    for vec in list(_unit(rng, 30, dim)) + [next(iter(cents.values())), 0.5 * next(iter(cents.values()))]:
        sims = sorted((float(vec @ c) for c in cents.values()), reverse=True)
        for top in (0, 1, 3, 5, 10):
            # thresholds at the turn's own cosines: joins, routes and pends all happen, at the boundary too
            join = sims[min(len(sims) - 1, 2)] if top % 2 else 0.8
            low = sims[min(len(sims) - 1, max(top, 1) - 1)] if top != 3 else 0.5
            assert index.route(vec, join, low, top) == route(vec, cents, join, low, top)
            filtered += len(index.candidates(vec, top)) < len(cents)
    if len(cents) > 12:
        assert filtered  # the matrix did narrow the clusters down (the fast path ran)


def test_ties_beyond_top_are_broken_by_cluster_id() -> None:
    """Twenty clusters share one centroid: the shortlist is the five smallest ids, as route() sorts them."""
    c = _unit(np.random.default_rng(1), 1, 32)[0]
    cents = {f"cluster-{i:02d}": c.copy() for i in range(20, 0, -1)}
    cents["cluster-99"] = -c
    index = CentroidIndex()
    for cid, v in cents.items():
        index[cid] = v
    r = index.route(0.7 * c, join=0.99, low=0.1, top=5)
    assert r == route(0.7 * c, cents, 0.99, 0.1, 5)
    assert list(r.shortlist) == [f"cluster-{i:02d}" for i in range(1, 6)] and r.best == "cluster-01"


def test_replaced_centroids_and_growth_route_as_the_current_ones() -> None:
    """A re-induced cluster's centroid replaces its row; adding past the matrix's rows keeps every row."""
    rng = np.random.default_rng(7)
    first, second = _unit(rng, 60, 16), _unit(rng, 60, 16)
    index, cents = CentroidIndex(), {}
    for i, c in enumerate(first):
        index[f"c{i}"] = cents[f"c{i}"] = c
    for i in range(0, 60, 3):
        index[f"c{i}"] = cents[f"c{i}"] = second[i]
    assert len(index) == 60 and all(index[k] is v for k, v in cents.items())
    for vec in _unit(rng, 20, 16):
        assert index.route(vec, 0.6, 0.2, 5) == route(vec, cents, 0.6, 0.2, 5)
    assert index.route(first[1], 0.8, 0.5, 5).decision == "join"  # first[1]'s row is unchanged
    assert CentroidIndex().route(first[0], 0.8, 0.5, 5).decision == "pending"


def test_pending_membership_follows_the_pending_list() -> None:
    """`_pend` appends a turn once; a turn re-clustered away can pend again; load() rebuilds the membership."""

    class Host:
        def emit(self, *a, **kw):
            return None

    from memcore.systems.memweaver.config import MemWeaverConfig

    exp = ExperienceMemory(Host(), MemWeaverConfig())  # type: ignore[arg-type]
    for t in ["a", "b", "a", "c"]:
        exp._pend(t, "test")
    assert exp.pending == ["a", "b", "c"] and exp.pended_since == 4
    exp.cluster(["a"], origin="test")  # taken out of pending; a lone turn is not clustered: it pends again last
    assert exp.pending == ["b", "c", "a"] and exp.pended_since == 0
    exp.load({"pending": ["x"], "clusters": {}})
    exp._pend("x", "again")
    exp._pend("y", "new")
    assert exp.pending == ["x", "y"]


def _scanned_counts(g: GraphMemory) -> dict[str, int]:
    """counts() as first written, a scan of every node and edge: the reference."""
    out: dict[str, int] = {}
    for _, d in g.g.nodes(data=True):
        out[f"nodes:{d.get('kind', '?')}"] = out.get(f"nodes:{d.get('kind', '?')}", 0) + 1
    for _, _, d in g.g.edges(data=True):
        out[f"edges:{d.get('kind', '?')}"] = out.get(f"edges:{d.get('kind', '?')}", 0) + 1
    return out


@pytest.mark.parametrize("seed", range(8))
def test_graph_counts_follow_every_change_in_the_scanned_order(seed: int) -> None:
    """Entities, relations (some added twice, some removed), passages and experiences linked and unlinked (the
    first experiences too, so a kind's first node moves), a node re-added under another kind: after each step
    counts() equals a scan of the graph, numbers and key order."""
    import random

    rng = random.Random(seed)
    g = GraphMemory()
    assert g.counts() == {}
    ents: list[str] = []
    rels: list[tuple[str, str, str]] = []
    nodes: list[str] = []
    for step in range(300):
        op = rng.random()
        if op < 0.2 or len(ents) < 3:
            ents.append(f"ent-{step}")
            g.add_entity(ents[-1], f"name {step}")
        elif op < 0.4:
            src, tgt = rng.sample(ents, 2)
            rid = rng.choice([f"rel-{step}"] + [r[0] for r in rels[-3:]])  # an id again: the edge is replaced
            g.add_relation(rid, src, "knows", tgt, "")
            rels.append((rid, src, tgt))
        elif op < 0.5 and rels:
            g.remove_relation(*rels.pop(rng.randrange(len(rels))))
        elif op < 0.8:
            kind = rng.choice(["passage", "experience"])
            nid = rng.choice([f"{kind}-{step}"] + nodes[:2])  # the oldest nodes again, maybe as the other kind
            g.link(nid, kind, rng.sample(ents, min(3, len(ents))) + ["missing"], label=nid)
            nodes.append(nid)
        elif nodes:
            g.unlink(nodes.pop(rng.randrange(min(3, len(nodes)))))  # the oldest go first
        if rng.random() < 0.05:  # an edge to a node not in the graph adds it with no kind
            g.add_relation(f"rel-x{step}", ents[0], "at", f"place-{step}", "")
        assert g.counts() == _scanned_counts(g) and list(g.counts()) == list(_scanned_counts(g))
