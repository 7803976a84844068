"""Replay: per-step aggregates computed once from stored events, item versions and LLM calls.

`build_replay` turns what the store holds for one (memory space, conversation) into a
`ReplayData` that the Replay page slices by step without touching the store again.
`replay_payload` / `replay_from_payload` turn its per-step counts into plain JSON data and back (the store caches a
finished memory's: memcore.store.replay_steps): a ReplayData rebuilt from them reads its events from an
`EventSource` only when they are used, a step's alone while the whole stream is not loaded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pyarrow.compute as pc

from memcore.llm.roles import get_role
from memcore.types import Event
from memcore.viz.safe import esc
from memcore.viz.theme import event_color, legend_below, style
from memcore.viz.views import system_color

EVENT_COLUMNS = ["step", "system", "event", "item_kind", "items", "turn_id", "reason", "data"]


class EventSource(Protocol):
    """Where a ReplayData built from cached counts reads its events (each as an `events_frame`)."""

    def all(self) -> pd.DataFrame:
        """Every event of the memory, in order."""
        ...

    def at(self, step: int) -> pd.DataFrame:
        """The events of one step, in order."""
        ...


STEP_READS = 64  # steps whose events a ReplayData keeps while its whole event stream is not loaded


@dataclass
class ReplayData:
    """Everything the Replay page draws for one system and conversation, indexed by step.

    Built with `events=None` and a `source`, the events are read from it on first use of `events` (once, under a
    lock: a warm-up thread may load them while a page reads a step), and `events_at` reads a step's alone until then.
    """

    system: str
    n_steps: int
    counts: pd.DataFrame  # index step 0..n_steps, one column per memory kind
    events: pd.DataFrame  # EVENT_COLUMNS, in order (None with a `source`: read on first use)
    event_counts: pd.DataFrame  # index step, one column per event kind
    cost: pd.DataFrame  # index step: tokens, calls (cumulative construction usage)
    cost_exact: bool = True
    notes: list[str] = field(default_factory=list)
    source: EventSource | None = field(default=None, repr=False, compare=False)
    n_events: int = -1  # len(events), known without reading them
    call_rows: pd.Series | None = None  # index step: the construction calls' ledger rows of each step (not summed)

    def calls_at(self, step: int) -> int:
        """The number of construction calls' ledger rows of one step (cache hits too), without reading them."""
        if self.call_rows is None or not 0 <= step < len(self.call_rows):
            return 0
        return int(self.call_rows.iloc[step])

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[int, pd.DataFrame] = {}
        if self.events is not None:
            self.n_events = len(self.events)
        elif self.source is None:
            raise ValueError("ReplayData needs its events or a source to read them from")
        else:
            del self.events  # read on first use (__getattr__)

    def __getattr__(self, name: str) -> Any:
        source = self.__dict__.get("source")
        if name != "events" or source is None:
            raise AttributeError(name)
        with self.__dict__["_lock"]:
            if "events" not in self.__dict__:
                self.__dict__["events"] = source.all()
        return self.__dict__["events"]

    @property
    def events_loaded(self) -> bool:
        """Whether the whole event stream is in memory (else `events` reads it from the source)."""
        return "events" in self.__dict__

    def events_at(self, step: int) -> pd.DataFrame:
        """Events caused at one step, in stream order (a binary search in a step index built once, not a scan of
        every event: Replay slices five memories' events at every step)."""
        if not self.events_loaded:  # shared by sessions: another may clear the kept steps meanwhile
            got = self._steps.get(step)
            if got is None:
                got = self.source.at(step)
                self.keep_step(step, got)
            return got
        events = self.events
        index = self.__dict__.get("_by_step")
        if index is None or index[0] is not events:  # built once per event stream: a step is then two binary searches
            order = np.argsort(events["step"].to_numpy(dtype=np.int64), kind="stable")  # stable: rows keep their order
            index = (events, events["step"].to_numpy(dtype=np.int64)[order], order)
            self.__dict__["_by_step"] = index
        _, steps, order = index
        lo, hi = np.searchsorted(steps, step, side="left"), np.searchsorted(steps, step, side="right")
        return events.iloc[order[lo:hi]]

    def needs_step(self, step: int) -> bool:
        """Whether `events_at(step)` would read the source (the events are not loaded, nor this step's)."""
        return not self.events_loaded and step not in self._steps

    def keep_step(self, step: int, frame: pd.DataFrame) -> None:
        """Hold one step's events (as `source.at(step)` gives them) read by a caller for several memories at once."""
        if len(self._steps) >= STEP_READS:
            self._steps.clear()
        self._steps[step] = frame

    def changed_at(self, step: int) -> set[str]:
        """Ids of the items events touched at one step."""
        return {i.strip() for s in self.events_at(step)["items"] for i in s.split(",") if i.strip()}


