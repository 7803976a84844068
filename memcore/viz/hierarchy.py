"""A navigable hierarchy for any system whose view declares levels (e.g. themes -> facts -> episodes -> turns).

A view's `levels(items_at, step)` returns `HNode`s (one per item and level, `parent` naming the node above it; a
node reachable from two parents appears once under each, with a path id). `focus_view` is what a page draws of it,
drilled on the server: the node a drill path leads to, its children (left) and a preview of theirs (right), at most
`FOCUS_ROWS` labelled rows with "N more" regions that page on, the path as a breadcrumb; `focus_figure` draws it
(bars laid out as an icicle, each region's click reporting the path it opens), so a step sends a few dozen regions,
not the tree. `distinct_labels` tells siblings apart (a leading "On <day>," and shared leading words cut).
`drill_figure` draws a small tree whole as a plotly icicle drilled in the browser (two levels at a time, at most
`MAX_CHILDREN` per node, the rest in "N more"; e.g. one question's retrieval path). `search` keeps the nodes whose
text matches and their ancestors; a `highlight` set (e.g. the question's retrieval path) is drawn in colour,
everything else grey. Pure data -> figure; no Streamlit."""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
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


def with_ancestors(ids: set[str], by_id: dict[str, HNode]) -> set[str]:
    """The ids with every ancestor of theirs (a highlighted node's path up to its root)."""
    out = set(ids)
    for h in ids:
        p = by_id[h].parent if h in by_id else ""
        while p and p not in out:
            out.add(p)
            p = by_id[p].parent if p in by_id else ""
    return out


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
    on_path = with_ancestors(hl, by_id)
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


# what the focus view's bars and labels take from the template (colours, fonts and axes are set on them): the rest of
# it (every other trace type's defaults, colour scales, 3-D scenes, maps) is ~7 KB a chart would send for nothing
LEAN_TEMPLATE = ("font", "hoverlabel", "hovermode", "paper_bgcolor", "plot_bgcolor", "title", "xaxis", "yaxis")


@lru_cache(maxsize=8)
def _layout_json(titled: bool, height: int, lean: bool = False) -> str:
    frame = style(go.Figure(), "TITLE" if titled else "", height=height)
    frame.update_layout(uniformtext={"minsize": 11, "mode": "show"}, hoverlabel={"align": "left", "font_size": 13})
    layout = frame.to_plotly_json()["layout"]
    if lean:
        kept = layout["template"].get("layout", {})
        layout["template"] = {"layout": {k: kept[k] for k in LEAN_TEMPLATE if k in kept}}
    return json.dumps(layout)


def _layout(title: str, height: int, lean: bool = False) -> dict:
    """The icicle's layout as a plain dict: styled and validated once per height (~80 ms each time otherwise: a
    Replay step draws one), the title set in a fresh copy. `lean`: the template's layout part only, as far as
    `LEAN_TEMPLATE` (for a chart whose traces set their own looks)."""
    layout = json.loads(_layout_json(bool(title), height, lean))
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


# ------------------------------------------------------------------ drilled on the server: only what is on screen
FOCUS_ROWS = 36  # rows of the focus view (ROW_PX each): the most regions on screen at once
FOCUS_CHILDREN = 12  # children drawn (the last one "N more" when there are more) when they have children to preview
PLOT_PX = 790  # the plot's width at a 1280 px page (labels are cut to fit it: ~7.3 px per character of 13 px text)
CHAR_PX = 7.3
SPLIT = (0.35, 0.65)  # the least and most of the width the left column takes (its share follows its labels')
LABEL_INSET = 0.006  # a label's start right of its region's left edge (x in 0..1: ~5 px, as the annotations were)
NEED_CAP = 90  # characters: a label longer than this asks no more width (it wraps or is cut)
MORE = "+"  # a drill path entry "+k": the focused node's children from the k-th on (the page a "N more" opens)
_DAY_CLAUSE = re.compile(r"^\s*On \d{1,2} [A-Z][a-z]+ \d{4},\s+")
SHARED_WORDS = (2, 6)  # a leading run of this many words shared with a sibling is cut (the rest tells them apart)


