"""memcore.viz views: evidence tables, CoM chains, xMemory hierarchy, RecMem, MemWeaver graphs."""

from __future__ import annotations

import re

import plotly.graph_objects as go

from memcore.eval.answer_rows import answer_summary
from memcore.eval.diagnostics import evidence_hits, locate_missed_evidence
from memcore.systems.com.view import chain_figure, chain_steps_table, chain_table
from memcore.systems.memweaver.view import memweaver_subgraph
from memcore.systems.recmem.view import promotions_frame, stores_figure
from memcore.systems.xmemory.view import hierarchy_sunburst, path_sunburst, stage_one_tables, stage_two_figure
from memcore.types import Candidate, Event, MemoryItem, Trace, TraceItem, Usage
from memcore.viz.evidence import context_table, cost_bar, evidence_table, missed_table
from memcore.viz.graph import graph_html, relation_subgraph, strip_remote
from memcore.viz.replay import build_replay

XSS = "<script>alert(1)</script>"


def _trace() -> Trace:
    return Trace(
        system="com", question="Where?", stages=["pool", "chains"],
        items=[TraceItem("D1:1", "turn", "Ana: hi", 0.9, ["D1:1"], "chain 1"),
               TraceItem("D1:2", "turn", f"Ben: {XSS}", 0.8, ["D1:2"], "chain 1")],
        candidates=[Candidate("pool", "D1:1", 0.9, 1, True, ["D1:1"]),
                    Candidate("pool", "D1:2", 0.8, 2, True, ["D1:2"]),
                    Candidate("pool", "D1:3", 0.7, 3, True, ["D1:3"]),
                    Candidate("chains", "D1:3", 0.2, 3, False, ["D1:3"], "gate dropped below beta"),
                    Candidate("pool", "D2:9", 0.1, 41, False, ["D2:9"], "ranked below the top 40")],
        structure=_com_structure())


def _com_structure() -> dict:
    step1 = {"step": 1, "candidates": [{"id": "D1:2", "relevance": 0.8, "consistency": 0.9, "gate": 0.72}],
             "best": "D1:2", "gate": 0.72, "threshold": 0.45, "chosen": "D1:2", "stopped": False, "stop_reason": ""}
    step2 = {"step": 2, "candidates": [{"id": "D1:3", "relevance": 0.7, "consistency": 0.3, "gate": 0.2}],
             "best": "D1:3", "gate": 0.2, "threshold": 0.36, "chosen": None, "stopped": True,
             "stop_reason": "best gate 0.200 < beta 0.5 x previous gate 0.720"}
    return {"beta": 0.5, "chains": [{"anchor": "D1:1", "members": ["D1:1", "D1:2"], "gates": [0.9, 0.72],
                                     "steps": [step1, step2], "stop_reason": step2["stop_reason"], "stop_step": 2}]}


def test_context_and_evidence_tables_mark_hits_and_misses():
    tr = _trace()
    ctx = context_table(tr, ["D1:2", "D1:3"])
    assert list(ctx["evidence"]) == ["", "✔ D1:2"]
    assert list(ctx["position"]) == [1, 2]
    assert list(ctx["score rank"]) == [1, 2]  # scores 0.9, 0.8
    tr.items.reverse()  # a context in time order: its position and its rank by score differ
    assert list(context_table(tr)["score rank"]) == [2, 1]
    ev = evidence_table(evidence_hits(tr, ["D1:2", "D1:3"]), {"D1:3": "Ana: the park"})
    assert list(ev["result"]) == ["hit", "miss"] and ev.iloc[1]["text"] == "Ana: the park"


def test_missed_table_says_where_evidence_was_lost():
    m = missed_table(locate_missed_evidence(_trace(), ["D1:3", "D2:9", "D9:9"]))
    assert list(m["turn"]) == ["D1:3", "D2:9", "D9:9"]
    assert m.iloc[0]["stage"] == "chains" and m.iloc[0]["reason"] == "gate dropped below beta"
    assert m.iloc[1]["stage"] == "pool" and m.iloc[1]["rank"] == 41
    assert m.iloc[2]["where lost"] == "never retrieved"


