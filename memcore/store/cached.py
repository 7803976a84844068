"""Per-memory caches in the store (a memory's 2-D projection, Replay's per-step counts): one row per key, each with
the memory's version it was computed at and its payload as JSON. A row at another version is stale: `load_cached`
ignores it and `save_cached` replaces it (merge on the key). The SQL stays here."""

from __future__ import annotations

import json
import time
from typing import Any

from memcore.store.schema import sql_str


def load_cached(store: Any, table: str, key: str, version: str) -> dict | None:
    """The payload cached under `key` at `version`, or None when there is none or only a stale one."""
    if not store.tables.has(table):
        return None
    df = store.tables.df(table, where=f"key = {sql_str(key)} AND version = {sql_str(version)}", columns=["payload"])
    return json.loads(df["payload"].iloc[-1]) if len(df) else None


def save_cached(store: Any, table: str, key: str, version: str, payload: dict, **columns: Any) -> None:
    """Cache `payload` under `key` at `version` (with the table's other `columns`), replacing the earlier row."""
    row = {"key": key, **columns, "version": version, "payload": json.dumps(payload), "ts": time.time()}
    store.tables.fresh(table).merge_insert("key").when_matched_update_all().when_not_matched_insert_all() \
        .execute([row])
