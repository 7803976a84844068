"""Ask / Compare views: context with gold evidence marked, the missed-evidence table, cost by stage."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.eval.diagnostics import evidence_hits, locate_missed_evidence
from memcore.eval.fallbacks import answer_fallbacks
from memcore.text.tokens import count_tokens
from memcore.types import Answer, Trace
from memcore.viz.safe import esc
from memcore.viz.theme import STAGE_COLORS, stage_color, style
from memcore.viz.views import system_color

FALLBACK_SHORT = {"full_conversation": "whole conversation", "backfill_only": "backfill only",
                  "unusable_reply": "unusable reply"}  # memcore.eval.fallbacks' kinds, as a table cell says them
NOT_RETRIEVED = {"full_conversation", "backfill_only"}  # fallbacks whose context the system did not retrieve
STATUS_TEXT = {
    "dropped": "dropped by a stage",
    "not_in_pool": "never retrieved",
    "not_in_context": "kept but not in the final context",
}


def context_table(trace: Trace, evidence: list[str] | str | None = None) -> pd.DataFrame:
    """The retrieved context in the order the reader got it (`position`), each item's rank by its score
    (`score rank`, 1 = highest: systems order context by time, chain or hierarchy, not always by score), with
    gold evidence turns marked."""
    gold = set(evidence_hits(trace, evidence).gold)
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


def evidence_table(trace: Trace, evidence: list[str] | str | None, texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per gold evidence turn: hit or miss, and the first context item that holds it."""
    rows = []
    hits = evidence_hits(trace, evidence)
    for tid in hits.gold:
        pos = hits.first_item.get(tid)
        rows.append({"turn": tid, "result": "hit" if pos else "miss",
                     "context position": str(pos[0]) if pos else "", "in item": pos[1] if pos else "",
                     "text": (texts or {}).get(tid, "")})
    return pd.DataFrame(rows, columns=["turn", "result", "context position", "in item", "text"])


def missed_table(trace: Trace, evidence: list[str] | str | None, texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Why each missed gold evidence turn was lost: stage that dropped it, its rank and score, the reason."""
    rows = []
    for m in locate_missed_evidence(trace, evidence):
        rows.append({"turn": m["turn_id"], "where lost": STATUS_TEXT.get(m["status"], m["status"]),
                     "stage": m["stage"] or "", "rank": m["rank"],
                     "score": None if m["score"] is None else round(float(m["score"]), 4),
                     "candidate": m["candidate_id"] or "", "reason": m["reason"] or "",
                     "text": (texts or {}).get(m["turn_id"], "")})
    return pd.DataFrame(rows, columns=["turn", "where lost", "stage", "rank", "score", "candidate", "reason", "text"])


def _usage_dict(u: Any) -> dict[str, Any]:
    return asdict(u) if is_dataclass(u) else dict(u)


def _tokens(u: Any) -> int:
    d = _usage_dict(u)
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
        ys = [_tokens(usage[s][stage]) if stage in usage[s] else 0 for s in systems]
        calls = [_usage_dict(usage[s][stage]).get("calls", 0) if stage in usage[s] else 0 for s in systems]
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


def answer_summary(system: str, answer: Answer, evidence: list[str] | str | None,
                   verdict: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One row of the comparison table: the retriever, the fallback behind the answer (memcore.eval.fallbacks;
    "none"), evidence hits (an answer from a fallback context, the whole conversation or backfill only, gets no
    evidence recall: its retrieval found nothing), then the verdict and F1 when given ({"correct", "f1"}: a dataset question's judgement), the answer, context size, tokens, latency."""
    tr = answer.trace
    hits = evidence_hits(tr, evidence)
    rec = hits.recall
    kinds = answer_fallbacks(tr)
    borrowed = bool(NOT_RETRIEVED & set(kinds))  # the context is not the system's retrieval: no recall credited
    count = f"{len(hits.hit)}/{len(hits.gold)}" if hits.gold else "n/a"
    row: dict[str, Any] = {"system": system, "retriever": tr.retriever,
                           "fallback": ", ".join(FALLBACK_SHORT[k] for k in kinds) or "none",
                           "evidence hits": f"{count} (fallback context)" if borrowed and hits.gold else count,
                           "evidence recall": None if rec is None or borrowed else round(rec, 3)}
    if verdict is not None:
        f1 = verdict.get("f1")
        row |= {"verdict": verdict_text(verdict), "F1": None if f1 is None else round(float(f1), 3)}
    return row | {"answer": answer.text, "context items": len(tr.items),
                  "context tokens": count_tokens(tr.context) if tr.context else 0,
                  "tokens": sum(_tokens(u) for u in answer.usage.values()),
                  "LLM calls": sum(_usage_dict(u).get("calls", 0) for u in answer.usage.values()),
                  "latency ms": round(answer.latency_ms, 1), "error": answer.error}


def export_row(system: str, answer: Answer, evidence: list[str] | str | None,
               verdict: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """answer_summary's row as exported, with what the page shows beside it: each gold evidence turn hit or
    missed (a miss with where it was lost), and the verdict's judge and its reason (or why it could not judge);
    `variant` is the answer's canonical variant name (its system for a plain one)."""
    row = answer_summary(system, answer, evidence, verdict)
    hits = evidence_hits(answer.trace, evidence)
    lost = {m["turn_id"]: STATUS_TEXT.get(m["status"], m["status"]) + (f" at {m['stage']}" if m["stage"] else "")
            for m in locate_missed_evidence(answer.trace, evidence)}
    head = {k: row.pop(k) for k in ("system", "retriever", "fallback", "evidence hits", "evidence recall")}
    head = {"system": head.pop("system"), "variant": answer.trace.variant, **head}  # the canonical variant answering
    head |= {"evidence hit": ", ".join(hits.hit),
             "evidence missed": "; ".join(f"{t} ({lost[t]})" for t in hits.gold if t in lost)}
    if verdict is not None:
        head |= {"verdict": row.pop("verdict"), "F1": row.pop("F1"), "judge": verdict.get("judge") or "",
                 "judge reason": verdict.get("error") or verdict.get("reason") or ""}
    return head | row


def compare_bar(rows: list[dict[str, Any]], metric: str = "context tokens") -> go.Figure:
    """One bar per system for a comparison metric, in system colours (sideways from SIDEWAYS_FROM systems)."""
    fig = go.Figure(_by_system([r["system"] for r in rows], [r.get(metric) or 0 for r in rows],
                               marker_color=[system_color(r["system"]) for r in rows],
                               hovertemplate=f"%{{x}}: %{{y}} {metric}<extra></extra>"))
    return _fit(fig, len(rows), metric, metric.capitalize(), 300)
