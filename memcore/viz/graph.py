"""Knowledge graphs as self-contained pyvis HTML: a generic drawer for any view that shows entities and relations.

The HTML inlines vis.js (no CDN) and escapes every text. A system's view draws its subgraphs with it
(graph_html, frame_height); Replay's ego-graph picker uses it for any memory holding `entity` and
`relation` items (relation_subgraph, ego_subgraph, node_choices).

A subgraph is {"nodes": [{"id", "label", "kind", "title"?, "highlight"?}],
"edges": [{"source", "target", "label"?, "title"?, "highlight"?}]}.

Escaping: pyvis writes node and edge data with Jinja's `tojson` (<, >, & and ' become \\u escapes,
so text cannot leave the <script> block) and vis-network 9 draws labels on a canvas and tooltips
with innerText, so memory text is shown literally and never parsed as HTML.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from memcore.viz.graph_script import FIT_SCRIPT as _FIT
from memcore.viz.safe import esc, shorten

_REMOTE_TAGS = (
    re.compile(r"<link\b[^>]*\bhref=[^>]*>", re.I | re.S),
    re.compile(r"<script\b[^>]*\bsrc=[^>]*>\s*</script>", re.I | re.S),
)
_SHAPES = {"entity": "dot", "passage": "box", "experience": "diamond", "cluster": "triangle", "turn": "box",
           "community": "dot"}
_SHAPE_NAMES = {"entity": "dot entity", "passage": "box passage", "experience": "diamond experience",
                "cluster": "triangle cluster", "turn": "box turn", "community": "large dot: a community (its size)"}
LAYOUT_SEED = 7  # vis-network's initial placement seed: the same data is laid out the same way every time


def strip_remote(html: str) -> str:
    """Remove every <link href> and <script src> tag (pyvis adds bootstrap CDN and node_modules ones)."""
    for rx in _REMOTE_TAGS:
        html = rx.sub("", html)
    return html


ROLE_COLORS = {"focus": "#CC79A7", "seed": "#D55E00", "expanded": "#56B4E9", "new": "#E69F00", "gold": "#009E73"}
OTHER = "#BBBBBB"  # nodes without a role: grey, their kind shown by the shape
ROLE_NAMES = {"focus": "picked entity", "seed": "seed (matched the question)", "expanded": "expanded (reached from a seed)",
              "new": "new at this step", "gold": "gold evidence"}
PATH_COLOR = "#009E73"
MAX_LABELS = 14  # besides seeds, new and gold nodes, only the best-connected nodes carry a label


def _degrees(subgraph: Mapping[str, Any]) -> dict[str, int]:
    deg: dict[str, int] = {}
    for e in subgraph.get("edges", []):
        for end in (str(e["source"]), str(e["target"])):
            deg[end] = deg.get(end, 0) + 1
    return deg


def labelled(subgraph: Mapping[str, Any], max_labels: int = MAX_LABELS) -> set[str]:
    """Node ids drawn with a label: every node with a role (seed, new, gold) or `always_label`, else the `max_labels`
    best-connected nodes of degree >= 2 (the others show their text on hover only)."""
    return set(label_ranks(subgraph, max_labels))


_ROLE_RANK = {"focus": 0, "gold": 1, "seed": 2, "new": 3, "expanded": 4}


def label_ranks(subgraph: Mapping[str, Any], max_labels: int = MAX_LABELS) -> dict[str, int]:
    """{node id: rank} of the labelled nodes (see `labelled`), 0 first: where two labels would overlap on screen,
    the page keeps the better-ranked one (roles by importance, then by degree)."""
    deg = _degrees(subgraph)
    roles = {str(n["id"]): str(n.get("role")) for n in subgraph.get("nodes", []) if n.get("role")}
    always = [str(n["id"]) for n in subgraph.get("nodes", []) if n.get("always_label") and str(n["id"]) not in roles]
    ranked = sorted((d, nid) for nid, d in deg.items() if d >= 2 and nid not in roles and nid not in always)
    order = sorted(roles, key=lambda nid: (_ROLE_RANK.get(roles[nid], 5), -deg.get(nid, 0), nid))
    order += sorted(always, key=lambda nid: (-deg.get(nid, 0), nid))  # e.g. a community: labelled whatever its degree
    order += [nid for _, nid in ranked[::-1][:max_labels]]
    return {nid: i for i, nid in enumerate(order)}


LEGEND_PX = 70  # the legend above a graph (up to two lines at 1280 px) and the page's margins


def frame_height(graph_height: int) -> int:
    """The height of the frame that shows a graph_html page of this graph height in full (legend included)."""
    return graph_height + LEGEND_PX


def gold_path(subgraph: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Edges of a shortest path (ignoring direction) from a seed node to a gold node ([] when none)."""
    import networkx as nx

    g = nx.Graph()
    g.add_edges_from((str(e["source"]), str(e["target"])) for e in subgraph.get("edges", []))
    seeds = [str(n["id"]) for n in subgraph.get("nodes", []) if n.get("role") == "seed" and str(n["id"]) in g]
    golds = [str(n["id"]) for n in subgraph.get("nodes", []) if n.get("role") == "gold" and str(n["id"]) in g]
    best: list[str] = []
    for s in seeds:
        lengths = nx.single_source_shortest_path(g, s)
        for t in golds:
            if t in lengths and (not best or len(lengths[t]) < len(best)):
                best = lengths[t]
    return list(zip(best, best[1:], strict=False))


