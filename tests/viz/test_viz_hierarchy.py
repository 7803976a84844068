"""The navigable hierarchy (memcore.viz.hierarchy) and xMemory's levels and retrieval path."""

from __future__ import annotations

import json
from collections import Counter

from memcore.systems.xmemory.view import path_nodes, xmemory_levels
from memcore.types import MemoryItem
from memcore.viz.hierarchy import (
    FOCUS_CHILDREN,
    FOCUS_ROWS,
    HEIGHT,
    MAX_CHILDREN,
    ROW_PX,
    FocusView,
    HNode,
    distinct_labels,
    drill_figure,
    focus_figure,
    focus_view,
    search,
)

XSS = "<img src=x onerror=alert(1)>"


def _tree(n_themes: int, n_facts: int) -> list[HNode]:
    out = []
    for t in range(n_themes):
        out.append(HNode(f"t{t}", "", "theme", f"theme {t}", kind="theme"))
        out += [HNode(f"t{t}s{s}", f"t{t}", "fact", f"fact {s} of theme {t}", kind="semantic") for s in range(n_facts)]
    return out


def _levels_on_screen(fig) -> dict[str, list[str]]:
    """{parent: its children's labels} as the icicle draws them."""
    d = fig.data[0]
    out: dict[str, list[str]] = {}
    for p, lab in zip(d.parents, d.labels, strict=True):
        out.setdefault(p, []).append(lab)
    return out


def test_every_level_on_screen_has_room_for_its_labels():
    fig = drill_figure(_tree(152, 30), "t")
    d = fig.data[0]
    assert d.maxdepth == 2
    kids = _levels_on_screen(fig)
    assert len(kids["ROOT"]) == MAX_CHILDREN  # 17 themes + "135 more themes"
    assert kids["ROOT"][-1].startswith("135 more theme")
    assert all(len(v) <= MAX_CHILDREN for v in kids.values())
    assert HEIGHT / (MAX_CHILDREN + 1) >= ROW_PX
    values = dict(zip(d.ids, d.values, strict=True))
    shares = Counter(round(values[i], 12) for i, p in zip(d.ids, d.parents, strict=True) if p == "ROOT")
    assert len(shares) == 1  # every theme drawn at the top level the same height
    assert all(lab.strip() for lab in d.labels)  # no region without a label
    # every theme is reachable, through "N more" nodes: 152 themes drawn in all, each with its count of facts
    assert sum(1 for i in d.ids if i.startswith("t") and "s" not in i) == 152
    assert len(set(d.ids)) == len(d.ids)
    assert "theme 0 · 30 facts" in d.labels


def test_search_keeps_matches_with_their_ancestors_and_descendants():
    nodes = _tree(3, 3) + [HNode("ep", "t1s2", "episode", "Race day"), HNode("D1:1", "ep", "turn", "D1:1")]
    kept, hits = search(nodes, "race")
    assert hits == {"ep"}
    assert {n.id for n in kept} == {"t1", "t1s2", "ep", "D1:1"}
    assert search(nodes, "  ")[0] == nodes


def test_highlight_colours_the_path_and_greys_the_rest_and_escapes_text():
    nodes = _tree(2, 2) + [HNode("x", "t0", "fact", XSS, kind="semantic")]
    d = drill_figure(nodes, "t", highlight=["t0s1"]).data[0]
    colors = dict(zip(d.ids, d.marker.colors, strict=True))
    assert colors["t0"] != "#D9D9D9" and colors["t0s1"] != "#D9D9D9"
    assert colors["t1"] == "#D9D9D9" and colors["t0s0"] == "#D9D9D9"
    assert dict(zip(d.ids, d.parents, strict=True))["t0s1"] == "t0"
    assert "<img" not in "".join(d.labels) + "".join(d.hovertext)


def test_xmemory_levels_go_theme_fact_episode_turn():
    items = {"theme": [MemoryItem("th1", "theme", "Running", metadata={"label": "Running"})],
             "semantic": [MemoryItem("s1", "semantic", "Maya ran a half marathon", sources=["ep1"],
                                     metadata={"theme": "th1"}),
                          MemoryItem("s2", "semantic", "Maya trains on Sundays", sources=["ep1"],
                                     metadata={"theme": "th1"})],
             "episode": [MemoryItem("ep1", "episode", "Race day", turn_ids=["D1:1", "D1:2"],
                                    metadata={"title": "Race", "date": "2023-05-08"})]}
    nodes = xmemory_levels(lambda kind, step: items.get(kind, []), 3)
    assert [(n.level, n.id, n.parent) for n in nodes if n.level != "turn"] == [
        ("theme", "th1", ""), ("fact", "s1", "th1"), ("episode", "ep1", "s1"), ("fact", "s2", "th1"),
        ("episode", "ep1", "s2")]
    assert [n.id for n in nodes if n.level == "turn"] == ["D1:1", "D1:2"]  # once, though two facts list the episode
    assert "8 May 2023" in next(n.label for n in nodes if n.level == "episode")


