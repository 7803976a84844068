"""Arrow schemas of the store's tables (one per memory kind plus events, links, runs, ...) and SQL filters.

SQL is written here and in the other store modules only: code outside them says which rows it wants
with the store's typed queries (`store.llm_calls(system=..., stage=...)`, `store.results(run_id,
systems=...)`, `store.rows(table, **columns)`, ...) or, for a raw LanceDB table, with `match(...)`.
tests/test_import_graph_sql.py fails on SQL built anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

INF_STEP = 2**31 - 1  # valid_to of the current version of an item

# Columns some kinds carry on top of the common ones (filled from item.metadata).
KIND_EXTRA: dict[str, list[pa.Field]] = {
    "relation": [pa.field("src", pa.string()), pa.field("rel", pa.string()), pa.field("tgt", pa.string()),
                 pa.field("time", pa.string())],
    "semantic": [pa.field("fact_type", pa.string())],
    "unit": [pa.field("layer", pa.string())],
}


def memory_schema(kind: str, dim: int) -> pa.Schema:
    """Schema of the `mem_<kind>` table: versioned rows (valid_from <= step < valid_to)."""
    return pa.schema([
        pa.field("id", pa.string()),
        pa.field("space", pa.string()),
        pa.field("system", pa.string()),
        pa.field("conv_id", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("text", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
        pa.field("sources", pa.list_(pa.string())),
        pa.field("turn_ids", pa.list_(pa.string())),
        pa.field("created_step", pa.int32()),
        pa.field("valid_from", pa.int32()),
        pa.field("valid_to", pa.int32()),
        pa.field("timestamp", pa.string()),
        pa.field("metadata", pa.string()),
        *KIND_EXTRA.get(kind, []),
    ])


def turns_schema(dim: int) -> pa.Schema:
    """Raw turns of every loaded conversation, embedded once and shared by all systems."""
    return pa.schema([
        pa.field("uid", pa.string()),  # conv_id + "|" + turn_id
        pa.field("conv_id", pa.string()),
        pa.field("turn_id", pa.string()),
        pa.field("idx", pa.int32()),
        pa.field("session", pa.int32()),
        pa.field("session_date", pa.string()),
        pa.field("timestamp", pa.string()),
        pa.field("speaker", pa.string()),
        pa.field("text", pa.string()),  # content as searched: text plus photo caption
        pa.field("raw_text", pa.string()),
        pa.field("image_caption", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


SCHEMAS: dict[str, pa.Schema] = {
    "conversations": pa.schema([
        pa.field("conv_id", pa.string()), pa.field("source", pa.string()), pa.field("n_turns", pa.int32()),
        pa.field("n_questions", pa.int32()), pa.field("speakers", pa.string()), pa.field("payload", pa.string()),
    ]),
    "events": pa.schema([
        pa.field("space", pa.string()), pa.field("system", pa.string()), pa.field("conv_id", pa.string()),
        pa.field("step", pa.int32()), pa.field("seq", pa.int32()), pa.field("kind", pa.string()),
        pa.field("item_kind", pa.string()), pa.field("item_ids", pa.list_(pa.string())),
        pa.field("turn_id", pa.string()), pa.field("reason", pa.string()), pa.field("data", pa.string()),
    ]),
    "links": pa.schema([
        pa.field("space", pa.string()), pa.field("conv_id", pa.string()), pa.field("item_id", pa.string()),
        pa.field("source_id", pa.string()), pa.field("step", pa.int32()),
    ]),
    "checkpoints": pa.schema([
        pa.field("key", pa.string()), pa.field("space", pa.string()), pa.field("system", pa.string()),
        pa.field("conv_id", pa.string()), pa.field("step", pa.int32()), pa.field("done", pa.bool_()),
        pa.field("state", pa.string()), pa.field("config", pa.string()), pa.field("updated", pa.float64()),
    ]),
    "llm_calls": pa.schema([
        pa.field("role", pa.string()), pa.field("stage", pa.string()), pa.field("system", pa.string()),
        pa.field("conv_id", pa.string()), pa.field("provider", pa.string()), pa.field("model", pa.string()),
        pa.field("prompt_tokens", pa.int32()), pa.field("completion_tokens", pa.int32()),
        pa.field("latency_ms", pa.float64()), pa.field("cache_hit", pa.bool_()), pa.field("ok", pa.bool_()),
        pa.field("error", pa.string()), pa.field("step", pa.int32()), pa.field("ts", pa.float64()),
        pa.field("attempt", pa.int32()), pa.field("prompt", pa.string()), pa.field("completion", pa.string()),
        pa.field("request_format", pa.string()), pa.field("outcome", pa.string()), pa.field("variant", pa.string()),
    ]),
    "leases": pa.schema([  # memcore.store.lease: one row per held write lease of a remote store
        pa.field("key", pa.string()), pa.field("holder", pa.string()), pa.field("pid", pa.int64()),
        pa.field("host", pa.string()), pa.field("since", pa.float64()), pa.field("expires_at", pa.float64()),
    ]),
    "results": pa.schema([  # `system`: the row's result set, its canonical variant (a plain system's own name)
        pa.field("key", pa.string()), pa.field("run_id", pa.string()), pa.field("system", pa.string()),
        pa.field("conv_id", pa.string()), pa.field("question_id", pa.string()), pa.field("payload", pa.string()),
        pa.field("ts", pa.float64()),
    ]),
    "projections": pa.schema([  # memcore.store.projections: a memory's cached embedding map, per method
        pa.field("key", pa.string()), pa.field("space", pa.string()), pa.field("conv_id", pa.string()),
        pa.field("method", pa.string()), pa.field("step", pa.int32()), pa.field("version", pa.string()),
        pa.field("payload", pa.string()), pa.field("ts", pa.float64()),
    ]),
    "replay_steps": pa.schema([  # memcore.store.replay_steps: a finished memory's cached per-step counts (Replay)
        pa.field("key", pa.string()), pa.field("space", pa.string()), pa.field("conv_id", pa.string()),
        pa.field("provider", pa.string()), pa.field("version", pa.string()), pa.field("payload", pa.string()),
        pa.field("ts", pa.float64()),
    ]),
}

# Keys that make commits idempotent (merge_insert on these columns: a replayed batch finds its rows).
ITEM_KEY = ["space", "conv_id", "id", "valid_from"]
EVENT_KEY = ["space", "conv_id", "step", "seq"]
LINK_KEY = ["space", "conv_id", "item_id", "source_id", "step"]

# Columns added to a table after stores were first written, with the SQL value old rows get:
# opening an older store adds them (LanceDB add_columns), so nothing stored is lost; a read-only store never
# writes them: its reads compute them with the same SQL (memcore.store.tables.Tables.df).
ADDED_COLUMNS: dict[str, dict[str, str]] = {
    "llm_calls": {"attempt": "CAST(1 AS INT)", "prompt": "CAST('' AS STRING)", "completion": "CAST('' AS STRING)",
                  "request_format": "CAST('' AS STRING)", "outcome": "CAST('' AS STRING)",
                  "variant": "system"},  # a call before variants: the plain system
}


def sql_str(s: str) -> str:
    """A SQL string literal with quotes escaped."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_in(values: Iterable[str]) -> str:
    """A SQL IN list of string literals."""
    return "(" + ",".join(sql_str(v) for v in values) + ")"