EGO_MAX_NODES = 40  # an ego graph draws the centre and at most this many neighbours; the rest are counted


def ego_subgraph(subgraph: Mapping[str, Any], center: str, radius: int = 1,
                 max_nodes: int = EGO_MAX_NODES) -> dict[str, Any]:
    """The neighbourhood of one node: nodes within `radius` hops (either direction) and the edges among them.
    At most `max_nodes` nodes besides the centre are kept, nearest first, then best-connected; "more" counts
    the neighbours left out (0 when all are drawn). The direct neighbours are marked `always_label` (labelled
    whatever their degree) and `neighbour` (the legend says so)."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(str(n["id"]) for n in subgraph.get("nodes", []))
    g.add_edges_from((str(e["source"]), str(e["target"])) for e in subgraph.get("edges", []))
    hops = nx.single_source_shortest_path_length(g, center, cutoff=radius) if center in g else {}
    near = sorted((n for n in hops if n != center), key=lambda n: (hops[n], -g.degree(n), n))
    keep = ({center} | set(near[:max_nodes])) if hops else set()
    # the direct neighbours carry their labels whatever their degree (a leaf has degree 1: unlabelled otherwise, so
    # an entity's neighbourhood read as one name among blank dots); where labels would overlap the page drops some
    return {"nodes": [{**n, "always_label": True, "neighbour": True} if hops.get(str(n["id"])) == 1 else n
                      for n in subgraph.get("nodes", []) if str(n["id"]) in keep],
            "edges": [e for e in subgraph.get("edges", []) if str(e["source"]) in keep and str(e["target"]) in keep],
            "more": max(0, len(near) - max_nodes)}


def node_choices(subgraph: Mapping[str, Any]) -> dict[str, str]:
    """{node id: label} of the subgraph's nodes, best-connected first (for an ego-graph picker)."""
    deg = _degrees(subgraph)
    nodes = sorted(subgraph.get("nodes", []), key=lambda n: (-deg.get(str(n["id"]), 0), str(n.get("label", ""))))
    return {str(n["id"]): str(n.get("label") or n["id"]) for n in nodes}