def _plural(level: str, n: int) -> str:
    return f"{level}{'s' if n != 1 else ''}"


def distinct_labels(labels: list[str], among: Iterable[str] | None = None) -> list[str]:
    """Sibling labels told apart: a leading "On <day>, " clause is dropped (the day stays in the hover), then the
    longest run of 2-6 leading words a label shares with another sibling (of `among`, all the siblings, when only
    some are drawn) is cut to "…" when at least 3 words stay ("On 12 July 2024, user is trying to optimize X" and
    "... user is trying to evaluate Y" read "…optimize X" and "…evaluate Y")."""
    def bare_of(x: str) -> str:
        return _DAY_CLAUSE.sub("", x, count=1) or x

    bare = [bare_of(x) for x in labels]
    words = [x.split() for x in bare]
    prefixes: Counter[tuple[str, ...]] = Counter()
    for w in (words if among is None else [bare_of(x).split() for x in among]):
        for k in range(SHARED_WORDS[0], min(SHARED_WORDS[1], len(w) - 3) + 1):
            prefixes[tuple(t.lower() for t in w[:k])] += 1
    out = []
    for x, w in zip(bare, words, strict=True):
        cut = next((k for k in range(min(SHARED_WORDS[1], len(w) - 3), SHARED_WORDS[0] - 1, -1)
                    if prefixes[tuple(t.lower() for t in w[:k])] >= 2), 0)
        out.append("…" + " ".join(w[cut:]) if cut else x)
    return out


@dataclass(frozen=True)
class Region:
    """One drawn region of the focus view: `column` 0 (the focus's children) or 1 (their children), `row` and
    `rows` its place in rows from the top, `action` the drill path a click on it opens."""

    label: str
    hover: str
    column: int
    row: int
    rows: int
    color: str
    action: tuple[str, ...]
    outline: bool = False
    count: str = ""  # " · 8 facts": drawn after the label, which is cut before it


@dataclass(frozen=True)
class FocusView:
    """What the focus view draws: its regions, the drill path it shows (`path`, its nodes that exist; `crumbs`
    their labels, the top first, "" for the top level), and `missing`: a path entry no longer in the hierarchy
    (e.g. a theme merged away at this step), whose nearest ancestor is shown instead."""

    regions: list[Region]
    path: tuple[str, ...]
    crumbs: list[tuple[tuple[str, ...], str]]
    rows: int
    columns: int
    missing: str = ""
    total: int = 0  # the nodes of the hierarchy (what the whole tree would have sent)


