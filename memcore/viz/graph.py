"""Knowledge-graph views (MemWeaver) as self-contained pyvis HTML, and MemWeaver's view.

The HTML inlines vis.js (no CDN) and escapes every text. MemWeaver's view draws its retrieval
subgraph on Ask and its temporal graph growing on Replay.

A subgraph is {"nodes": [{"id", "label", "kind", "title"?, "highlight"?}],
"edges": [{"source", "target", "label"?, "title"?, "highlight"?}]}.

Escaping: pyvis writes node and edge data with Jinja's `tojson` (<, >, & and ' become \\u escapes,
so text cannot leave the <script> block) and vis-network 9 draws labels on a canvas and tooltips
with innerText, so memory text is shown literally and never parsed as HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from memcore.types import Trace
from memcore.viz.parts import Block, Html, Part, Row, Text
from memcore.viz.replay import ReplayData
from memcore.viz.safe import shorten
from memcore.viz.theme import kind_color
from memcore.viz.views import ASK, REPLAY, ItemsAt, SystemView, register_view

_REMOTE_TAGS = (
    re.compile(r"<link\b[^>]*\bhref=[^>]*>", re.I | re.S),
    re.compile(r"<script\b[^>]*\bsrc=[^>]*>\s*</script>", re.I | re.S),
)
# Fit the drawing to its frame once laid out, and whenever the frame is resized or first shown
# (a graph drawn inside a hidden tab starts with zero width).
_FIT = """<script type="text/javascript">
(function () {
  function fit() { if (window.network) { window.network.fit({animation: false}); } }
  if (window.network) { window.network.once("stabilizationIterationsDone", fit); }
  var box = document.getElementById("mynetwork");
  if (box && window.ResizeObserver) { new ResizeObserver(fit).observe(box); }
  setTimeout(fit, 400); setTimeout(fit, 1500);
})();
</script>
"""
_SHAPES = {"entity": "dot", "passage": "box", "experience": "diamond", "cluster": "triangle", "turn": "box"}


def strip_remote(html: str) -> str:
    """Remove every <link href> and <script src> tag (pyvis adds bootstrap CDN and node_modules ones)."""
    for rx in _REMOTE_TAGS:
        html = rx.sub("", html)
    return html


def graph_html(subgraph: Mapping[str, Any], height: int = 520, physics: bool = True) -> str:
    """A standalone HTML page drawing the subgraph with pyvis (works offline; labels are escaped)."""
    from pyvis.network import Network

    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line", notebook=False)
    ids: set[str] = set()
    for n in subgraph.get("nodes", []):
        nid = str(n["id"])
        if nid in ids:
            continue
        ids.add(nid)
        kind = str(n.get("kind", "entity"))
        hl = bool(n.get("highlight"))
        net.add_node(nid, label=shorten(n.get("label", nid), 40), title=str(n.get("title") or n.get("label", nid)),
                     color={"background": kind_color(kind), "border": "#D55E00" if hl else "#333333"},
                     borderWidth=4 if hl else 1, shape=_SHAPES.get(kind, "dot"), size=18 if hl else 12,
                     font={"size": 16, "color": "#1F2933"})
    for e in subgraph.get("edges", []):
        s, t = str(e["source"]), str(e["target"])
        for end in (s, t):
            if end not in ids:
                ids.add(end)
                net.add_node(end, label=shorten(end, 40), title=end, color=kind_color("entity"), size=8)
        net.add_edge(s, t, label=shorten(e.get("label", ""), 30), title=str(e.get("title") or e.get("label", "")),
                     color="#D55E00" if e.get("highlight") else "#8C8C8C", width=3 if e.get("highlight") else 1.5,
                     font={"size": 13, "align": "middle"})
    net.toggle_physics(physics)
    if physics:
        net.set_options('{"physics": {"stabilization": {"iterations": 200}, '
                        '"barnesHut": {"springLength": 140}}, "edges": {"smooth": false}}')
    return strip_remote(net.generate_html(notebook=False)).replace("</body>", _FIT + "</body>", 1)


def relation_subgraph(entities: Iterable[Any], relations: Iterable[Any], highlight: Iterable[str] = (),
                      max_edges: int = 150) -> dict[str, Any]:
    """A subgraph from MemWeaver entity and relation items (MemoryItem-like: id, text, metadata)."""
    hl = set(highlight)
    names = {e.id: e.text for e in entities}
    nodes = [{"id": eid, "label": name, "kind": "entity", "highlight": eid in hl} for eid, name in names.items()]
    edges = []
    for r in list(relations)[-max_edges:]:
        m = r.metadata
        src, tgt = m.get("src_id") or m.get("src"), m.get("tgt_id") or m.get("tgt")
        if not src or not tgt:
            continue
        when = f" ({m['time']})" if m.get("time") else ""
        edges.append({"source": src, "target": tgt, "label": str(m.get("rel", "")), "title": f"{r.text}{when}",
                      "highlight": r.id in hl})
        for end, label in ((src, m.get("src", src)), (tgt, m.get("tgt", tgt))):
            if end not in names:
                names[end] = label
                nodes.append({"id": end, "label": label, "kind": "entity", "highlight": False})
    used = {e["source"] for e in edges} | {e["target"] for e in edges}
    return {"nodes": [n for n in nodes if n["id"] in used or n["highlight"]], "edges": edges}


def memweaver_subgraph(structure: Mapping[str, Any]) -> dict[str, Any]:
    """The retrieval subgraph of a MemWeaver trace in graph_html's format (seeds highlighted)."""
    sub = structure.get("subgraph") or {}
    nodes = [{"id": n["id"], "label": n.get("label") or n["id"], "kind": n.get("kind", "entity"),
              "title": f"{n['id']} ({n.get('kind', 'entity')}): {n.get('label', '')}", "highlight": n.get("seed", False)}
             for n in sub.get("nodes", [])]
    edges = [{"source": e["source"], "target": e["target"], "label": e.get("relation", ""),
              "title": f"{e.get('relation', '')}" + (f" (time: {e['time']})" if e.get("time") else "")
              + f" · score {e.get('score')}", "highlight": e.get("seed", False)} for e in sub.get("edges", [])]
    return {"nodes": nodes, "edges": edges}