def legend_html(roles: Iterable[str], path: bool, kinds: Iterable[str] = ("entity", "passage", "experience"),
                edge_labels: bool = False, neighbours: bool = False) -> str:
    """A legend row (static text) for the node roles, node kinds (shapes) and gold path drawn: nothing that is
    not drawn. `neighbours`: an ego graph, whose picked entity's direct neighbours are labelled too."""
    items = [f'<span style="display:inline-block;width:12px;height:12px;border-radius:6px;background:{ROLE_COLORS[r]};'
             f'margin:0 4px 0 12px;vertical-align:middle"></span>{esc(ROLE_NAMES[r])}' for r in ROLE_COLORS if r in roles]
    kinds = list(dict.fromkeys(kinds))
    shapes = [_SHAPE_NAMES.get(k, k) for k in kinds]
    items.append('<span style="display:inline-block;width:12px;height:12px;border-radius:6px;background:#BBBBBB;'
                 f'margin:0 4px 0 12px;vertical-align:middle"></span>other (shape: {esc(", ".join(shapes))})')
    if path:
        items.append(f'<span style="display:inline-block;width:22px;height:4px;background:{PATH_COLOR};'
                     'margin:0 4px 0 12px;vertical-align:middle"></span>path from the question to the gold turn')
    kinds = set(kinds)
    edges = "" if not edge_labels else (" · edges labelled with their relation (and time); between communities, "
                                        "how many relations" if "community" in kinds and "entity" in kinds else
                                        " · an edge counts the relations between two communities"
                                        if "community" in kinds else " · edges labelled with their relation (and time)")
    labels = (" · labels on the picked entity, its direct neighbours and the best-connected nodes" if neighbours
              else " · labels on the best-connected nodes")
    return ('<div style="font:13px sans-serif;color:#1F2933;padding:2px 0 6px">' + "".join(items) + edges
            + labels + "; hover any node for its full text</div>")


EDGE_LABELS_MAX = 120  # edges up to which every edge carries its label (when asked); more: only highlighted ones


def graph_html(subgraph: Mapping[str, Any], height: int = 520, physics: bool = True, edge_labels: bool = False,
               max_labels: int = MAX_LABELS) -> str:
    """A standalone HTML page drawing the subgraph with pyvis (works offline; labels are escaped).

    Nodes are coloured by role ("seed", "expanded", "new", "gold"; `highlight` counts as seed) with a legend,
    else by kind; only role and best-connected nodes carry labels (all show their text on hover); the shortest
    path from a seed to a gold node is drawn thick; `edge_labels`: every edge carries its label (up to
    EDGE_LABELS_MAX edges), else only highlighted and path edges; a label (node or edge) that would overlap a
    better-ranked one is left out; nodes and edges are added in id order and placed with a fixed seed (the same
    data is drawn the same way); the drawing is fitted to its frame after layout."""
    from pyvis.network import Network

    subgraph = {"nodes": sorted(({**n, "role": n.get("role") or ("seed" if n.get("highlight") else "")}
                                 for n in subgraph.get("nodes", [])), key=lambda n: str(n["id"])),
                "edges": sorted(subgraph.get("edges", []), key=lambda e: (str(e["source"]), str(e["target"]),
                                                                          str(e.get("label", ""))))}
    every_edge = edge_labels and len(subgraph["edges"]) <= EDGE_LABELS_MAX
    roled = {str(n["id"]) for n in subgraph["nodes"] if n["role"] in ("focus", "seed")}
    show = label_ranks(subgraph, max_labels)
    path = {frozenset(p) for p in gold_path(subgraph)}
    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line", notebook=False)
    net.templateEnv = _templates(net.template_dir)  # compiled once: pyvis compiles its template for every graph
    ids: set[str] = set()
    for n in subgraph["nodes"]:
        nid = str(n["id"])
        if nid in ids:
            continue
        ids.add(nid)
        kind, role = str(n.get("kind", "entity")), n["role"]
        fill = ROLE_COLORS.get(role) or OTHER
        size = n.get("size") or (18 if role else 11)
        net.add_node(nid, label=shorten(n.get("label", nid), 32) if nid in show else " ", __rank=show.get(nid, 999),
                     title=str(n.get("title") or n.get("label", nid)),
                     color={"background": fill, "border": "#1F2933" if role else "#666666"},
                     borderWidth=3 if role else 1, shape=_SHAPES.get(kind, "dot"), size=size,
                     font={"size": 15, "color": "#1F2933", "strokeWidth": 3, "strokeColor": "#FFFFFF"})
    for e in subgraph["edges"]:
        s, t = str(e["source"]), str(e["target"])
        for end in (s, t):
            if end not in ids:
                ids.add(end)
                net.add_node(end, label=" ", title=end, color=OTHER, size=8)
        on_path, hl = frozenset((s, t)) in path, bool(e.get("highlight"))
        centre = s in roled or t in roled  # an edge of a focus / seed / new node: its label kept first
        net.add_edge(s, t, __rank=0 if centre else 1, label=shorten(e.get("label", ""), 32) if (on_path or hl or every_edge) else "",
                     title=str(e.get("title") or e.get("label", "")),
                     color=PATH_COLOR if on_path else ROLE_COLORS["new" if e.get("role") == "new" else "seed"] if hl
                     else "#B0B0B0", width=5 if on_path else 3 if hl else e.get("width", 1.2),
                     font={"size": 12, "align": "horizontal", "strokeWidth": 3, "strokeColor": "#FFFFFF"})
    net.toggle_physics(physics)
    if physics:
        net.set_options('{"physics": {"stabilization": {"iterations": 250}, '
                        '"barnesHut": {"springLength": 160, "avoidOverlap": 0.4}}, "edges": {"smooth": false}, '
                        '"interaction": {"hover": true, "tooltipDelay": 120}, '
                        f'"layout": {{"randomSeed": {LAYOUT_SEED}, "improvedLayout": true}}}}')
    roles = {n["role"] for n in subgraph["nodes"]}
    legend = legend_html(roles, bool(path), sorted({str(n.get("kind", "entity")) for n in subgraph["nodes"]}),
                         every_edge, neighbours=any(n.get("neighbour") for n in subgraph["nodes"]))
    page = strip_remote(net.generate_html(notebook=False))
    return page.replace('<div id="mynetwork"', legend + '<div id="mynetwork"', 1).replace("</body>", _FIT + "</body>", 1)