OFFLINE_MARK = "offline engine"  # stores written before the label moved to rendering hold it in the event text


def event_reason(e: Event, offline: bool) -> str:
    """An event's reason as shown: for a memory built by the offline engine, an event decided by an LLM role
    (its data names the `role`) ends with how the offline rule decided instead ("(offline engine: similarity
    threshold instead of judgement)", the role's `offline_note`). Stored event text is the same for every
    provider; older stores already carry the label in the text and are shown as stored."""
    role = e.data.get("role") if isinstance(e.data, dict) else None
    if not offline or not role or OFFLINE_MARK in e.reason:
        return e.reason
    try:
        note = get_role(str(role)).offline_note or "rule-based"
    except KeyError:  # a role this installation does not know (a plugin's, uninstalled)
        note = "rule-based"
    return f"{e.reason} ({OFFLINE_MARK}: {note})"


def events_frame(events: Sequence[Event], offline: bool = False) -> pd.DataFrame:
    """Events as a table (text columns are plain strings, never HTML); `offline`: the memory was built by the
    offline engine (its decisions are labelled, `event_reason`)."""
    rows = [{"step": e.step, "system": e.system, "event": e.kind, "item_kind": e.item_kind,
             "items": ", ".join(e.item_ids), "turn_id": e.turn_id, "reason": event_reason(e, offline),
             "data": json.dumps(e.data, ensure_ascii=False, default=str)[:2000]} for e in events]
    return pd.DataFrame(rows, columns=EVENT_COLUMNS)


def events_frame_of_table(tb: Any, offline: bool = False) -> pd.DataFrame:
    """`events_frame` of the stored event rows (memcore.store.records.events_table, a pyarrow Table, or None)
    without building an Event per row: the same frame, column by column in Arrow (each row's data is its stored
    JSON text cut to 2,000 characters, which is what json.dumps gives again; only rows stored ASCII-escaped are
    re-encoded, and an event's data is parsed only where its reason may need the offline role's note). A 10M
    chat's 126k events: ~1.8 CPU s as Event objects, 0.45-0.85 as Python lists, 0.13-0.27 in Arrow."""
    if tb is None or not tb.num_rows:  # typed as a slice of a stored stream (a step without events)
        return pd.DataFrame({c: pd.Series([], dtype="int64" if c == "step" else "str") for c in EVENT_COLUMNS})
    data = pc.fill_null(tb.column("data"), "")
    data = pc.if_else(pc.equal(data, ""), "{}", data)
    reasons = tb.column("reason")
    frame = pa.table({"step": pc.cast(tb.column("step"), pa.int64()), "system": tb.column("system"),
                      "event": tb.column("kind"), "item_kind": tb.column("item_kind"),
                      "items": pc.fill_null(pc.binary_join(tb.column("item_ids"), ", "), ""),
                      "turn_id": tb.column("turn_id"), "reason": reasons,
                      "data": pc.utf8_slice_codeunits(data, 0, 2000)}).to_pandas()  # code points, as str[:2000]
    escaped = _rows(pc.match_substring(data, "\\u"))  # written ASCII-escaped (or holding an escape)
    if len(escaped):
        frame.loc[escaped, "data"] = [_data_text(d) for d in data.take(pa.array(escaped)).to_pylist()]
    if offline:  # a reason the offline role's note may be added to (event_reason)
        noted = _rows(pc.and_(pc.match_substring(data, '"role"'), pc.invert(pc.match_substring(reasons, OFFLINE_MARK))))
        if len(noted):
            pairs = zip(reasons.take(pa.array(noted)).to_pylist(), data.take(pa.array(noted)).to_pylist(), strict=True)
            frame.loc[noted, "reason"] = [
                event_reason(Event(step=0, kind="", item_ids=[], reason=r, data=json.loads(d)), offline)
                for r, d in pairs]
    return frame[EVENT_COLUMNS]


def _rows(mask: Any) -> np.ndarray:
    """Row positions where a boolean Arrow array is true."""
    return np.flatnonzero(pc.fill_null(mask, False).to_numpy(zero_copy_only=False))


def _data_text(stored: str | None) -> str:
    if not stored:
        return "{}"
    if "\\u" in stored:  # written ASCII-escaped (or holding an escape): as events_frame writes it
        return json.dumps(json.loads(stored), ensure_ascii=False, default=str)[:2000]
    return stored[:2000]