def test_path_nodes_mark_picked_and_included_only():
    s = {"themes": [{"id": "th1", "label": "Running", "picked": True, "pick_order": 1},
                    {"id": "th2", "label": "Food", "picked": False}],
         "semantics": [{"id": "s1", "theme": "th1", "picked": True, "pick_order": 1, "episodes": ["ep1", "ep2"],
                        "text": "Maya ran"},
                       {"id": "s2", "theme": "th2", "picked": False, "episodes": ["ep3"]}],
         "episodes": [{"id": "ep1", "decision": "include", "title": "Race"}, {"id": "ep2", "decision": "skip"}]}
    nodes, path = path_nodes(s, {"s2": "Maya likes pasta"})
    assert path == {"th1", "s1", "ep1"}
    labels = {n.id: n.label for n in nodes}
    assert labels["s1"].startswith("Maya ran") and labels["s2"].startswith("Maya likes pasta")
    assert "ep3" not in labels and "(not included)" in labels["ep2"]


def test_the_cached_layout_equals_the_styled_figure_layout():
    """drill_figure(as_dict=True) reuses one validated layout per height (a Replay step draws one): it equals the
    layout styling a fresh figure gives, for any title."""
    import plotly.graph_objects as go

    from memcore.viz.theme import style

    nodes = [HNode("t1", "", "theme", "a theme"), HNode("f1", "t1", "fact", "a fact", kind="semantic")]
    for title in ("", "xMemory hierarchy: 1 themes", "<b>not bold</b> & more"):
        for height in (600, 420):
            fresh = style(go.Figure(), title, height=height)
            fresh.update_layout(uniformtext={"minsize": 11, "mode": "show"}, hoverlabel={"align": "left", "font_size": 13})
            want = {k: v for k, v in fresh.to_plotly_json()["layout"].items() if v != {}}  # no empty title object
            got = drill_figure(nodes, title, height=height, as_dict=True)["layout"]
            assert got == want
            got["title"] = "changed"  # each call gets its own copy
            assert drill_figure(nodes, title, height=height, as_dict=True)["layout"] == want


def _deep_tree(n_themes: int, n_facts: int, n_eps: int = 2) -> list[HNode]:
    out = []
    for t in range(n_themes):
        out.append(HNode(f"t{t}", "", "theme", f"theme {t}", kind="theme"))
        for s in range(n_facts):
            out.append(HNode(f"t{t}s{s}", f"t{t}", "fact", f"On 1 May 2024, user is trying fact {s} of theme {t}",
                             kind="semantic"))
            out += [HNode(f"t{t}s{s}e{e}", f"t{t}s{s}", "episode", f"episode {e}", kind="episode")
                    for e in range(n_eps)]
    return out


def _no_overlap(view) -> None:
    for col in (0, 1):
        spans = sorted((r.row, r.row + r.rows) for r in view.regions if r.column == col)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans
    assert all(0 <= r.row and r.row + r.rows <= view.rows <= FOCUS_ROWS for r in view.regions)


def test_focus_view_sends_only_the_rows_on_screen_each_labelled():
    nodes = _deep_tree(178, 30)
    view = focus_view(nodes)
    _no_overlap(view)
    assert len(view.regions) <= 2 * FOCUS_ROWS < len(nodes)  # one column of rows and its preview
    assert all(r.label.strip() for r in view.regions)  # no region without a label
    left = [r for r in view.regions if r.column == 0]
    assert len(left) == FOCUS_CHILDREN and left[-1].label == f"{178 - FOCUS_CHILDREN + 1} more themes"
    first = left[0]
    assert first.count.endswith("30\u00a0facts")
    preview = [r for r in view.regions if r.column == 1 and r.row < first.row + first.rows]
    shown = [r for r in preview if "more" not in r.label]
    assert preview[-1].label == f"{30 - len(shown)} more facts"  # the facts not previewed, counted
    sent, whole = json.dumps(focus_figure(view, "t")), json.dumps(drill_figure(nodes, "t", as_dict=True))
    assert len(sent) * 10 < len(whole)  # a few dozen regions, not the tree's 16,000 nodes


def test_following_n_more_pages_reaches_every_theme_once():
    nodes = _deep_tree(40, 1, 0)  # themes whose facts have no children: a deeper preview is none
    seen, path = [], ()
    for _ in range(10):
        view = focus_view(nodes, path)
        left = [r for r in view.regions if r.column == 0]
        seen += [r.action[-1] for r in left if "more" not in r.label]
        more = [r for r in left if "more" in r.label]
        if not more:
            break
        path = more[0].action
        assert view.crumbs[0] == ((), "all themes")
    assert sorted(seen) == sorted(n.id for n in nodes if n.level == "theme")


