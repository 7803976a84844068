"""Readable at the demo's end and on a real conversation (issue 23 item 8): the xMemory hierarchy with 20 themes
and 60 semantics (labels that fit or are left out, wrapped hover text, episodes by day, theme names as short
phrases without timestamps), graphs whose caption matches the legend, framed in full, ego graphs capped."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from memcore.systems.memweaver.view import memweaver_growth
from memcore.systems.xmemory.offline import offline_theme_label
from memcore.systems.xmemory.view import HOVER_CHARS, HOVER_LINES, hierarchy_sunburst
from memcore.viz.graph import (
    LEGEND_PX,
    ego_subgraph,
    frame_height,
    label_ranks,
)

LONG = ("Maya said the Harbour Half Marathon on 24 September is the big one and her goal is to finish in under two "
        "hours, so she trains with the group on Wednesday evenings and does a long run on Saturday mornings")


def _it(iid: str, kind: str, sources=(), **meta):
    return SimpleNamespace(id=iid, kind=kind, text=LONG, sources=list(sources), metadata=meta)


def test_a_fact_quoting_its_episode_reads_without_the_timestamp():
    from memcore.systems.xmemory.view import plain

    assert plain("[2023-05-08T10:15:00] Maya & Jonas: run, half, marathon: On 8 May 2023, Maya signed up") == (
        "On 8 May 2023, Maya signed up")
    assert plain("Maya adopted Pepper: a rescue") == "Maya adopted Pepper: a rescue"  # nothing quoted: as it is


def end_of_demo(n_themes: int = 20, n_sems: int = 60) -> list:
    items = [_it(f"theme-{t}", "theme", label=f"theme phrase {t}") for t in range(n_themes)]
    items += [_it(f"episode-{e}", "episode", title="Maya & Jonas: run, half, marathon",
                  episode_time="2023-05-08T10:15:00") for e in range(n_sems // 3)]
    items += [_it(f"semantic-{s}", "semantic", [f"episode-{s // 3}"], theme=f"theme-{s % n_themes}",
                  date="10:15 am on 8 May, 2023") for s in range(n_sems)]
    return items


def test_the_hierarchy_at_the_demos_end_is_readable():
    fig = hierarchy_sunburst(end_of_demo())
    sb = fig.data[0]
    assert 0 < sum(1 for x in sb.labels if x) < len(sb.labels)  # labels that fit are drawn, the others left out
    assert all(not x for i, x in zip(sb.ids, sb.labels, strict=True) if i.count("/"))  # the hidden ring: none
    assert sb.textfont.size >= 11 and max(len(x) for x in sb.labels) <= 28
    assert sb.maxdepth == 2  # 60 semantics: themes and facts; a click on a theme shows its episodes
    for hover in sb.hovertext:  # a box that stays inside the chart
        lines = hover.split("<br>")
        assert len(lines) <= HOVER_LINES and max(len(x) for x in lines) <= HOVER_CHARS + 1, hover
    assert "8 May 2023" in dict(zip(sb.ids, sb.hovertext, strict=True))["semantic-0"]  # dates as dates
    crowded = dict(zip(*(lambda d: (d.ids, d.labels))(hierarchy_sunburst(end_of_demo(20, 200)).data[0]), strict=True))
    assert all(crowded[f"theme-{t}"] for t in range(20))  # wide enough: drawn
    assert not any(crowded[f"semantic-{s}"] for s in range(200))  # 200 facts: too thin to read, left out
    small = hierarchy_sunburst(end_of_demo(3, 9)).data[0]
    assert small.maxdepth == 3  # few facts: all three rings at once
    assert dict(zip(small.ids, small.labels, strict=True))["semantic-0/episode-0"] == "8 May 2023"  # by its day


def test_theme_names_are_short_phrases_without_timestamps():
    facts = ["[2023-05-08T10:15:00] Maya & Jonas: year, pepper, shelter: On 8 May 2023, Maya's sister Lena came "
             "with Pepper, who pulled on the leash the whole time.",
             "Maya will happily take a mint tea and a slice of cake."]
    others = ["[2023-05-08T10:15:00] Maya & Jonas: Jonas went to Lisbon five years ago",
              "Jonas started a pottery class at Clay Corner"]
    out = offline_theme_label({"facts": facts[:1], "other_themes": others})
    label = out["label"]
    assert not any(c.isdigit() for c in label) and "/" not in label and ":" not in label, label
    assert 1 <= len(label.split()) <= 6 and label in facts[0]  # the fact's own words
    two = offline_theme_label({"facts": [facts[1], "Maya does not drink coffee, mint tea instead"],
                               "other_themes": others})
    assert two["label"] == "mint tea"  # the shortest stretch holding the shared keywords


def _star(n: int) -> dict:
    nodes = [{"id": "hub", "label": "Maya", "kind": "entity", "role": ""}]
    nodes += [{"id": f"l{i}", "label": f"leaf {i}", "kind": "entity", "role": ""} for i in range(n)]
    return {"nodes": nodes, "edges": [{"source": "hub", "target": f"l{i}"} for i in range(n)]}


def test_an_ego_graph_of_a_hub_is_capped_and_counts_the_rest():
    ego = ego_subgraph(_star(220), "hub", 1)
    assert len(ego["nodes"]) == 41 and ego["more"] == 180  # the centre and 40 neighbours drawn, "180 more"
    assert ego_subgraph(_star(5), "hub", 1)["more"] == 0
    assert ego_subgraph(_star(5), "nope")["nodes"] == []


def test_labels_are_ranked_roles_first_and_frames_hold_the_legend():
    sub = _star(3)
    sub["nodes"][2]["role"] = "gold"
    sub["edges"].append({"source": "l0", "target": "l2"})
    ranks = label_ranks(sub)
    assert ranks["l1"] == 0 and ranks["hub"] < ranks.get("l0", 99)  # a role outranks degree
    assert frame_height(480) == 480 + LEGEND_PX


def _rd(changed: set[str]) -> SimpleNamespace:
    return SimpleNamespace(changed_at=lambda step: changed, events_at=lambda step: pd.DataFrame())


def _mw_items(kind: str, step: int) -> list:
    if kind == "entity":
        return [SimpleNamespace(id=i, text=i.upper(), metadata={}) for i in ("a", "b")]
    return [SimpleNamespace(id="r1", text="a knows b", updated_step=1,
                            metadata={"src_id": "a", "tgt_id": "b", "rel": "knows"})]


def test_the_knowledge_graph_caption_matches_its_legend():
    quiet = memweaver_growth(_rd(set()), 5, _mw_items)[0]
    assert "Nothing was added at this step" in quiet.caption and "new at this step" not in quiet.content.page
    busy = memweaver_growth(_rd({"a"}), 5, _mw_items)[0]
    assert "Orange: the community holding the 1 entity added" in busy.caption
    assert "new at this step" in busy.content.page
    assert busy.height == frame_height(480)
