"""xMemory's view (registered with memcore.viz.views): the theme -> semantic -> episode hierarchy (growth), the
retrieval path (Stage I / II).

On the viz floor (tests/test_import_graph.py, "system views"): it draws with memcore.viz's parts; the view registry
imports it by name, nothing in memcore.systems does."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.systems.xmemory.config import XMemoryConfig
from memcore.text.dates import day_of
from memcore.types import Trace
from memcore.viz.hierarchy import HNode, drill_figure
from memcore.viz.parts import Block, Part, Row, Text
from memcore.viz.replay import ReplayData
from memcore.viz.safe import esc, shorten
from memcore.viz.tables import explain_empty
from memcore.viz.theme import HIT, MISS, kind_color, style
from memcore.viz.views import ASK, REPLAY, ItemsAt, SystemView, register_view

GREY = "#D9D9D9"


# a fact quoting its episode: "[2023-05-08T10:15:00] Maya & Jonas: run, half, marathon: On 8 May 2023, ..."
_QUOTED = re.compile(r"^\s*\[[^\]]*\d{4}-\d\d-\d\d[^\]]*\]\s*(?:[^:\[\]]{1,60}:\s*[\w' ,&-]{1,80}:\s*)?")


def plain(text: str) -> str:
    """A memory text without the timestamp and title an extractive fact carries from its episode (the date is
    shown as a day beside it)."""
    return _QUOTED.sub("", str(text)) or str(text)


def _label(it: Any) -> str:
    m = it.metadata
    if it.kind == "episode" and (m.get("episode_time") or m.get("date")):
        return day_of(str(m.get("episode_time") or m.get("date")))  # an episode reads as its day: "8 May 2023"
    return shorten(plain(m.get("label") or m.get("title") or it.text), 28)


HOVER_CHARS, HOVER_LINES = 48, 6  # hover text wrapped into a box that stays inside the chart


def hover_box(*lines: str) -> str:
    """Escaped hover text: each line wrapped at HOVER_CHARS characters, at most HOVER_LINES lines in all."""
    out: list[str] = []
    for line in lines:
        out.extend(textwrap.wrap(" ".join(str(line).split()), HOVER_CHARS) or [""])
    if len(out) > HOVER_LINES:
        out = [*out[:HOVER_LINES - 1], shorten(out[HOVER_LINES - 1], HOVER_CHARS - 1) + "…"]
    return "<br>".join(esc(x) for x in out)


def _hover(it: Any, kind: str) -> str:
    m = it.metadata
    when = m.get("episode_time") or m.get("date")
    head = f"{kind} {it.id}" + (f" · {day_of(str(when))}" if when else "")
    name = m.get("label") or m.get("title") or ""
    return hover_box(head, *([name] if name else []), plain(it.text))


FULL_DEPTH_MAX = 30  # semantics up to which all three rings show at once; more: themes and semantics, click to zoom
LABEL_MIN_PX = 11  # a wedge label smaller than this is left out (it would not be readable)


def hierarchy_sunburst(items: Iterable[Any], highlight: Iterable[str] = (), max_semantics: int = 400,
                       depth: int | None = None) -> go.Figure:
    """Sunburst of themes (inner ring) -> semantics -> source episodes; highlighted ids get a red border.

    `items` are MemoryItem-like objects (id, kind, text, sources, metadata) of kinds theme,
    semantic and episode, e.g. the items alive at one replay step. Labels too small to read are left out (hover
    and zoom show them), episodes are labelled by their day, hover text is wrapped to stay inside the chart; with
    more than FULL_DEPTH_MAX semantics the episodes ring shows when a theme is clicked (`depth` overrides).
    """
    items = list(items)
    hl = set(highlight)
    by_id = {it.id: it for it in items}
    ids, parents, labels, hover, colors, lines = [], [], [], [], [], []

    def add(nid: str, parent: str, it: Any, kind: str) -> None:
        ids.append(nid)
        parents.append(parent)
        labels.append(_label(it))
        hover.append(_hover(it, kind))
        colors.append(kind_color(kind))
        lines.append(MISS if it.id in hl else "#FFFFFF")

    themes = [it for it in items if it.kind == "theme"]
    for th in themes:
        add(th.id, "", th, "theme")
    theme_ids = {th.id for th in themes}
    sems = [it for it in items if it.kind == "semantic"][:max_semantics]
    for s in sems:
        parent = s.metadata.get("theme", "")
        if parent not in theme_ids:
            continue
        add(s.id, parent, s, "semantic")
        for src in s.sources:
            ep = by_id.get(src)
            if ep is not None and ep.kind == "episode":
                add(f"{s.id}/{ep.id}", s.id, ep, "episode")
    n_t, n_s = len(themes), sum(1 for p in parents if p in theme_ids)
    shown = depth or (3 if n_s <= FULL_DEPTH_MAX else 2)
    fig = go.Figure(go.Sunburst(
        ids=ids, parents=parents, labels=[esc(x) for x in fitting_labels(ids, parents, labels, shown)],
        hovertext=hover, hovertemplate="%{hovertext}<extra></extra>",
        marker={"colors": colors, "line": {"color": lines, "width": [4 if c == MISS else 1 for c in lines]}},
        maxdepth=shown, insidetextorientation="radial", textfont={"size": LABEL_MIN_PX + 1}))
    fig.update_layout(hoverlabel={"align": "left", "font_size": 13})
    return style(fig, f"xMemory hierarchy: {n_t} themes, {n_s} semantics", height=560)


RADIUS_PX = 230  # the sunburst's radius in a 560 px chart
CHAR_PX = 0.55  # an average character's width per px of font size (sans-serif)


def fitting_labels(ids: list[str], parents: list[str], labels: list[str], rings: int) -> list[str]:
    """Each wedge's label when it can be read at LABEL_MIN_PX + 1 px, written along the radius: the wedge is at
    least a line high at its middle, and the label is cut to the ring's depth; '' (left out) otherwise. Sizes as
    the sunburst draws them without values: a wedge spans its leaves."""
    kids: dict[str, list[str]] = {}
    for i, p in zip(ids, parents, strict=True):
        kids.setdefault(p, []).append(i)
    size: dict[str, int] = {}

    def leaves(n: str) -> int:
        if n not in size:
            size[n] = sum(leaves(k) for k in kids.get(n, [])) or 1
        return size[n]

    total = sum(leaves(r) for r in kids.get("", [])) or 1
    level = {i: 1 if p == "" else 0 for i, p in zip(ids, parents, strict=True)}
    for i, p in zip(ids, parents, strict=True):
        if p:
            level[i] = level.get(p, 1) + 1
    font, ring = LABEL_MIN_PX + 1, RADIUS_PX / rings
    chars = max(4, int(ring * 0.9 / (font * CHAR_PX)))
    out = []
    for i, lab in zip(ids, labels, strict=True):
        d = level[i]
        arc = 2 * math.pi * leaves(i) / total * (d - 0.5) * ring  # the wedge's width across its middle, px
        out.append(shorten(lab, chars) if d <= rings and arc >= font * 1.3 else "")
    return out


def path_sunburst(structure: dict[str, Any]) -> go.Figure:
    """The retrieval path: candidate themes -> semantics -> included episodes; picked in colour, others grey."""
    ids, parents, labels, hover, colors = [], [], [], [], []
    themes = structure.get("themes") or []
    tids = {t["id"] for t in themes}
    for t in themes:
        ids.append(t["id"])
        parents.append("")
        labels.append(esc(shorten(t.get("label") or t["id"], 24)))
        hover.append(esc(f"{t['id']} score {t.get('score')} gain {t.get('gain')} "
                         f"{'picked #' + str(t.get('pick_order')) if t.get('picked') else 'not picked'}"))
        colors.append(kind_color("theme") if t.get("picked") else GREY)
    included = {e["id"] for e in structure.get("episodes") or [] if str(e.get("decision", "")).startswith("include")}
    for s in structure.get("semantics") or []:
        if s.get("theme") not in tids:
            continue
        ids.append(s["id"])
        parents.append(s["theme"])
        labels.append(esc(s["id"]))
        hover.append(esc(f"{s['id']} score {s.get('score')} "
                         f"{'picked #' + str(s.get('pick_order')) if s.get('picked') else 'not picked'}"))
        colors.append(kind_color("semantic") if s.get("picked") else GREY)
        for e in s.get("episodes") or []:
            if s.get("picked"):
                ids.append(f"{s['id']}/{e}")
                parents.append(s["id"])
                labels.append(esc(e))
                hover.append(esc(f"{e}: {'included' if e in included else 'not included'}"))
                colors.append(HIT if e in included else GREY)
    fig = go.Figure(go.Sunburst(ids=ids, parents=parents, labels=labels, hovertext=hover, maxdepth=3,
                                hovertemplate="%{hovertext}<extra></extra>", marker={"colors": colors}))
    return style(fig, "Retrieval path: themes → semantics → episodes (grey = not picked)", height=460)


def path_figure(structure: dict[str, Any], texts: Mapping[str, str] | None = None) -> go.Figure:
    """The retrieval path as a drill-down icicle (memcore.viz.hierarchy): every label on screen readable."""
    nodes, path = path_nodes(structure, texts)
    return drill_figure(nodes, "Retrieval path: themes → facts → episodes (colour = on the path, grey = not)",
                        highlight=path, root_label="question", height=520)


def stage_one_tables(structure: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stage I picks: candidate themes and semantics with score, relevance, gain and pick order."""
    tcols = ["pick_order", "id", "label", "score", "relevance", "gain", "coverage", "size", "picked"]
    scols = ["pick_order", "id", "theme", "score", "relevance", "gain", "picked", "episodes"]
    th = pd.DataFrame(structure.get("themes") or [], columns=tcols)
    se = pd.DataFrame([{**s, "episodes": ", ".join(s.get("episodes") or [])} for s in structure.get("semantics") or []],
                      columns=scols)
    for df in (th, se):  # a candidate passed over has no pick order: "-" on the page, with why
        explain_empty(df, {"pick_order": "The order in which Stage I picked it; '-': not picked (a candidate "
                                          "passed over)."})
    return th, se