def focus_view(nodes: list[HNode], path: Iterable[str] = (), highlight: Iterable[str] = (), hits: Iterable[str] = (),
               rows: int = FOCUS_ROWS, max_children: int = FOCUS_CHILDREN) -> FocusView:
    """The part of a hierarchy on screen when drilled to `path` (node ids from the top, each a child of the one
    before; "+k" opens a node's children from the k-th on): the focused node's children and, beside each, a
    preview of its own children, at most `rows` regions one row or more tall, each labelled; what does not fit
    is one "N more" region (click: the next page). Nothing else of the tree is sent to the browser."""
    by_id: dict[str, HNode] = {}
    for n in nodes:
        by_id.setdefault(n.id, n)
    kids = children_of(nodes)
    hl, hit = set(highlight), set(hits)
    on_path = with_ancestors(hl, by_id)

    def order(group: list[HNode]) -> list[HNode]:
        return sorted(group, key=lambda n: (n.id not in on_path, n.id not in hit, -len(kids.get(n.id, []))))

    # the path kept as far as it is valid: each entry a child of the one before, "+k" a page of its children
    kept: list[str] = []
    focus, start, missing = "", 0, ""
    for entry in path:
        if entry.startswith(MORE) and entry[1:].isdigit():
            if int(entry[1:]) < len(kids.get(focus, [])):
                start = int(entry[1:])
                kept.append(entry)
            continue
        if entry in by_id and any(c.id == entry for c in kids.get(focus, [])):
            focus, start = entry, 0
            kept.append(entry)
        else:
            missing = entry
            break
    crumbs: list[tuple[tuple[str, ...], str]] = []
    top = kids.get("", [])
    top_level = _plural(top[0].level, 2) if top else "nodes"
    crumbs.append(((), f"{top_level} with a match" if hit else f"all {top_level}"))
    for i, entry in enumerate(kept):
        if entry.startswith(MORE):
            under = kids.get(kept[i - 1] if i else "", [])
            k = int(entry[1:])
            crumbs.append((tuple(kept[:i + 1]), f"{_plural(under[0].level, 2)} {k + 1}-{len(under)}"))
        else:
            crumbs.append((tuple(kept[:i + 1]), by_id[entry].label))
    base = tuple(kept[:-1]) if kept and kept[-1].startswith(MORE) else tuple(kept)  # what a click extends
    group = order(kids.get(focus, []))[start:]
    preview = any(kids.get(n.id) for n in group)
    cap = max_children if preview else rows
    shown, rest = (group, []) if len(group) <= cap else (group[:cap - 1], group[cap - 1:])
    slots = len(shown) + (1 if rest else 0)
    # rows for each shown child: one each, then the spare ones round-robin to those with children to preview
    given = [1] * len(shown)
    spare = rows - slots
    wants = [len(kids.get(n.id, [])) for n in shown]
    while spare > 0 and any(g < w for g, w in zip(given, wants, strict=True)):
        for i, (g, w) in enumerate(zip(given, wants, strict=True)):
            if spare and g < w:
                given[i] += 1
                spare -= 1

    def colour(n: HNode) -> str:
        return kind_color(n.kind or n.level) if not hl or n.id in on_path else GREY

    regions: list[Region] = []
    labels = distinct_labels([n.label for n in shown], [n.label for n in group])
    row = 0
    for n, lab, g in zip(shown, labels, given, strict=True):
        under = order(kids.get(n.id, []))
        count = f" ·\u00a0{len(under)}\u00a0{_plural(under[0].level, len(under))}" if under else ""  # one piece
        tip = f"{n.level} {n.id}" + (f" · {_descendants(kids, n.id)} below" if under else "")
        regions.append(Region(lab, "<br>".join(esc(x) for x in (tip, shorten(n.text or n.label, HOVER_CHARS))),
                              0, row, g, colour(n), (*base, n.id), n.id in hit, count))
        if under:
            k = g if len(under) <= g else g - 1
            sub = under[:k]
            sublabels = distinct_labels([c.label for c in sub], [c.label for c in under])
            for j, (c, clab) in enumerate(zip(sub, sublabels, strict=True)):
                cc = len(kids.get(c.id, []))
                ctip = f"{c.level} {c.id}" + (f" · {cc} {_plural(kids[c.id][0].level, cc)}" if cc else "")
                regions.append(Region(clab, "<br>".join(esc(x) for x in (ctip, shorten(c.text or c.label, HOVER_CHARS))),
                                      1, row + j, 1, colour(c), (*base, n.id, c.id), c.id in hit))
            if len(under) > k:
                more = len(under) - k
                regions.append(Region(f"{more} more {_plural(under[0].level, more)}" if k else
                                      f"{more} {_plural(under[0].level, more)}",
                                      esc(f"{more} {_plural(under[0].level, more)} of {shorten(n.label, 60)}: click "
                                          "to see them"), 1, row + k, g - k, "#F2F2F2",
                                      (*base, n.id, *([f"{MORE}{k}"] if k else []))))
        row += g
    if rest:
        regions.append(Region(f"{len(rest)} more {_plural(rest[0].level, len(rest))}",
                              esc(f"{len(rest)} more: click to see them"), 0, row, 1, "#F2F2F2",
                              (*base, f"{MORE}{start + len(shown)}")))
        row += 1
    lines = 2 if 0 < row * 2 <= rows else 1  # room to spare: every region two rows tall, its label on two lines
    if lines > 1:
        regions = [replace(r, row=r.row * lines, rows=r.rows * lines) for r in regions]
    return FocusView(regions, tuple(kept), crumbs, max(row * lines, 1), 2 if preview else 1, missing, len(nodes))


