"""The `live_calls` table: one row per tool call on a live conversation (remember, recall, answer, status),
with its latency, outcome and, for recall and answer, the trace (and answer) and the LLM calls behind it. The
Live page draws it; a trace id of a recall or answer is its row's id."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa

from memcore.store import LanceStore
from memcore.store.schema import match

LIVE_CALLS = "live_calls"
SCHEMA = pa.schema([
    pa.field("id", pa.string()), pa.field("conv_id", pa.string()), pa.field("tool", pa.string()),
    pa.field("system", pa.string()), pa.field("ts", pa.float64()), pa.field("ms", pa.float64()),
    pa.field("ok", pa.bool_()), pa.field("error", pa.string()), pa.field("step", pa.int64()),
    pa.field("request", pa.string()), pa.field("result", pa.string()), pa.field("calls", pa.string()),
    pa.field("client", pa.string()),
])


@dataclass
class ToolCall:
    """One tool call on a live conversation, as stored (request, result and calls are JSON-able)."""

    conv_id: str
    tool: str
    system: str = ""
    ms: float = 0.0
    ok: bool = True
    error: str = ""
    step: int = 0  # turns in the conversation when the call ended
    request: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)  # ledger records (CallRecord.to_dict)
    client: str = ""  # who called: "mcp", "follow", "chat"
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    ts: float = field(default_factory=time.time)

    def row(self) -> dict[str, Any]:
        """The stored row."""
        return {"id": self.id, "conv_id": self.conv_id, "tool": self.tool, "system": self.system, "ts": self.ts,
                "ms": float(self.ms), "ok": self.ok, "error": self.error, "step": int(self.step),
                "request": json.dumps(self.request, default=str), "result": json.dumps(self.result, default=str),
                "calls": json.dumps(self.calls, default=str), "client": self.client}


def log_calls(store: LanceStore, calls: list[ToolCall]) -> None:
    """Append tool calls to the store's `live_calls` table."""
    if calls:
        store.table(LIVE_CALLS, SCHEMA).add([c.row() for c in calls])


def read_calls(store: LanceStore, conv_id: str, since: float = 0.0) -> pd.DataFrame:
    """A conversation's tool calls (ended after `since`, a Unix time), oldest first; request, result and calls
    parsed back from JSON. Empty (with the columns) before any."""
    if LIVE_CALLS not in store.table_names():
        return pd.DataFrame(columns=SCHEMA.names)
    t = store.table(LIVE_CALLS, SCHEMA)
    t.checkout_latest()
    df = t.search().where(match(conv_id=conv_id, ts__gt=float(since))).limit(None).to_pandas()
    for col in ("request", "result", "calls"):
        df[col] = [json.loads(v) for v in df[col]]
    return df.sort_values("ts", ignore_index=True)


def live_conv_ids(store: LanceStore) -> list[str]:
    """Conversations written live (a row in the tool-call log), newest activity first."""
    if LIVE_CALLS not in store.table_names():
        return []
    t = store.table(LIVE_CALLS, SCHEMA)
    t.checkout_latest()
    df = t.search().select(["conv_id", "ts"]).limit(None).to_pandas()
    return list(df.sort_values("ts", ascending=False)["conv_id"].drop_duplicates()) if len(df) else []


def find_call(store: LanceStore, call_id: str) -> dict[str, Any] | None:
    """One stored tool call by id (a trace id), parsed, or None."""
    if LIVE_CALLS not in store.table_names():
        return None
    t = store.table(LIVE_CALLS, SCHEMA)
    t.checkout_latest()
    df = t.search().where(match(id=call_id)).limit(1).to_pandas()
    if df.empty:
        return None
    row = df.iloc[0].to_dict()
    for col in ("request", "result", "calls"):
        row[col] = json.loads(row[col])
    return row