def test_cost_bar_stacks_stages_per_system():
    fig = cost_bar({"com": {"answer": Usage(100, 10, 1)}, "xmemory": {"retrieval": Usage(50, 5, 2),
                                                                       "answer": Usage(80, 8, 1)}})
    assert [t.name for t in fig.data] == ["retrieval", "answer"]
    assert fig.layout.barmode == "stack"
    assert list(fig.data[1].y) == [110, 88]


def test_answer_summary_counts_evidence_and_tokens():
    from memcore.types import Answer

    row = answer_summary("com", Answer("park", _trace(), {"answer": Usage(100, 10, 1)}, 12.5), ["D1:2", "D1:3"])
    assert row["evidence hits"] == "1/2" and row["tokens"] == 110 and row["LLM calls"] == 1


def test_chain_figure_shows_gates_threshold_and_cut():
    s = _com_structure()
    fig = chain_figure(s, {"D1:2": XSS})
    names = [t.name for t in fig.data]
    assert "chain 1" in names and "cut (gate below threshold)" in names
    assert "<script>" not in fig.to_json()
    assert chain_table(s).iloc[0]["members"] == "D1:1 → D1:2"
    steps = chain_steps_table(s, 1)
    assert list(steps["chosen"]) == [True, False]
    assert chain_steps_table(s, 5).empty


def _xm_items() -> list[MemoryItem]:
    return [MemoryItem("theme-1", "theme", "Running", metadata={"label": "Running", "members": ["semantic-1"]}),
            MemoryItem("semantic-1", "semantic", f"Maya ran {XSS}", sources=["episode-1"],
                       metadata={"theme": "theme-1"}),
            MemoryItem("episode-1", "episode", "Race day", metadata={"title": "Race"})]


def test_hierarchy_sunburst_nests_themes_semantics_episodes_and_highlights():
    fig = hierarchy_sunburst(_xm_items(), highlight=["semantic-1"])
    sb = fig.data[0]
    assert list(sb.ids) == ["theme-1", "semantic-1", "semantic-1/episode-1"]
    assert list(sb.parents) == ["", "theme-1", "semantic-1"]
    assert "<script>" not in fig.to_json()


def test_xmemory_path_views():
    s = {"themes": [{"id": "theme-1", "label": "Running", "score": 0.5, "picked": True, "pick_order": 1},
                    {"id": "theme-2", "label": "Food", "score": 0.1, "picked": False}],
         "semantics": [{"id": "semantic-1", "theme": "theme-1", "picked": True, "pick_order": 1,
                        "episodes": ["episode-1"]}],
         "episodes": [{"id": "episode-1", "gain": 0.3, "decision": "include", "H_before": 1.0, "H_after": 0.7}],
         "H0": 1.0}
    fig = path_sunburst(s)
    assert "semantic-1/episode-1" in list(fig.data[0].ids)
    th, se = stage_one_tables(s)
    assert len(th) == 2 and len(se) == 1
    assert isinstance(stage_two_figure(s, -0.4, 0.25), go.Figure)


def test_recmem_promotions_and_stores():
    ev = [Event(9, "created", ["episode-1"], "recurrence: 5 similar exchanges", "recmem", "c", "D1:9", "episode",
                {"count": 5, "theta_count": 5, "theta_sim": 0.7, "neighbours": ["unit-1", "unit-2"],
                 "similarities": [0.8, 0.75], "exchange": ["D1:9", "D1:10"]}),
          Event(9, "promoted", ["unit-1", "unit-2"], "consolidated into episode-1", "recmem", "c", "D1:9", "unit")]
    rd = build_replay("recmem", ev, None, None, 12)
    df = promotions_frame(rd)
    assert len(df) == 1 and df.iloc[0]["episodes"] == "episode-1" and df.iloc[0]["similarities"] == "0.80, 0.75"
    assert promotions_frame(rd, upto=5).empty
    fig = stores_figure({"stores": {"subconscious": 10, "episodic": 2, "semantic": 4},
                         "retrieved": {"subconscious": 3, "episodic": 1, "semantic": 2}})
    assert list(fig.data[1].y) == [3, 1, 2]


def test_graph_html_is_offline_and_inert():
    sub = {"nodes": [{"id": "e1", "label": XSS, "kind": "entity", "highlight": True}],
           "edges": [{"source": "e1", "target": "e2", "label": "</script><img src=x onerror=alert(1)>"}]}
    html = graph_html(sub)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert not re.search(r"<(script|link)\b[^>]*\b(src|href)=", html)
    assert "cdn.jsdelivr" not in html and "bootstrap" not in html.lower().split("<body>")[0][-2000:]
    assert "vis.Network" in html  # vis.js is inlined