def stage_two_table(structure: dict[str, Any]) -> pd.DataFrame:
    """Stage II: each candidate episode's priority, uncertainty before/after, gain and decision."""
    cols = ["id", "title", "priority", "parent", "H_before", "H_after", "gain", "decision", "stop"]
    return pd.DataFrame(structure.get("episodes") or [], columns=cols)


def stage_two_figure(structure: dict[str, Any], include_gain: float | None = None,
                     message_gain: float | None = None) -> go.Figure:
    """Stage II gains per probed episode (bars coloured by decision) with the inclusion thresholds the run used
    (the trace's `thresholds`); `include_gain` / `message_gain` only for a trace without them (older runs),
    drawn as the configuration's and said so in the title."""
    recorded = structure.get("thresholds") or {}
    if recorded:
        include_gain, message_gain = recorded.get("include_gain"), recorded.get("message_gain")
    eps = [e for e in structure.get("episodes") or [] if e.get("gain") is not None]
    color = {"include": HIT, "include+messages": "#0072B2", "skip": MISS}
    fig = go.Figure(go.Bar(
        x=[esc(e["id"]) for e in eps], y=[e["gain"] for e in eps],
        marker_color=[color.get(e.get("decision"), GREY) for e in eps],
        hovertext=[esc(f"{e['id']} {shorten(e.get('title', ''), 60)}: {e.get('decision')} "
                       f"(H {e.get('H_before')} → {e.get('H_after')})") for e in eps],
        hovertemplate="%{hovertext}<br>gain %{y:.3f}<extra></extra>", name="gain"))
    for thr, name in ((include_gain, "include"), (message_gain, "add messages")):
        if thr is not None:
            fig.add_hline(y=thr, line_dash="dot", annotation_text=f"{name} ≥ {thr}", line_color="#555555")
    fig.update_yaxes(title="uncertainty gain")
    fig.update_xaxes(title="episodes in probe order")
    source = "" if recorded else " · thresholds: configuration defaults (this trace did not record the run's)"
    return style(fig, f"Stage II: uncertainty-gated inclusion (H0 = {structure.get('H0')}){source}", height=340)


