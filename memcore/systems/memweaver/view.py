"""MemWeaver's view (registered with memcore.viz.views): its retrieval subgraph on Ask and its temporal knowledge
graph growing on Replay, drawn with memcore.viz.graph's pyvis pages.

On the viz floor (tests/test_import_graph.py, "system views"): it draws with memcore.viz's parts; the view registry
imports it by name, nothing in memcore.systems does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from memcore.types import Trace
from memcore.viz.graph import frame_height, graph_html, relation_subgraph
from memcore.viz.graph_focus import collapsed, communities
from memcore.viz.parts import Block, Html, Part, Row, Text
from memcore.viz.replay import ReplayData
from memcore.viz.views import ASK, REPLAY, ItemsAt, SystemView, register_view


def _role(n: Mapping[str, Any], gold: set[str]) -> str:
    if n.get("kind") in ("passage", "turn") and (str(n.get("label", "")) in gold or str(n["id"]) in gold):
        return "gold"
    return "seed" if n.get("seed") else "expanded"


def memweaver_subgraph(structure: Mapping[str, Any], gold: Iterable[str] = ()) -> dict[str, Any]:
    """The retrieval subgraph of a MemWeaver trace in graph_html's format: seeds, the nodes expansion reached,
    and passages of the `gold` evidence turns (default: structure["gold_evidence"], set by pages that know it)."""
    sub = structure.get("subgraph") or {}
    gold = set(gold) or set(structure.get("gold_evidence") or [])
    nodes = [{"id": n["id"], "label": n.get("label") or n["id"], "kind": n.get("kind", "entity"),
              "title": f"{n['id']} ({n.get('kind', 'entity')}): {n.get('label', '')}", "role": _role(n, gold),
              "highlight": bool(n.get("seed"))}
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
        out = [Part("MemWeaver subgraph", Html(graph_html(sub, height=480, edge_labels=True)), height=frame_height(480),
                    caption="The retrieved subgraph (legend above it): seeds, the 1-hop expansion, passages (boxes) "
                            "linked by contains, experiences (diamonds) by about; gold evidence and the path to it in "
                            "green when the question has gold evidence. Hover a node for its text; drag to explore.")]
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
    """The temporal knowledge graph at a step with its communities collapsed (one node each, with counts; never the
    whole graph); a community holding what changed at that step in orange."""
    ents = items_at("entity", step)
    rels = sorted(items_at("relation", step), key=lambda r: r.updated_step)
    if not rels:
        return [Part("Knowledge graph", Text("No relation in the graph yet at this step."))]
    sub = relation_subgraph(ents, rels, rd.changed_at(step), max_edges=len(rels))
    comms = communities(sub)
    view = collapsed(sub, comms)
    new = sum(1 for n in sub["nodes"] if n["role"] == "new")
    added = (f"Orange: the communit{'y' if sum(1 for n in view['nodes'] if n['role'] == 'new') == 1 else 'ies'} "
             f"holding the {new} entit{'y' if new == 1 else 'ies'} added or changed at this step" if new else
             "Nothing was added at this step (orange marks what a step adds)")
    return [Part("Knowledge graph", Html(graph_html(view, height=480, edge_labels=True, max_labels=40)),
                 height=frame_height(480),
                 caption=f"{len(sub['nodes'])} entities and {len(rels)} relations in {len(comms)} communities "
                         f"(Louvain, seeded), each drawn as one node sized by its entities"
                         + (f", the {view['rest']} smallest together" if view["rest"] else "")
                         + f"; an edge counts the relations between two communities. {added}. Below: expand a "
                           "community, an entity's neighbourhood, or a session's relations, with labelled edges.")]


register_view(SystemView("memweaver", color="#D55E00", rank=80, structure=memweaver_structure,
                         growth=memweaver_growth, growth_rank=2, picks=frozenset({ASK, REPLAY})))