def _fit(label: str, count: str, chars: int, lines: int) -> str:
    """A label on at most `lines` lines of `chars` characters, `count` kept at its end, each line escaped."""
    full = textwrap.wrap(label + count, chars) or [""]
    if len(full) > lines:
        head = textwrap.wrap(label, chars)[:lines - 1]
        rest = label[len(" ".join(head)):].strip() if head else label
        full = [*head, shorten(rest, max(8, chars - len(count))) + count]
    return "<br>".join(esc(x) for x in full)


def focus_figure(view: FocusView, title: str = "", row_px: int = ROW_PX) -> dict:
    """A focus view as a plain plotly dict: an icicle of bars, the focused node's children left, a preview of
    theirs right (one column when they have none; the columns' widths follow their longest labels, 35-65%), each
    region clickable (its index in `view.regions` is the point index a click reports) and labelled, left-aligned
    inside it (wrapped to two lines where it is two rows tall, cut to its column's width; the full text in the
    hover). The labels are one text trace over the bars (`data[1]`, the regions' order, not hoverable: a click
    goes to the bar under it), not one layout annotation each: a step that changes the hierarchy draws the chart
    anew, and an annotation costs plotly a text measure and a group of elements of its own (about twice the DOM
    work of a text point)."""
    need = [min(NEED_CAP, max((len(r.label) + len(r.count) for r in view.regions if r.column == c), default=1))
            for c in (0, 1)]
    split = min(SPLIT[1], max(SPLIT[0], need[0] / sum(need))) if view.columns == 2 else 1.0
    widths = (split, 1 - split)
    chars = [max(12, int(w * PLOT_PX / CHAR_PX) - 2) for w in widths]
    regs = view.regions
    texts = [_fit(r.label, r.count, chars[r.column], min(2, r.rows)) for r in regs]
    ys = [r.row + r.rows / 2 for r in regs]
    bases = [0 if r.column == 0 else widths[0] for r in regs]
    # bar text would centre its lines and shrink to fit: the labels are a text trace, each line starting at the left
    labels = {"type": "scatter", "mode": "text", "x": [b + LABEL_INSET for b in bases], "y": ys, "text": texts,
              "textposition": "middle right", "textfont": {"size": 13, "color": "#1F2933"}, "hoverinfo": "skip",
              "showlegend": False}
    trace = {"type": "bar", "orientation": "h",
             "y": ys, "width": [r.rows * 0.96 for r in regs], "base": bases,
             "x": [widths[r.column] * 0.995 for r in regs],
             "hovertext": [r.hover for r in regs], "hovertemplate": "%{hovertext}<extra></extra>",
             "marker": {"color": [r.color for r in regs],
                        "line": {"color": ["#1F2933" if r.outline else "#FFFFFF" for r in regs],
                                 "width": [3 if r.outline else 0 for r in regs]}},
             "customdata": ["\t".join(r.action) for r in regs], "showlegend": False}
    layout = _layout(title, view.rows * row_px + (60 if title else 10), lean=True)
    layout.update({"margin": {"l": 4, "r": 4, "t": 40 if title else 4, "b": 4}, "bargap": 0,
                   "xaxis": {"range": [0, 1], "visible": False, "fixedrange": True},
                   "yaxis": {"range": [view.rows, 0], "visible": False, "fixedrange": True},
                   "dragmode": False})
    return {"data": [trace, labels], "layout": layout}
