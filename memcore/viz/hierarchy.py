"""A navigable hierarchy for any system whose view declares levels (e.g. themes -> facts -> episodes -> turns).

A view's `levels(items_at, step)` returns `HNode`s (one per item and level, `parent` naming the node above it; a
node reachable from two parents appears once under each, with a path id). `drill_figure` draws them as an icicle
that shows two levels at a time, the focused node and its children, each child the same height: at most
`MAX_CHILDREN` children are drawn under a node and the rest sit in one "N more" node (itself drillable), so every
region on screen is tall enough for its label (`ROW_PX`). Clicking a region drills into it; the path bar above
climbs back. `search` keeps the nodes whose text matches and their ancestors; a `highlight` set (e.g. the
question's retrieval path) is drawn in colour, everything else grey. Pure data -> figure; no Streamlit.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import plotly.graph_objects as go

from memcore.viz.safe import esc, shorten
from memcore.viz.theme import kind_color, style

MAX_CHILDREN = 18  # children drawn under one node; the rest go into an "N more" node
HEIGHT = 600
ROW_PX = 22  # the least height a region may have: one line of 12 px text with its padding
LABEL_CHARS = 44  # a label is cut to this many characters (its full text is in the hover)
GREY = "#D9D9D9"
HOVER_CHARS = 120  # a node's text in its hover, cut (thousands of nodes travel to the browser with every step)


@dataclass(frozen=True)
class HNode:
    """One node of a hierarchy: `parent` is "" for a top-level node; `level` names its level ("theme")."""

    id: str
    parent: str
    level: str
    label: str
    text: str = ""
    kind: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)


def children_of(nodes: Iterable[HNode]) -> dict[str, list[HNode]]:
    """{parent id: its children in order} ("" holds the top level)."""
    out: dict[str, list[HNode]] = {}
    for n in nodes:
        out.setdefault(n.parent, []).append(n)
    return out


def search(nodes: list[HNode], query: str) -> tuple[list[HNode], set[str]]:
    """The nodes on a path to a match of `query` (case-insensitive, in label, text or id) and below a match, and
    the matching ids. An empty query keeps every node and matches none."""
    q = query.strip().lower()
    if not q:
        return nodes, set()
    by_id = {n.id: n for n in nodes}
    hits = {n.id for n in nodes if q in n.label.lower() or q in n.text.lower() or q in n.id.lower()}
    keep = set(hits)
    for h in hits:  # ancestors
        p = by_id[h].parent
        while p and p not in keep:
            keep.add(p)
            p = by_id[p].parent if p in by_id else ""
    kids = children_of(nodes)
    stack = list(hits)  # descendants of a match stay navigable
    while stack:
        for c in kids.get(stack.pop(), []):
            if c.id not in keep:
                keep.add(c.id)
                stack.append(c.id)
    return [n for n in nodes if n.id in keep], hits


def _descendants(kids: dict[str, list[HNode]], nid: str) -> int:
    total, stack = 0, [nid]
    while stack:
        for c in kids.get(stack.pop(), []):
            total += 1
            stack.append(c.id)
    return total


def drill_figure(nodes: list[HNode], title: str, highlight: Iterable[str] = (), hits: Iterable[str] = (),
                 max_children: int = MAX_CHILDREN, root_label: str = "all", height: int = HEIGHT,
                 as_dict: bool = False) -> go.Figure | dict:
    """An icicle of the hierarchy, two levels on screen at a time (click a region to drill into it).

    Under each node at most `max_children` children are drawn, the rest in one "N more" node; every node drawn
    at a level gets the same share of its parent, so with `height` / (max_children + 1) >= ROW_PX every label on
    screen has room. Highlighted ids (and their ancestors) are drawn in their level's colour, others grey when a
    highlight is given; search hits get a thick outline. `as_dict`: the figure as a plain plotly dict, unvalidated
    (fast for thousands of nodes)."""
    hl, hit = set(highlight), set(hits)
    by_id = {n.id: n for n in nodes}
    on_path = set(hl)
    for h in hl:
        p = by_id[h].parent if h in by_id else ""
        while p and p not in on_path:
            on_path.add(p)
            p = by_id[p].parent if p in by_id else ""
    kids = children_of(nodes)
    below_of: dict[str, int] = {}

    def below(nid: str) -> int:  # nodes under one (memoised: each subtree counted once)
        if nid not in below_of:
            below_of[nid] = 0  # a cycle in bad data counts nothing twice
            below_of[nid] = sum(1 + below(c.id) for c in kids.get(nid, []))
        return below_of[nid]

    used: Counter[str] = Counter()

    def uid(nid: str) -> str:  # a node drawn twice (an episode under two facts) gets "#k" on its later copies
        used[nid] += 1
        return nid if used[nid] == 1 and nid != "more" else f"{nid}#{used[nid]}"

    ids, parents, labels, hover, colors, values, widths = ["ROOT"], [""], [esc(root_label)], [esc(root_label)], \
        ["#FFFFFF"], [1.0], [1]

    def add(nid: str, parent: str, label: str, tip: str, color: str, value: float, width: int) -> None:
        ids.append(nid)
        parents.append(parent)
        labels.append(esc(label))
        hover.append(tip)
        colors.append(color)
        values.append(value)
        widths.append(width)

    def place(parent_id: str, group: list[HNode], fig_parent: str, value: float) -> None:
        # the highlighted and the matching first, then the biggest (most children), then as given; the rest in "N more"
        group = sorted(group, key=lambda n: (n.id not in on_path, n.id not in hit, -len(kids.get(n.id, []))))
        shown, rest = (group, []) if len(group) <= max_children else (group[:max_children - 1], group[max_children - 1:])
        share = value / (len(shown) + (1 if rest else 0))
        for n in shown:
            n_below = below(n.id)
            color = kind_color(n.kind or n.level) if not hl or n.id in on_path else GREY
            under = kids.get(n.id, [])
            count = f" · {len(under)} {under[0].level}{'s' if len(under) > 1 else ''}" if under else ""
            add(uid(n.id), fig_parent,
                shorten(n.label, LABEL_CHARS) + count,
                "<br>".join(esc(x) for x in (f"{n.level} {n.id}" + (f" · {n_below} below" if n_below else ""),
                                             shorten(n.text or n.label, HOVER_CHARS))),
                color, share, 4 if n.id in hit else 1)
            if kids.get(n.id):
                place(n.id, kids[n.id], ids[-1], share)
        if rest:
            more_id = uid("more")
            add(more_id, fig_parent, f"{len(rest)} more {rest[0].level}s", esc(f"{len(rest)} more: click to see them"),
                "#F2F2F2", share, 1)
            place(f"more:{parent_id}", rest, more_id, share)

    place("", kids.get("", []), "ROOT", 1.0)
    trace = {"type": "icicle", "ids": ids, "parents": parents, "labels": labels, "values": values,
             "branchvalues": "total", "maxdepth": 2, "hovertext": hover,
             "hovertemplate": "%{hovertext}<extra></extra>", "sort": False,
             "marker": {"colors": colors, "line": {"color": ["#1F2933" if w > 1 else "#FFFFFF" for w in widths],
                                                   "width": widths}},
             "tiling": {"orientation": "h"}, "pathbar": {"visible": True, "side": "top"},
             "textfont": {"size": 13}, "insidetextfont": {"size": 13}, "textposition": "middle left"}
    if as_dict:  # thousands of nodes: plotly's per-element validation would take seconds
        return {"data": [trace], "layout": _layout(title, height)}
    frame = style(go.Figure(), title, height=height)
    frame.update_layout(uniformtext={"minsize": 11, "mode": "show"}, hoverlabel={"align": "left", "font_size": 13})
    frame.add_trace(go.Icicle(**{k: v for k, v in trace.items() if k != "type"}))
    return frame


@lru_cache(maxsize=8)
def _layout_json(titled: bool, height: int) -> str:
    frame = style(go.Figure(), "TITLE" if titled else "", height=height)
    frame.update_layout(uniformtext={"minsize": 11, "mode": "show"}, hoverlabel={"align": "left", "font_size": 13})
    return json.dumps(frame.to_plotly_json()["layout"])


def _layout(title: str, height: int) -> dict:
    """The icicle's layout as a plain dict: styled and validated once per height (~80 ms each time otherwise: a
    Replay step draws one), the title set in a fresh copy."""
    layout = json.loads(_layout_json(bool(title), height))
    if title:
        layout["title"]["text"] = title
    elif not layout.get("title"):
        layout.pop("title", None)  # an empty title object: plotly's validation drops it too
    return layout


def level_rows(nodes: list[HNode], parent: str = "") -> list[dict]:
    """The children of one node as table rows (level, id, label, how many nodes below it)."""
    kids = children_of(nodes)
    return [{"level": n.level, "id": n.id, "label": n.label, "below": _descendants(kids, n.id)}
            for n in kids.get(parent, [])]