def counts_by_step(versions: pd.DataFrame, n_steps: int) -> pd.DataFrame:
    """Items alive at each step per kind, from version rows (kind, valid_from, valid_to)."""
    idx = pd.RangeIndex(0, n_steps + 1, name="step")
    if versions is None or versions.empty:
        return pd.DataFrame(index=idx)
    out = {}
    for kind, g in versions.groupby("kind"):
        delta = np.zeros(n_steps + 2, dtype=np.int64)
        vf = np.clip(g["valid_from"].to_numpy(dtype=np.int64), 0, n_steps + 1)
        vt = np.clip(g["valid_to"].to_numpy(dtype=np.int64), 0, n_steps + 1)
        np.add.at(delta, vf, 1)
        np.add.at(delta, vt, -1)
        out[kind] = np.cumsum(delta)[: n_steps + 1]
    return pd.DataFrame(out, index=idx)


def calls_by_step(calls: pd.DataFrame, n_steps: int) -> tuple[pd.DataFrame, bool]:
    """Cumulative construction tokens and calls per step, and whether the step mapping is exact.

    Uses the ledger's `step` column (recorded for construction calls); stores written before
    it existed fall back to spreading the calls evenly over the steps in time order.
    """
    idx = pd.RangeIndex(0, n_steps + 1, name="step")
    if calls is None or calls.empty:
        return pd.DataFrame({"tokens": 0, "calls": 0}, index=idx), True
    c = calls.sort_values("ts")
    tokens = (c["prompt_tokens"] + c["completion_tokens"]).to_numpy()
    n_calls = (~c["cache_hit"].astype(bool)).astype(int).to_numpy()
    exact = True
    if "step" in c.columns and c["step"].notna().all() and (c["step"] > 0).any():
        steps = c["step"].astype(int).to_numpy()
    else:
        exact = False
        steps = np.ceil((np.arange(len(c)) + 1) * n_steps / len(c)).astype(int)
    per = pd.DataFrame({"step": np.clip(steps, 0, n_steps), "tokens": tokens, "calls": n_calls})
    per = per.groupby("step").sum().reindex(idx, fill_value=0)
    return per.cumsum(), exact


def build_replay(system: str, events: Sequence[Event] | pd.DataFrame, versions: pd.DataFrame, calls: pd.DataFrame,
                 n_steps: int, offline: bool = False) -> ReplayData:
    """All per-step aggregates for one system's ingest of one conversation (`offline`: built by the offline
    engine, whose decisions the event reasons label); `events` the stored events, or their `events_frame`."""
    ev = events if isinstance(events, pd.DataFrame) else events_frame(events, offline)
    idx = pd.RangeIndex(0, n_steps + 1, name="step")
    ec = (ev.groupby(["step", "event"]).size().unstack(fill_value=0).reindex(idx, fill_value=0)
          if not ev.empty else pd.DataFrame(index=idx))
    cost, exact = calls_by_step(calls, n_steps)
    notes = [] if exact else ["token and call curves are approximate: this store's usage ledger predates "
                              "per-call steps, so calls are spread evenly over the steps in time order"]
    return ReplayData(system, n_steps, counts_by_step(versions, n_steps), ev, ec, cost, exact, notes,
                      call_rows=call_rows_by_step(calls, n_steps))


def call_rows_by_step(calls: pd.DataFrame | None, n_steps: int) -> pd.Series:
    """The ledger rows (calls, cache hits too) recorded at each step 0..n_steps (rows without a step count at none)."""
    idx = pd.RangeIndex(0, n_steps + 1, name="step")
    if calls is None or calls.empty or "step" not in calls.columns:
        return pd.Series(0, index=idx, dtype=np.int64)
    steps = pd.to_numeric(calls["step"], errors="coerce").dropna().to_numpy()
    steps = steps[(steps >= 0) & (steps <= n_steps) & (steps == np.floor(steps))].astype(np.int64)
    return pd.Series(np.bincount(steps, minlength=n_steps + 1)[: n_steps + 1], index=idx, dtype=np.int64)


def _frame_data(df: pd.DataFrame) -> dict:
    return {"columns": [str(c) for c in df.columns], "name": df.columns.name,
            "dtypes": [str(t) for t in df.dtypes], "data": [df[c].tolist() for c in df.columns]}


def _frame_of(d: dict, n_steps: int) -> pd.DataFrame:
    idx = pd.RangeIndex(0, n_steps + 1, name="step")
    if not d["columns"]:
        return pd.DataFrame(index=idx)
    df = pd.DataFrame({c: np.asarray(v, dtype=t) for c, t, v in zip(d["columns"], d["dtypes"], d["data"], strict=True)},
                      index=idx, columns=d["columns"])
    df.columns.name = d["name"]
    return df


def replay_payload(rd: ReplayData) -> dict:
    """A ReplayData's per-step counts as plain JSON data (no event): what `replay_from_payload` rebuilds it from."""
    return {"n_steps": rd.n_steps, "n_events": rd.n_events, "cost_exact": rd.cost_exact, "notes": list(rd.notes),
            "counts": _frame_data(rd.counts), "event_counts": _frame_data(rd.event_counts),
            "cost": _frame_data(rd.cost),
            "call_rows": None if rd.call_rows is None else [int(v) for v in rd.call_rows]}