def test_strip_remote_removes_cdn_tags():
    html = '<link href="https://cdn/x.css" rel="stylesheet"><script src="https://cdn/x.js"></script><p>ok</p>'
    assert strip_remote(html) == "<p>ok</p>"


def test_memweaver_and_relation_subgraphs():
    s = {"subgraph": {"nodes": [{"id": "entity-1", "label": "Maya", "kind": "entity", "seed": True},
                                {"id": "entity-2", "label": "Pepper", "kind": "entity", "seed": False}],
                      "edges": [{"id": "relation-1", "source": "entity-1", "target": "entity-2",
                                 "relation": "owns", "time": "2023", "seed": True, "score": 0.9}]}}
    sub = memweaver_subgraph(s)
    assert sub["nodes"][0]["highlight"] and sub["edges"][0]["label"] == "owns"
    ents = [MemoryItem("entity-1", "entity", "Maya"), MemoryItem("entity-2", "entity", "Pepper")]
    rels = [MemoryItem("relation-1", "relation", "Maya owns Pepper",
                       metadata={"src_id": "entity-1", "tgt_id": "entity-2", "src": "Maya", "tgt": "Pepper",
                                 "rel": "owns", "time": ""})]
    sub2 = relation_subgraph(ents, rels, highlight=["relation-1"])
    assert len(sub2["nodes"]) == 2 and sub2["edges"][0]["highlight"]


def test_memcot_loop_views():
    from memcore.systems.memcot.view import iterations_figure, iterations_table

    s = {"stop_reason": "judge can answer at step 2", "answered_from": "short-term memory", "iterations": [
        {"step": 1, "queries": [XSS], "zoom_in_hits": ["D1:1", "D1:2"], "useful": ["D1:2"], "missing": "date",
         "zoom_out_windows": [["D1:1", "D1:2", "D1:3"]], "picked": ["D1:2", "D1:3"],
         "judge": {"can_answer": False, "useful_id": []}, "action": "Break", "accepted_queries": ["when?"]},
        {"step": 2, "queries": ["when?"], "zoom_in_hits": ["D2:1"], "useful": ["D2:1"], "missing": "",
         "zoom_out_windows": [["D2:1"]], "picked": ["D2:1"], "judge": {"can_answer": True, "useful_id": ["D2:1"]},
         "action": "answer", "accepted_queries": []}]}
    t = iterations_table(s)
    assert list(t["zoom-in hits"]) == [2, 1] and list(t["zoom-out turns"]) == [3, 1]
    fig = iterations_figure(s)
    assert list(fig.data[-1].y) == [2, 3]  # short-term memory grows
    assert "<script>" not in fig.to_json()


# ---------------------------------------------------------------------------- the view registry
def test_view_registry_orders_colours_and_picks_registered_systems():
    import pytest

    from memcore.systems import load_all
    from memcore.viz.views import (
        ASK,
        DEFAULT_RANK,
        SystemView,
        get_view,
        has_view,
        picked,
        register_view,
        system_color,
        unregister_view,
        view_order,
    )

    builtin = list(load_all())  # the registry's list: installed plugins are off in tests (tests/conftest.py)
    assert all(has_view(n) for n in builtin)
    assert view_order(builtin) == ["full_context", "naive_rag", "naive_rag_session", "com", "recmem", "memcot",
                                   "xmemory", "memweaver"]
    assert picked(builtin, ASK) == ["naive_rag", "com", "xmemory", "memweaver"]
    assert not has_view("plugin_sys") and get_view("plugin_sys").rank == DEFAULT_RANK
    fallback = system_color("plugin_sys")
    register_view(SystemView("plugin_sys", color="#ABCDEF", rank=45, picks=frozenset({ASK})))
    try:
        assert has_view("plugin_sys") and system_color("plugin_sys") == "#ABCDEF"
        assert view_order([*builtin, "plugin_sys"]).index("plugin_sys") == 4  # between com (40) and recmem (50)
        assert picked([*builtin, "plugin_sys"], ASK) == ["naive_rag", "com", "plugin_sys", "xmemory", "memweaver"]
    finally:
        unregister_view("plugin_sys")
    assert system_color("plugin_sys") == fallback
    with pytest.raises(ValueError, match="view 'com' is already registered by memcore.systems.com.view; "
                                         "tests.viz.test_viz_views cannot register another"):
        register_view(SystemView("com", color="#000000"))  # a later view never replaces a system's own
    assert get_view("com").color != "#000000"
    with pytest.raises(ValueError, match="unknown page"):
        SystemView("x", picks=frozenset({"homepage"}))