def memweaver_structure(trace: Trace, texts: Mapping[str, str]) -> list[Block]:
    """MemWeaver's retrieval on Ask and in the export: the subgraph, then its passages and experiences."""
    s = trace.structure
    sub = memweaver_subgraph(s)
    if not sub["edges"]:
        out: list[Block] = [Part("MemWeaver subgraph", Text("MemWeaver found no triples for this question.", "info"))]
    else:
        out = [Part("MemWeaver subgraph", Html(graph_html(sub, height=480)), height=500,
                    caption="The retrieved subgraph: seed triples and entities outlined in orange, 1-hop expansion, "
                            "passages (boxes) linked by `contains`, experiences (diamonds) by `about`. "
                            "Drag to explore.")]
    used = (s.get("budgets") or {}).get("used") or {}
    if used:
        out.append(Part("", Text("Used: " + ", ".join(f"{k} {v}" for k, v in used.items()))))
    items = {it.id: it.text for it in trace.items}
    passages = pd.DataFrame([{**p, "text": texts.get(p.get("turn", ""), "")} for p in s.get("passages") or []])
    experiences = pd.DataFrame([{**x, "about": ", ".join(x.get("about") or []), "text": items.get(x["id"], "")}
                                for x in s.get("experiences") or []])
    out.append(Row(Part("Passages", passages, label="**Passages**", height=240),
                   Part("Experiences", experiences, label="**Experiences**", height=240)))
    return out


def memweaver_growth(rd: ReplayData, step: int, items_at: ItemsAt) -> list[Block]:
    """The temporal knowledge graph at a step (the latest 150 relations); what changed at that step outlined."""
    ents = items_at("entity", step)
    rels = sorted(items_at("relation", step), key=lambda r: r.updated_step)
    if not rels:
        return [Part("Knowledge graph", Text("No relation in the graph yet at this step."))]
    return [Part("Knowledge graph", Html(graph_html(relation_subgraph(ents, rels, rd.changed_at(step)), height=480)),
                 height=500, caption=f"{len(ents)} entities, {len(rels)} relations (the latest 150 drawn). Orange: "
                                     "added at this step. Drag nodes; hover for the relation text and its time.")]


register_view(SystemView("memweaver", color="#D55E00", rank=80, structure=memweaver_structure,
                         growth=memweaver_growth, growth_rank=2, picks=frozenset({ASK, REPLAY})))