def xmemory_structure(trace: Trace, texts: Mapping[str, str]) -> list[Block]:
    """xMemory's retrieval on Ask and in the export: the path, Stage I picks, Stage II gains."""
    s = trace.structure
    if not s.get("themes"):
        return [Part("xMemory retrieval path", Text("xMemory had no themes to search for this question.", "info"))]
    th, se = stage_one_tables(s)
    cfg = XMemoryConfig()
    stop = s.get("stop") or {}
    out: list[Block] = [
        Part("xMemory retrieval path", path_figure(s, {it.id: it.text for it in trace.items}), key="path",
             caption="Stage I picks themes, then semantic facts inside them (greedy relevance + coverage on kNN "
                     "graphs); Stage II adds episodes only when they lower the reader's uncertainty. In colour: the "
                     "path (picked themes and facts, included episodes); grey: candidates passed over. Click a "
                     "theme or fact to drill into it; the bar above climbs back."),
        Part("", Text("Stopped: " + "; ".join(f"{k}: {v}" for k, v in stop.items()))),
        Row(Part("Stage I · themes", th, label="**Stage I · themes**", height=220),
            Part("Stage I · semantics", se, label="**Stage I · semantics**", height=220)),
        Part("Stage II", stage_two_figure(s, cfg.include_gain, cfg.message_gain),
             key="s2"),
        Part("Stage II episodes", stage_two_table(s), height=220)]
    if s.get("uncertainty"):
        out.append(Part("", Text(f"Uncertainty measured by: {s['uncertainty']}")))
    return out