def test_default_view_shows_the_structure_as_json():
    from memcore.viz.bundles import structure_sections
    from memcore.viz.parts import Text

    assert structure_sections("no_such_view", Trace("x", "q", structure={"k": 5})) == [("Structure", {"k": 5})]
    (head, body), = structure_sections("no_such_view", Trace("x", "q"))
    assert head == "Structure" and isinstance(body, Text) and "no extra structure" in body.text


def test_block_sections_write_every_part_row_and_option():
    import pandas as pd

    from memcore.viz.export import block_sections, standalone_html
    from memcore.viz.parts import Choice, Html, Part, Row, Text

    blocks = [Part("Fig", go.Figure(), caption=f"cap {XSS}"), Row(Part("A", pd.DataFrame([{"a": 1}])), Part("B")),
              Choice("pick", ((1, (Part("Opt 1", Text("one", "info")),)), (2, (Part("Opt 2", Html("<p>x</p>")),)))),
              Part("", Text("bare caption"))]
    heads = [h for h, _ in block_sections(blocks)]
    assert heads == ["Fig", "", "A", "B", "Opt 1", "Opt 2", ""]
    html = standalone_html("t", block_sections(blocks))
    assert "<script>alert" not in html and '<p class="caption">cap &lt;script&gt;' in html
    assert '<p class="note">one</p>' in html and "<iframe" in html and "(none)" in html


def test_growth_views_read_the_items_alive_at_a_step():
    from memcore.systems.memweaver.view import memweaver_growth
    from memcore.systems.recmem.view import recmem_growth
    from memcore.systems.xmemory.view import xmemory_growth
    from memcore.viz.parts import Text, parts_of
    from memcore.viz.views import get_view

    ev = [Event(9, "created", ["episode-1"], "recurrence: 2 similar exchanges", "recmem", "c", "D1:9", "episode",
                {"count": 2, "theta_count": 2, "theta_sim": 0.7, "neighbours": ["unit-1", "unit-2"],
                 "similarities": [0.8, 0.75], "exchange": ["D1:9"]})]
    rd = build_replay("recmem", ev, None, None, 12)
    asked: list[tuple[str, int]] = []
    units = [MemoryItem("unit-1", "unit", "hi", turn_ids=["D1:1"]), MemoryItem("unit-2", "unit", "yo", turn_ids=["D1:2"])]

    def items_at(kind: str, step: int) -> list[MemoryItem]:
        asked.append((kind, step))
        return {"unit": units, "theme": _xm_items()[:1], "semantic": _xm_items()[1:2],
                "episode": _xm_items()[2:]}.get(kind, [])

    parts = parts_of(recmem_growth(rd, 9, items_at))
    assert isinstance(parts[0].content, Text) and parts[0].content.style == "success"
    assert list(parts[1].content["unit"]) == ["unit-1", "unit-2"] and ("unit", 8) in asked
    assert parts[-1].title == "Consolidations" and len(parts[-1].content) == 1
    assert [p.title for p in parts_of(recmem_growth(rd, 5, items_at))] == ["Consolidations"]
    xm = parts_of(xmemory_growth(build_replay("xmemory", [], None, None, 3), 2, items_at))
    assert xm == []  # themes and nothing restructured: the page draws the hierarchy from the view's levels
    nodes = get_view("xmemory").levels(items_at, 2)
    assert [n.level for n in nodes][:2] == ["theme", "fact"] and any(n.level == "episode" for n in nodes)
    mw = parts_of(memweaver_growth(build_replay("memweaver", [], None, None, 3), 2, items_at))
    assert isinstance(mw[0].content, Text)  # no relation yet
    assert get_view("recmem").growth is recmem_growth and get_view("com").growth is None
