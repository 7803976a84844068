"""The call inspector's data: an answer's (or a replay step's) LLM calls as a table and a latency waterfall.

Input is any sequence of ledger records (memcore.llm.ledger.CallRecord objects, their `to_dict()`, or
rows of the store's llm_calls table). A record's `ts` is when the call ended, so a call ran from
`ts - latency_ms / 1000` to `ts`; the waterfall places each bar there, relative to the first start.
Cache hits took no time: they are drawn as a thin marker at their moment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.viz.safe import esc, shorten
from memcore.viz.theme import stage_color, style

COLUMNS = ["#", "role", "stage", "start ms", "latency ms", "prompt tokens", "completion tokens", "cache hit",
           "ok", "attempt", "format", "outcome", "step", "provider", "model", "error", "prompt", "completion"]
MIN_BAR_MS = 0.05  # a cache hit or an instant offline call still shows as a sliver
MIN_BAR_SHARE = 1 / 200  # ... and at least this share of the time axis: sub-ms calls seconds apart stay visible


def _record(r: Any) -> dict[str, Any]:
    if is_dataclass(r):
        return asdict(r)
    return dict(r) if isinstance(r, Mapping) else dict(r._asdict())


def calls_table(records: Iterable[Any]) -> pd.DataFrame:
    """One row per call in start order: role, stage, start offset and latency (ms), tokens, cache hit, ok,
    attempt, request format (the response_format sent: json_schema, json_object+schema, json_object, text),
    outcome (ok, empty, malformed, repaired, unusable, fallback, error), step, provider, model, error, and
    the prompt and completion texts. Rows stored before the format was recorded show "" for both."""
    rows = [_record(r) for r in records]
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    starts = [float(r.get("ts") or 0.0) - float(r.get("latency_ms") or 0.0) / 1000 for r in rows]
    t0 = min(starts)
    out = []
    for start, r in sorted(zip(starts, rows, strict=True), key=lambda sr: sr[0]):
        out.append({"role": r.get("role", ""), "stage": r.get("stage", ""),
                    "start ms": round((start - t0) * 1000, 2), "latency ms": round(float(r.get("latency_ms") or 0), 2),
                    "prompt tokens": int(r.get("prompt_tokens") or 0),
                    "completion tokens": int(r.get("completion_tokens") or 0),
                    "cache hit": bool(r.get("cache_hit")), "ok": bool(r.get("ok", True)),
                    "attempt": int(r.get("attempt") or 1), "format": r.get("request_format", "") or "",
                    "outcome": r.get("outcome", "") or "", "step": int(r.get("step") or 0),
                    "provider": r.get("provider", ""), "model": r.get("model", ""), "error": r.get("error", "") or "",
                    "prompt": r.get("prompt", "") or "", "completion": r.get("completion", "") or ""})
    df = pd.DataFrame(out, columns=COLUMNS[1:])
    df.insert(0, "#", range(1, len(df) + 1))
    return df


def call_label(row: Mapping[str, Any]) -> str:
    """'#n role (stage)' with the attempt and cache hit named: a call's name in pickers and on the y axis."""
    extra = (" · repair" if int(row.get("attempt", 1)) > 1 else "") + (" · cached" if row.get("cache hit") else "")
    extra += f" · {row['outcome']}" if row.get("outcome") not in (None, "", "ok") else ""
    return f"#{row['#']} {row['role']} ({row['stage']}{extra})"


def waterfall(table: pd.DataFrame, title: str = "LLM calls: latency waterfall") -> go.Figure:
    """Horizontal bars from each call's start to its end (ms since the first call), one row per call,
    coloured by stage; hover shows tokens, cache hit and the start of prompt and completion (escaped). A bar is
    at least 1/200 of the time axis wide, so the offline engine's sub-millisecond calls show."""
    fig = go.Figure()
    if table.empty:
        return style(fig, title + " (no LLM calls)", height=160)
    labels = [esc(call_label(r)) for r in table.to_dict("records")]
    span = float((table["start ms"] + table["latency ms"]).max())
    shortest = max(MIN_BAR_MS, span * MIN_BAR_SHARE)
    for stage in dict.fromkeys(table["stage"]):
        sub = table[table["stage"] == stage]
        idx = list(sub.index)
        hover = [f"{labels[i]}<br>start {r['start ms']:.2f} ms, latency {r['latency ms']:.2f} ms<br>"
                 f"tokens {r['prompt tokens']} in / {r['completion tokens']} out"
                 f"{'<br>format ' + esc(r['format']) if r['format'] else ''}"
                 f"{'<br>outcome ' + esc(r['outcome']) if r['outcome'] else ''}"
                 f"{'<br>cache hit' if r['cache hit'] else ''}{'' if r['ok'] else '<br>failed: ' + esc(r['error'])}"
                 f"<br>prompt: {esc(shorten(r['prompt'], 90))}<br>completion: {esc(shorten(r['completion'], 90))}"
                 for i, r in zip(idx, sub.to_dict("records"), strict=True)]
        fig.add_trace(go.Bar(
            y=[labels[i] for i in idx], x=[max(float(v), shortest) for v in sub["latency ms"]],
            base=list(sub["start ms"]), orientation="h", name=esc(stage), marker_color=stage_color(str(stage)),
            marker_line_color=["#B3261E" if not ok else "rgba(0,0,0,0)" for ok in sub["ok"]], marker_line_width=2,
            marker_pattern_shape=["/" if hit else "" for hit in sub["cache hit"]],
            hovertext=hover, hoverinfo="text"))
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], automargin=True)
    fig.update_xaxes(title="ms since the first call started (a gap between bars: time outside LLM calls, such as "
                           "retrieval and embedding)", rangemode="tozero")
    fig.update_layout(barmode="overlay", legend_title_text="stage")
    return style(fig, title, height=max(200, 90 + 26 * len(table)))


def calls_summary(table: pd.DataFrame) -> dict[str, Any]:
    """Totals of a calls table: calls, cache hits, failed, tokens in and out, summed latency and wall time (ms)."""
    if table.empty:
        return {"calls": 0, "cache hits": 0, "failed": 0, "prompt tokens": 0, "completion tokens": 0,
                "latency ms": 0.0, "wall ms": 0.0}
    return {"calls": len(table), "cache hits": int(table["cache hit"].sum()), "failed": int((~table["ok"]).sum()),
            "prompt tokens": int(table["prompt tokens"].sum()),
            "completion tokens": int(table["completion tokens"].sum()),
            "latency ms": round(float(table["latency ms"].sum()), 2),
            "wall ms": round(float((table["start ms"] + table["latency ms"]).max()), 2)}