def _name(it: Any) -> str:
    m = it.metadata
    return plain(m.get("label") or m.get("title") or it.text)


def xmemory_levels(items_at: ItemsAt, step: int) -> list[HNode]:
    """xMemory's memory at a step as a hierarchy: themes -> their semantic facts -> the episodes each fact came
    from (by day and title) -> the turns of the episode."""
    themes, sems, eps = (items_at(k, step) for k in ("theme", "semantic", "episode"))
    ep_by = {e.id: e for e in eps}
    tids = {t.id for t in themes}
    out = [HNode(t.id, "", "theme", _name(t), t.text, "theme") for t in themes]
    seen: set[str] = set()
    for s in sems:
        th = str(s.metadata.get("theme", ""))
        if th not in tids:
            continue
        out.append(HNode(s.id, th, "fact", _name(s), plain(s.text), "semantic"))
        for src in s.sources:
            ep = ep_by.get(src)
            if ep is None:
                continue
            m = ep.metadata
            when = m.get("episode_time") or m.get("date")
            title = m.get("title") or shorten(ep.text, 60)
            out.append(HNode(ep.id, s.id, "episode", (f"{day_of(str(when))} · " if when else "") + str(title),
                             ep.text, "episode"))
            if ep.id not in seen:  # an episode's turns once, whichever fact lists it
                seen.add(ep.id)
                out += [HNode(tid, ep.id, "turn", tid, "", "turn") for tid in ep.turn_ids]
    return out


def path_nodes(structure: dict[str, Any], texts: Mapping[str, str] | None = None) -> tuple[list[HNode], set[str]]:
    """One retrieval's path as a hierarchy: candidate themes -> their candidate facts -> a picked fact's episodes;
    and the ids picked or included (the path). `texts` names facts by id when the trace (an older one) stored no
    fact text."""
    texts = texts or {}
    themes = structure.get("themes") or []
    tids = {t["id"] for t in themes}
    included = {e["id"] for e in structure.get("episodes") or [] if str(e.get("decision", "")).startswith("include")}
    titles = {e["id"]: e.get("title") or "" for e in structure.get("episodes") or []}
    out, path = [], set()
    for t in themes:
        pick = f"picked #{t.get('pick_order')}" if t.get("picked") else "not picked"
        out.append(HNode(t["id"], "", "theme", f"{t.get('label') or t['id']} ({pick})",
                         f"score {t.get('score')} · gain {t.get('gain')} · {pick}", "theme"))
        if t.get("picked"):
            path.add(t["id"])
    for s in structure.get("semantics") or []:
        if s.get("theme") not in tids:
            continue
        pick = f"picked #{s.get('pick_order')}" if s.get("picked") else "not picked"
        name = plain(s.get("text") or texts.get(s["id"]) or s["id"])
        out.append(HNode(s["id"], s["theme"], "fact", f"{name} ({pick})",
                         f"score {s.get('score')} · {pick}", "semantic"))
        if s.get("picked"):
            path.add(s["id"])
            for e in s.get("episodes") or []:
                state = "included" if e in included else "not included"
                out.append(HNode(e, s["id"], "episode", f"{titles.get(e) or e} ({state})", f"{e}: {state}", "episode"))
                if e in included:
                    path.add(e)
    return out, path


def xmemory_growth(rd: ReplayData, step: int, items_at: ItemsAt) -> list[Block]:
    """What was split, merged or moved at a step (the hierarchy itself is drawn by the page from `xmemory_levels`:
    a navigable drill-down with search and each theme's history)."""
    if not items_at("theme", step):
        return [Part("xMemory hierarchy", Text("No theme yet at this step (themes appear once episodes close and "
                                               "yield semantic facts)."))]
    ev = rd.events_at(step)
    restructured = ev[ev["event"].isin(["split", "merged", "moved"])]
    if len(restructured):
        return [Part("Restructured at this step", restructured[["event", "items", "reason"]])]
    return []


register_view(SystemView("xmemory", color="#CC79A7", rank=70, structure=xmemory_structure, growth=xmemory_growth,
                         growth_rank=1, picks=frozenset({ASK, REPLAY}), levels=xmemory_levels))
