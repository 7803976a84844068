"""Focused views of a knowledge graph, so a big one is never drawn as a hairball: its communities collapsed into one
node each (with counts; one expanded into its entities and labelled relations), and a time window (a session or a
range of steps). Works on graph_html's subgraph format (memcore.viz.graph); communities by networkx's Louvain
method with a fixed seed (the same graph gives the same communities).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from memcore.viz.safe import shorten

COMMUNITY_SEED = 7
MAX_COMMUNITIES = 24  # communities drawn as their own node; the smaller ones share one "N smaller communities" node
REST = "community:rest"
MORE = "community:more-of-"  # the members of an expanded community past MAX_EXPAND
MAX_EXPAND = 40


def communities(subgraph: Mapping[str, Any], seed: int = COMMUNITY_SEED) -> list[list[str]]:
    """The graph's communities (Louvain, seeded; direction ignored) of the entities in a relation, largest first,
    each sorted by degree then id (its best-connected entity first); then each entity in no relation alone, by id."""
    edges = tuple(sorted((str(e["source"]), str(e["target"])) for e in subgraph.get("edges", [])))
    related = {n for e in edges for n in e}
    alone = sorted({str(n["id"]) for n in subgraph.get("nodes", [])} - related)  # in no relation: each its own
    return [*(list(c) for c in _louvain(edges, seed)), *([n] for n in alone)]


@functools.lru_cache(maxsize=32)
def _louvain(edges: tuple[tuple[str, str], ...], seed: int) -> tuple[tuple[str, ...], ...]:
    """The communities of the entities in a relation, computed once per set of relations: Louvain takes ~80 ms on
    BEAM 1M's 850 related entities, and Replay redraws the same relations at every step that adds none (half the
    steps there; an entity added without a relation is a community of its own, so it does not change them). The
    partition is seeded, so the same relations always give the same one."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(sorted({n for e in edges for n in e}))
    g.add_edges_from(edges)
    if not g.number_of_nodes():
        return ()
    parts = nx.community.louvain_communities(g, seed=seed)
    out = [tuple(sorted(c, key=lambda n: (-g.degree(n), n))) for c in parts]
    return tuple(sorted(out, key=lambda c: (-len(c), c[0])))


def community_id(i: int) -> str:
    """The node id of the i-th community."""
    return f"community:{i + 1}"


def collapsed(subgraph: Mapping[str, Any], comms: list[list[str]], expand: int | None = None,
              max_communities: int = MAX_COMMUNITIES, max_expand: int = MAX_EXPAND) -> dict[str, Any]:
    """The graph with each community drawn as one node ("Name, Name +N" with its entity and relation counts; the
    communities past `max_communities` share one node), the relations between two communities as one edge
    labelled with their count; community `expand` (an index) is drawn as its `max_expand` best-connected entities
    with their own relations, its other members as one "N more of this community" node.
    A node with a role (e.g. "new") gives its community that role. "communities" lists (id, label, size)."""
    names = {str(n["id"]): str(n.get("label") or n["id"]) for n in subgraph.get("nodes", [])}
    roles = {str(n["id"]): str(n.get("role") or "") for n in subgraph.get("nodes", []) if n.get("role")}
    where: dict[str, str] = {}
    listing = []
    for i, c in enumerate(comms):
        cid = community_id(i) if i < max_communities - 1 or len(comms) <= max_communities else REST
        for k, n in enumerate(c):  # an expanded community shows its best-connected members, the rest as one node
            where[n] = (n if k < max_expand else f"{MORE}{i + 1}") if i == expand else cid
        if cid != REST:
            head = ", ".join(shorten(names.get(n, n), 14) for n in c[:2])
            listing.append((cid, f"{head}{f' +{len(c) - 2}' if len(c) > 2 else ''}", len(c)))
    inner: Counter[str] = Counter()
    between: Counter[tuple[str, str]] = Counter()
    edges = []
    for e in subgraph.get("edges", []):
        s, t = where.get(str(e["source"]), str(e["source"])), where.get(str(e["target"]), str(e["target"]))
        if s == str(e["source"]) and t == str(e["target"]) and expand is not None and s in names:
            edges.append(e)  # both ends are drawn entities (of the expanded community): the relation itself
        elif s == t:
            inner[s] += 1
        else:
            between[tuple(sorted((s, t)))] += 1  # type: ignore[arg-type]
    sizes = Counter(v for v in where.values() if v.startswith("community:") and not v.startswith(MORE))
    more = Counter(v for v in where.values() if v.startswith(MORE))
    rest = sum(1 for i in range(len(comms)) if i >= max_communities - 1 and len(comms) > max_communities)
    nodes = []
    biggest = max(sizes.values(), default=1)
    for cid, size in sorted(sizes.items()):
        members = [n for n, w in where.items() if w == cid]
        role = next((roles[m] for m in members if m in roles), "")
        head = next((lab for i, lab, _ in listing if i == cid), f"{rest} smaller communities")
        label = f"{size} · {head}" if cid != REST else f"{size} · {rest} smaller communities"
        nodes.append({"id": cid, "label": label, "kind": "community", "role": role, "always_label": True,
                      "size": 12 + 26 * (size / biggest) ** 0.5,
                      "title": f"{size} entities, {inner[cid]} relations inside: "
                               + ", ".join(names.get(m, m) for m in members[:30])
                               + (f" and {len(members) - 30} more" if len(members) > 30 else "")})
    for mid, size in more.items():
        nodes.append({"id": mid, "label": f"{size} more of this community", "kind": "community", "role": "",
                      "always_label": True, "size": 14, "title": f"{size} less-connected members of the expanded "
                                                                  "community: pick one's neighbourhood to see it"})
    if expand is not None and 0 <= expand < len(comms):
        nodes += [{**n, "title": n.get("title") or names[str(n["id"])]} for n in subgraph.get("nodes", [])
                  if where.get(str(n["id"])) == str(n["id"])]
    for (s, t), k in sorted(between.items()):
        edges.append({"source": s, "target": t, "label": f"{k} relation{'s' if k > 1 else ''}",
                      "title": f"{k} relation(s) between them", "width": 1 + min(6, k ** 0.5)})
    return {"nodes": nodes, "edges": edges, "communities": listing, "rest": rest}


def window(subgraph: Mapping[str, Any], first: int, last: int) -> dict[str, Any]:
    """The relations added between steps `first` and `last` (inclusive; an edge's `step`), with their entities."""
    edges = [e for e in subgraph.get("edges", []) if e.get("step") is not None and first <= int(e["step"]) <= last]
    used = {str(e["source"]) for e in edges} | {str(e["target"]) for e in edges}
    return {"nodes": [n for n in subgraph.get("nodes", []) if str(n["id"]) in used], "edges": edges}


def session_steps(sessions: Iterable[Any]) -> dict[str, tuple[int, int]]:
    """{session: (first step, last step)} from the turns' sessions in order (step i = turn i, from 1)."""
    out: dict[str, tuple[int, int]] = {}
    for step, s in enumerate(sessions, start=1):
        key = str(s)
        out[key] = (out[key][0], step) if key in out else (step, step)
    return out
