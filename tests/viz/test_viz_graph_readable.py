"""Readable graphs (issue 15 item 6): roles with a legend, few labels, the gold path, ego graphs, rings, chains."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

from memcore.systems.com.view import chain_figure
from memcore.systems.memweaver.view import memweaver_subgraph
from memcore.systems.xmemory.view import hierarchy_sunburst
from memcore.viz.graph import (
    ROLE_COLORS,
    ego_subgraph,
    gold_path,
    graph_html,
    labelled,
    node_choices,
)


def star(n: int = 30) -> dict:
    """A hub with n leaves, plus a chain hub - a - b - passage D1:7."""
    nodes = [{"id": "hub", "label": "Maya", "kind": "entity", "seed": True}]
    nodes += [{"id": f"l{i}", "label": f"leaf number {i}", "kind": "entity"} for i in range(n)]
    nodes += [{"id": "a", "label": "Pepper", "kind": "entity"}, {"id": "p7", "label": "D1:7", "kind": "passage"}]
    edges = [{"source": "hub", "target": f"l{i}", "relation": "knows"} for i in range(n)]
    edges += [{"source": "hub", "target": "a", "relation": "adopted"}, {"source": "p7", "target": "a",
                                                                         "relation": "contains"}]
    return {"subgraph": {"nodes": nodes, "edges": edges}}


def _nodes(html: str) -> list[dict]:
    return json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", html, re.S).group(1))


def test_roles_are_coloured_with_a_legend_and_the_gold_path_is_marked():
    sub = memweaver_subgraph(star(), gold=["D1:7"])
    roles = {n["id"]: n["role"] for n in sub["nodes"]}
    assert roles["hub"] == "seed" and roles["p7"] == "gold" and roles["l0"] == "expanded"
    assert set(map(frozenset, gold_path(sub))) == {frozenset(("hub", "a")), frozenset(("a", "p7"))}
    html = graph_html(sub)
    for role in ("seed", "expanded", "gold"):
        assert ROLE_COLORS[role] in html
    assert "gold evidence" in html and "path from the question to the gold turn" in html and "new at this step" not in html
    colours = {n["id"]: n["color"]["background"] for n in _nodes(html)}
    assert colours["hub"] != colours["l0"] != colours["p7"] != colours["hub"]


def test_only_roles_and_hubs_are_labelled_and_every_node_has_hover_text():
    sub = memweaver_subgraph(star(40))
    sub["nodes"] = [{**n, "role": "" if n["role"] == "expanded" else n["role"]} for n in sub["nodes"]]
    shown = labelled(sub, max_labels=3)
    assert "hub" in shown and "l5" not in shown
    nodes = {n["id"]: n for n in _nodes(graph_html(sub))}
    assert nodes["l5"]["label"].strip() == "" and "leaf number 5" in nodes["l5"]["title"]
    assert nodes["hub"]["label"] == "Maya"
    assert "stabilizationIterationsDone" in graph_html(sub)  # fitted after layout


def test_ego_graph_keeps_the_neighbourhood():
    sub = memweaver_subgraph(star(5))
    one = ego_subgraph(sub, "a", 1)
    assert {n["id"] for n in one["nodes"]} == {"a", "hub", "p7"}
    assert len(ego_subgraph(sub, "a", 2)["nodes"]) == len(sub["nodes"])
    assert ego_subgraph(sub, "nope")["nodes"] == []
    assert next(iter(node_choices(sub))) == "hub"  # best-connected first


def _item(iid: str, kind: str, sources=(), theme: str = ""):
    return SimpleNamespace(id=iid, kind=kind, text=f"{kind} {iid}", sources=list(sources), metadata={"theme": theme})


def test_xmemory_ring_chart_draws_three_rings():
    items = [_item("t1", "theme"), _item("s1", "semantic", ["e1"], "t1"), _item("e1", "episode")]
    sb = hierarchy_sunburst(items).data[0]
    assert sb.maxdepth in (-1, 3) and "s1/e1" in list(sb.ids)


def test_chain_labels_are_annotations_anchors_first_and_crowded_ones_left_to_the_hover():
    chains = [{"members": ["D1:1", "D1:2", "D1:3"], "gates": [0.5, 0.5, 0.5], "steps": []} for _ in range(2)]
    fig = chain_figure({"chains": chains})
    labels = [(a.x, a.y, a.text) for a in fig.layout.annotations]
    assert len(set(labels)) == len(labels) and 2 <= len(labels) <= 6
    assert sum(t == "D1:1" for *_, t in labels) == 2  # both anchors are labelled
    assert all(tr.mode == "lines+markers" and tr.hovertext for tr in fig.data)  # every point keeps its hover text


def test_benchmark_names_categories_shows_n_and_a_readable_log_axis():
    from memcore.viz.bench import (
        accuracy_tokens_scatter,
        category_names,
        category_table,
        count_table,
        excluded_note,
        log_ticks,
        metric_heatmap,
    )

    res = {"systems": {s: {"overall": {"f1": 0.5, "n": 7, "query_tokens_per_question": t},
                           "categories": {"4": {"f1": 0.4, "n": 5}, "2": {"f1": 0.6, "n": 2}}}
                       for s, t in (("a", 400.0), ("b", 3000.0))}}
    assert set(category_names(res).values()) == {"single-hop", "temporal"}
    assert "adversarial" in excluded_note(res)
    heat = metric_heatmap(category_table(res), "f1", count_table(res)).data[0]
    assert "n=%{text}" in heat.texttemplate and heat.text[0][0] == "5"
    vals, text = log_ticks(400, 3000)
    assert text == ["200", "500", "1k", "2k", "5k"] and vals[0] == 200
    ax = accuracy_tokens_scatter(res).layout.xaxis
    assert list(ax.ticktext) == text and ax.type == "log"
    res["systems"]["a"]["categories"]["5"] = {"f1": 1.0, "n": 1}
    assert excluded_note(res) == ""


def test_an_entitys_neighbourhood_labels_its_direct_neighbours_and_says_so():
    """At BEAM size the ego graph of "Python" drew its five neighbours (degree 1 inside the ego graph) as blank dots:
    only best-connected nodes (degree >= 2) were labelled."""
    sub = memweaver_subgraph(star(5))
    ego = ego_subgraph(sub, "hub", 1)
    ego["nodes"] = [{**n, "role": "focus" if n["id"] == "hub" else ""} for n in ego["nodes"]]
    html = graph_html(ego, edge_labels=True)
    labels = {n["id"]: n["label"].strip() for n in _nodes(html)}
    assert labels["l3"] == "leaf number 3" and labels["a"] == "Pepper" and labels["hub"] == "Maya"
    assert "p7" not in labels  # two hops away: not in a 1-hop neighbourhood
    assert "its direct neighbours" in html
    two = ego_subgraph(sub, "a", 2)  # from Pepper: hub and p7 are neighbours, the leaves two hops away
    assert {str(n["id"]) for n in two["nodes"] if n.get("neighbour")} == {"hub", "p7"}
    plain = graph_html(sub)  # a graph that is not a neighbourhood keeps its legend and label rule
    assert "its direct neighbours" not in plain and "labels on the best-connected nodes" in plain