def replay_from_payload(system: str, payload: dict, source: EventSource) -> ReplayData:
    """The ReplayData of `replay_payload`'s data, its events read from `source` when used (equal to the one it was
    made from: tests/viz/test_replay_payload.py)."""
    n = int(payload["n_steps"])
    return ReplayData(system, n, _frame_of(payload["counts"], n), None, _frame_of(payload["event_counts"], n),
                      _frame_of(payload["cost"], n), bool(payload["cost_exact"]), list(payload["notes"]),
                      source=source, n_events=int(payload["n_events"]),
                      call_rows=None if payload.get("call_rows") is None else
                      pd.Series(np.asarray(payload["call_rows"], dtype=np.int64),
                                index=pd.RangeIndex(0, n + 1, name="step")))


def _step_line(fig: go.Figure, step: int | None) -> None:
    if step is not None:
        fig.add_vline(x=step, line_width=2, line_dash="dash", line_color="#333333")


def layer_counts_figure(data: dict[str, ReplayData] | ReplayData, step: int | None = None) -> go.Figure:
    """Items per memory kind over the steps: one colour per system, one dash style per kind."""
    data = {data.system: data} if isinstance(data, ReplayData) else data
    fig = go.Figure()
    dashes = ["solid", "dash", "dot", "dashdot", "longdash"]
    for sysname, rd in data.items():
        for i, kind in enumerate(rd.counts.columns):
            fig.add_trace(go.Scatter(
                x=rd.counts.index, y=rd.counts[kind], mode="lines", name=f"{sysname} · {kind}",
                line={"color": system_color(sysname), "width": 3, "dash": dashes[i % len(dashes)]},
                hovertemplate=f"{esc(sysname)} {esc(kind)}: %{{y}} at step %{{x}}<extra></extra>"))
        if rd.counts.columns.empty:
            # named in the legend, not drawn: a flat line at 0 hid the other kinds while they were still 0
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"{sysname} · (turn index only: no items)",
                                     line={"color": system_color(sysname), "width": 2, "dash": "dot"}))
    _step_line(fig, step)
    fig.update_xaxes(title="step (turn)")
    fig.update_yaxes(title="items in memory", rangemode="tozero")
    return legend_below(style(fig, "Memory layers over time"))


def cumulative_cost_figure(data: dict[str, ReplayData], step: int | None = None,
                           metric: str = "tokens") -> go.Figure:
    """Cumulative construction tokens (or LLM calls) per system over the steps."""
    fig = go.Figure()
    for sysname, rd in data.items():
        fig.add_trace(go.Scatter(
            x=rd.cost.index, y=rd.cost[metric], mode="lines", name=sysname + ("" if rd.cost_exact else " (approx.)"),
            line={"color": system_color(sysname), "width": 3},
            hovertemplate=f"{esc(sysname)}: %{{y}} {metric} by step %{{x}}<extra></extra>"))
    _step_line(fig, step)
    fig.update_xaxes(title="step (turn)")
    fig.update_yaxes(title=f"construction {'tokens' if metric == 'tokens' else 'LLM calls'}", rangemode="tozero")
    return legend_below(style(fig, "Construction cost so far", height=320))


def event_strip_figure(data: dict[str, ReplayData], step: int | None = None) -> go.Figure:
    """Event counts per step: one row per system (named in its colour), bars stacked by event kind."""
    from plotly.subplots import make_subplots

    names = list(data) or ["(none)"]
    fig = make_subplots(rows=len(names), cols=1, shared_xaxes=True, vertical_spacing=0.04)
    seen: set[str] = set()
    for row, sysname in enumerate(names, start=1):
        rd = data.get(sysname)
        if rd is None:
            continue
        for kind in rd.event_counts.columns:
            fig.add_trace(go.Bar(x=rd.event_counts.index, y=rd.event_counts[kind], name=kind, legendgroup=kind,
                                 showlegend=kind not in seen, marker_color=event_color(kind),
                                 hovertemplate=f"{esc(sysname)} {esc(kind)}: %{{y}} at step %{{x}}<extra></extra>"),
                          row=row, col=1)
            seen.add(kind)
        fig.update_yaxes(title={"text": esc(sysname), "font": {"color": system_color(sysname), "size": 14}},
                         row=row, col=1, rangemode="tozero")
        if step is not None:
            fig.add_vline(x=step, line_width=2, line_dash="dash", line_color="#333333", row=row, col=1)
    fig.update_layout(barmode="stack", bargap=0.1)
    fig.update_xaxes(title="step (turn)", row=len(names), col=1)
    return style(fig, "Events per step", height=90 + 110 * len(names))