_OPS = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def sql_value(v: Any) -> str:
    """A SQL literal of a Python value (str, bool, int, float; numpy scalars too)."""
    if hasattr(v, "item") and not isinstance(v, str | bytes):
        v = v.item()  # numpy scalar
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return sql_str(v)


def match(**conds: Any) -> str:
    """A SQL filter from typed conditions, joined with AND ("" when there are none).

    `col=value`: equal; `col=[a, b]` (list, tuple, set, frozenset): one of them (an empty list matches
    no row); `col__gt=v` (and __ge, __lt, __le, __ne): compared; a value of None: no condition. A
    column of a merge-insert condition is spelled `**{"target.expires_at__lt": t}`.
    """
    parts = []
    for key, v in conds.items():
        if v is None:
            continue
        col, _, op = key.rpartition("__") if "__" in key else (key, "", "eq")
        if op not in _OPS:
            raise ValueError(f"unknown comparison {op!r} in {key!r}; use one of {sorted(_OPS)}")
        if isinstance(v, list | tuple | set | frozenset):
            if op != "eq":
                raise ValueError(f"{key!r}: a list of values needs equality, not {op!r}")
            vals = list(v)
            parts.append(f"{col} IN ({','.join(sql_value(x) for x in vals)})" if vals else "false")
        else:
            parts.append(f"{col} {_OPS[op]} {sql_value(v)}")
    return " AND ".join(parts)