@functools.cache
def _templates(folder: str) -> Any:
    """One Jinja environment per template folder for every graph_html page, which keeps pyvis's page template
    compiled (pyvis makes an environment per Network: parsing and compiling the template was ~2/3 of a graph page's
    ~56 ms, paid at every Replay step that draws a graph). Jinja environments are safe to render from threads."""
    from jinja2 import Environment, FileSystemLoader

    return Environment(loader=FileSystemLoader(folder))


def relation_subgraph(entities: Iterable[Any], relations: Iterable[Any], highlight: Iterable[str] = (),
                      max_edges: int = 150) -> dict[str, Any]:
    """A subgraph from entity and relation items (MemoryItem-like: id, text, metadata; a relation's metadata names
    its ends: src_id / tgt_id or src / tgt, its `rel` and `time`)."""
    hl = set(highlight)
    names = {e.id: e.text for e in entities}
    nodes = [{"id": eid, "label": name, "kind": "entity", "role": "new" if eid in hl else "",
              "highlight": eid in hl}
             for eid, name in names.items()]
    edges = []
    for r in list(relations)[-max_edges:]:
        m = r.metadata
        src, tgt = m.get("src_id") or m.get("src"), m.get("tgt_id") or m.get("tgt")
        if not src or not tgt:
            continue
        when = f" ({m['time']})" if m.get("time") else ""
        edges.append({"source": src, "target": tgt, "label": f"{m.get('rel', '')}{when}", "title": f"{r.text}{when}",
                      "rel": str(m.get("rel", "")), "time": str(m.get("time") or ""),
                      "highlight": r.id in hl, "role": "new" if r.id in hl else "", "id": r.id,
                      "step": getattr(r, "created_step", None)})
        for end, label in ((src, m.get("src", src)), (tgt, m.get("tgt", tgt))):
            if end not in names:
                names[end] = label
                nodes.append({"id": end, "label": label, "kind": "entity", "role": ""})
    used = {e["source"] for e in edges} | {e["target"] for e in edges}
    return {"nodes": [n for n in nodes if n["id"] in used or n["role"]], "edges": edges}