def test_a_click_drills_and_the_path_climbs_back_and_survives_a_missing_node():
    nodes = _deep_tree(3, 4)
    top = focus_view(nodes)
    theme = next(r for r in top.regions if r.column == 0)
    inside = focus_view(nodes, theme.action)
    assert inside.path == theme.action and [c[1] for c in inside.crumbs] == ["all themes", "theme 0"]
    assert {r.action[-1] for r in inside.regions if r.column == 0} == {f"t0s{s}" for s in range(4)}
    assert {r.label for r in inside.regions if r.column == 1} == {"episode 0", "episode 1"}
    gone = focus_view(nodes, ("t0", "t0s9", "t0s9e0"))  # a fact not (or no longer) in the hierarchy
    assert gone.path == ("t0",) and gone.missing == "t0s9"
    assert focus_view(nodes, ("t0s1",)).missing == "t0s1"  # not a child of the top level: not followed


def test_distinct_labels_cut_the_day_and_the_words_siblings_share():
    got = distinct_labels(["On 12 July 2024, user is trying to optimize the model",
                           "On 28 July 2024, user is trying to evaluate the BLEU score",
                           "Assistant said to use Adam"])
    assert got == ["…optimize the model", "…evaluate the BLEU score", "Assistant said to use Adam"]
    assert distinct_labels(["user is here now", "user is there"]) == ["user is here now", "user is there"]
    # the shared words counted among all siblings, though one is drawn
    assert distinct_labels(["a b c d e"], among=["a b c d e", "a b x y z"]) == ["…c d e"]


def test_focus_figure_labels_each_region_escaped_within_its_column():
    nodes = [HNode("t", "", "theme", "theme", kind="theme"),
             HNode("f", "t", "fact", XSS + " and a rather long fact text " * 4, kind="semantic"),
             HNode("e", "f", "episode", "ep", kind="episode")]
    view = focus_view(nodes, ("t",))
    fig = focus_figure(view, "t")
    d, labels = fig["data"]  # the bars (clickable regions), then their labels as one text trace
    assert len(labels["text"]) == len(view.regions) == len(d["y"])
    assert "<img" not in "".join(labels["text"]) + "".join(d["hovertext"])
    for r, text in zip(view.regions, labels["text"], strict=True):
        assert 1 <= text.count("<br>") + 1 <= min(2, r.rows)
    assert d["customdata"][0].split("\t") == list(view.regions[0].action)
    # each region's label drawn left-aligned inside it, not hoverable (a click goes to the bar under it)
    assert labels["mode"] == "text" and labels["textposition"] == "middle right" and labels["hoverinfo"] == "skip"
    for x, y, bar_y, base, width in zip(labels["x"], labels["y"], d["y"], d["base"], d["x"], strict=True):
        assert y == bar_y and base < x < base + width
    assert "annotations" not in fig["layout"]


def _annotated(view: FocusView) -> list[str]:
    """The labels as the focus figure drew them before its text trace: one left-aligned annotation per region."""
    import memcore.viz.hierarchy as h

    need = [min(h.NEED_CAP, max((len(r.label) + len(r.count) for r in view.regions if r.column == c), default=1))
            for c in (0, 1)]
    split = min(h.SPLIT[1], max(h.SPLIT[0], need[0] / sum(need))) if view.columns == 2 else 1.0
    chars = [max(12, int(w * h.PLOT_PX / h.CHAR_PX) - 2) for w in (split, 1 - split)]
    return [h._fit(r.label, r.count, chars[r.column], min(2, r.rows)) for r in view.regions]


def test_the_label_trace_carries_every_label_the_annotations_did():
    nodes = _deep_tree(178, 30)
    for path, capped in (((), True), (("t3",), True), (("t3", "t3s1"), False)):
        view = focus_view(nodes, path)
        fig = focus_figure(view)
        assert fig["data"][1]["text"] == _annotated(view)  # every region's label, "N more" ones too, in order
        assert any("more" in t for t in fig["data"][1]["text"]) == capped


def test_the_focus_figure_sends_the_template_it_uses_only():
    view = focus_view(_deep_tree(40, 5))
    layout = focus_figure(view)["layout"]
    assert "data" not in layout["template"]  # no other trace type's defaults
    assert set(layout["template"]["layout"]) <= {"font", "hoverlabel", "hovermode", "paper_bgcolor", "plot_bgcolor",
                                                 "title", "xaxis", "yaxis"}
    assert layout["template"]["layout"]["plot_bgcolor"] == "white"
    full = drill_figure(_deep_tree(3, 2), "t", as_dict=True)["layout"]["template"]
    assert "data" in full  # the drilled icicle keeps the whole template


def test_a_search_names_the_top_and_outlines_its_matches_first():
    nodes = _deep_tree(30, 3)
    kept, hits = search(nodes, "fact 2 of theme 29")
    view = focus_view(kept, hits=hits)
    assert view.crumbs[0][1] == "themes with a match"
    assert [r.action for r in view.regions if r.outline] == [("t29", "t29s2")]
