"""Focused knowledge graphs (memcore.viz.graph_focus, graph_html's legend, labels and seed)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from memcore.viz.graph import graph_html, relation_subgraph
from memcore.viz.graph_focus import REST, collapsed, communities, session_steps, window


def _graph(n_cliques: int = 3, size: int = 4) -> dict:
    nodes, edges = [], []
    for c in range(n_cliques):
        ids = [f"c{c}n{i}" for i in range(size)]
        nodes += [{"id": i, "label": i.upper(), "kind": "entity", "role": ""} for i in ids]
        edges += [{"source": a, "target": b, "label": "knows", "step": c + 1} for k, a in enumerate(ids)
                  for b in ids[k + 1:]]
        if c:
            edges.append({"source": f"c{c - 1}n0", "target": ids[0], "label": "met", "step": 9})
    return {"nodes": nodes, "edges": edges}


def test_communities_are_found_the_same_way_every_time():
    g = _graph()
    comms = communities(g)
    assert sorted(sorted(c) for c in comms) == [[f"c{c}n{i}" for i in range(4)] for c in range(3)]
    assert communities(g) == comms


def test_an_entity_in_no_relation_is_a_community_of_its_own_and_changes_no_other():
    """Replay adds entities without relations at most steps: they come last, each alone, and the communities of
    the related entities are those of the graph without them (computed once per set of relations)."""
    g = _graph()
    comms = communities(g)
    more = {**g, "nodes": [*g["nodes"], *({"id": i, "label": i, "kind": "entity", "role": "new"} for i in ("zb", "za"))]}
    assert communities(more) == [*comms, ["za"], ["zb"]]
    fewer = {**g, "edges": [e for e in g["edges"] if "c2n3" not in (e["source"], e["target"])]}  # other relations
    assert communities(fewer)[-1] == ["c2n3"] and ["c2n3"] not in comms


def test_collapsed_draws_one_node_per_community_with_counts_and_expands_one():
    g = _graph()
    g["nodes"][5]["role"] = "new"  # c1n1
    comms = communities(g)
    view = collapsed(g, comms)
    assert len(view["nodes"]) == 3 and all(n["kind"] == "community" for n in view["nodes"])
    assert all(n["label"].startswith("4 · ") and n["always_label"] for n in view["nodes"])
    assert sorted(e["label"] for e in view["edges"]) == ["1 relation", "1 relation"]
    assert [n["role"] for n in view["nodes"] if n["role"]] == ["new"]
    i = next(k for k, c in enumerate(comms) if "c1n0" in c)
    open_ = collapsed(g, comms, expand=i)
    kinds = sorted(n["kind"] for n in open_["nodes"])
    assert kinds == ["community", "community"] + ["entity"] * 4
    assert sum(1 for e in open_["edges"] if e["label"] == "knows") == 6  # the clique's own relations, labelled
    few = collapsed(g, comms, max_communities=2)
    assert REST in {n["id"] for n in few["nodes"]} and few["rest"] == 2


def test_window_keeps_the_relations_added_in_the_steps():
    part = window(_graph(), 2, 2)
    assert {e["label"] for e in part["edges"]} == {"knows"} and len(part["edges"]) == 6
    assert session_steps(["1", "1", "2", "2", "2"]) == {"1": (1, 2), "2": (3, 5)}


def test_graph_labels_every_edge_with_time_and_legends_only_what_is_drawn():
    ents = [SimpleNamespace(id=i, text=i.upper(), metadata={}) for i in ("a", "b")]
    rels = [SimpleNamespace(id="r1", text="a knows b", updated_step=1, created_step=1,
                            metadata={"src_id": "a", "tgt_id": "b", "rel": "knows", "time": "2023-05-08"})]
    sub = relation_subgraph(ents, rels)
    assert sub["edges"][0]["label"] == "knows (2023-05-08)" and sub["edges"][0]["step"] == 1
    page = graph_html(sub, edge_labels=True)
    assert '"label": "knows (2023-05-08)"' in page
    assert "diamond experience" not in page and "box passage" not in page and "dot entity" in page
    assert "randomSeed" in page
    plain = graph_html(sub)
    assert '"label": "knows (2023-05-08)"' not in plain  # only asked-for edge labels


def test_same_data_same_page():
    g = _graph()
    shuffled = {"nodes": g["nodes"][::-1], "edges": g["edges"][::-1]}
    strip = re.compile(r"[0-9a-f]{32}")  # pyvis' random element ids, if any
    assert strip.sub("", graph_html(g)) == strip.sub("", graph_html(shuffled))


def test_an_expanded_community_shows_its_best_connected_members_and_counts_the_rest():
    g = _graph(2, 6)
    comms = communities(g)
    view = collapsed(g, comms, expand=0, max_expand=4)
    ents = [n for n in view["nodes"] if n["kind"] == "entity"]
    assert len(ents) == 4
    more = [n for n in view["nodes"] if n["label"] == "2 more of this community"]
    assert len(more) == 1 and more[0]["always_label"]
    assert sum(1 for e in view["edges"] if e["label"] == "knows") == 6  # among the 4 drawn
