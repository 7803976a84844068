"""Ask / Compare views: context with gold evidence marked, the missed-evidence table, cost by stage.

Plain data in: the caller hands in what eval worked out (memcore.eval.diagnostics: `evidence_hits(trace,
evidence)` for the gold turns and where each sits, `locate_missed_evidence` for the missed ones); the rows of the
comparison table and the export are eval's (memcore.eval.answer_rows)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any, Protocol

import pandas as pd
import plotly.graph_objects as go

from memcore.types import Trace
from memcore.viz.safe import esc
from memcore.viz.theme import STAGE_COLORS, stage_color, style
from memcore.viz.views import system_color

STATUS_TEXT = {
    "dropped": "dropped by a stage",
    "not_in_pool": "never retrieved",
    "not_in_context": "kept but not in the final context",
}


class Hits(Protocol):
    """Where a context holds the gold evidence (memcore.eval.diagnostics.EvidenceHits): the gold turns in
    evidence order, and for each one in the context its first item (1-based context position, item id)."""

    gold: tuple[str, ...]
    first_item: Mapping[str, tuple[int, str]]


def context_table(trace: Trace, gold: Collection[str] = ()) -> pd.DataFrame:
    """The retrieved context in the order the reader got it (`position`), each item's rank by its score
    (`score rank`, 1 = highest: systems order context by time, chain or hierarchy, not always by score), with
    the `gold` evidence turns (evidence_hits(trace, evidence).gold) marked."""
    gold = set(gold)
    order = sorted(range(len(trace.items)), key=lambda i: -float(trace.items[i].score))
    rank = {i: r for r, i in enumerate(order, start=1)}
    rows = []
    for i, it in enumerate(trace.items):
        ev = [t for t in it.turn_ids if t in gold]
        rows.append({"position": i + 1, "score rank": rank[i], "evidence": "✔ " + ", ".join(ev) if ev else "",
                     "origin": it.origin, "kind": it.kind, "id": it.id, "score": round(float(it.score), 4),
                     "text": it.text, "turns": ", ".join(it.turn_ids[:12]) + (" …" if len(it.turn_ids) > 12 else "")})
    return pd.DataFrame(rows, columns=CONTEXT_COLUMNS)


CONTEXT_COLUMNS = ["position", "score rank", "evidence", "origin", "kind", "id", "score", "text", "turns"]


def evidence_table(hits: Hits, texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per gold evidence turn (`hits`: evidence_hits(trace, evidence)): hit or miss, and the first context
    item that holds it."""
    rows = []
    for tid in hits.gold:
        pos = hits.first_item.get(tid)
        rows.append({"turn": tid, "result": "hit" if pos else "miss",
                     "context position": str(pos[0]) if pos else "", "in item": pos[1] if pos else "",
                     "text": (texts or {}).get(tid, "")})
    return pd.DataFrame(rows, columns=["turn", "result", "context position", "in item", "text"])


def missed_table(missed: Sequence[Mapping[str, Any]], texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Why each missed gold evidence turn (`missed`: locate_missed_evidence(trace, evidence)) was lost: stage that
    dropped it, its rank and score, the reason."""
    rows = []
    for m in missed:
        rows.append({"turn": m["turn_id"], "where lost": STATUS_TEXT.get(m["status"], m["status"]),
                     "stage": m["stage"] or "", "rank": m["rank"],
                     "score": None if m["score"] is None else round(float(m["score"]), 4),
                     "candidate": m["candidate_id"] or "", "reason": m["reason"] or "",
                     "text": (texts or {}).get(m["turn_id"], "")})
    return pd.DataFrame(rows, columns=["turn", "where lost", "stage", "rank", "score", "candidate", "reason", "text"])


def usage_dict(u: Any) -> dict[str, Any]:
    """A stage's usage (memcore.types.Usage or its dict) as a dict."""
    return asdict(u) if is_dataclass(u) else dict(u)


def usage_tokens(u: Any) -> int:
    """A stage's tokens: prompt plus completion."""
    d = usage_dict(u)
    return int(d.get("prompt_tokens", 0)) + int(d.get("completion_tokens", 0))


SIDEWAYS_FROM = 5  # systems from which bars lie sideways: names read level, the chart grows with the systems
BAR_ROW_PX = 28


def _by_system(systems: list[str], values: list, **bar: Any) -> go.Bar:
    """A bar trace with one bar per system: upright for a few systems, sideways (names on the y axis) for many."""
    names = [esc(s) for s in systems]
    if len(systems) >= SIDEWAYS_FROM:
        tmpl = bar.pop("hovertemplate", "").replace("%{y}", "%{VALUE}").replace("%{x}", "%{y}").replace("%{VALUE}",
                                                                                                         "%{x}")
        return go.Bar(y=names, x=values, orientation="h", hovertemplate=tmpl, **bar)
    return go.Bar(x=names, y=values, **bar)


def _fit(fig: go.Figure, n: int, axis_title: str, title: str, height: int) -> go.Figure:
    """Name the value axis and size the chart: sideways bars get a row each, top to bottom in the systems' order."""
    if n >= SIDEWAYS_FROM:
        fig.update_xaxes(title=axis_title)
        fig.update_yaxes(autorange="reversed", automargin=True)
        return style(fig, title, height=max(height, 110 + BAR_ROW_PX * n))
    fig.update_yaxes(title=axis_title)
    return style(fig, title, height=height)


def cost_bar(usage: Mapping[str, Mapping[str, Any]], title: str = "Tokens per question by stage") -> go.Figure:
    """Stacked bar: for each system, tokens per stage (retrieval, answer, ...). Usage or dict values.
    From SIDEWAYS_FROM systems on, the bars lie sideways so that every name reads level."""
    stages = [s for s in STAGE_COLORS if any(s in u for u in usage.values())]
    stages += sorted({s for u in usage.values() for s in u} - set(stages))
    systems = list(usage)
    fig = go.Figure()
    for stage in stages:
        ys = [usage_tokens(usage[s][stage]) if stage in usage[s] else 0 for s in systems]
        calls = [usage_dict(usage[s][stage]).get("calls", 0) if stage in usage[s] else 0 for s in systems]
        fig.add_trace(_by_system(systems, ys, name=stage, marker_color=stage_color(stage), customdata=calls,
                                 hovertemplate=f"{stage}: %{{y}} tokens, %{{customdata}} calls<extra></extra>"))
    fig.update_layout(barmode="stack")
    return _fit(fig, len(systems), "tokens", title, 320)


def verdict_text(verdict: Mapping[str, Any] | None) -> str:
    """'correct' / 'incorrect' / 'not judged' of a verdict ({"correct": bool | None, ...}); '' without one."""
    if verdict is None:
        return ""
    ok = verdict.get("correct")
    return "not judged" if ok is None else ("correct" if ok else "incorrect")


def compare_bar(rows: list[dict[str, Any]], metric: str = "context tokens") -> go.Figure:
    """One bar per system for a comparison metric, in system colours (sideways from SIDEWAYS_FROM systems)."""
    fig = go.Figure(_by_system([r["system"] for r in rows], [r.get(metric) or 0 for r in rows],
                               marker_color=[system_color(r["system"]) for r in rows],
                               hovertemplate=f"%{{x}}: %{{y}} {metric}<extra></extra>"))
    return _fit(fig, len(rows), metric, metric.capitalize(), 300)
