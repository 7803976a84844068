"""Cached 2-D projections of a memory (the embedding map): one row per memory space x conversation x method.

A row holds the step and the memory's version (`memory_version`: a digest of every stored item version, so any
item created, changed, superseded or rolled back gives another) it was computed at, and the projection as JSON
(memcore.eval.embedding_map writes and reads it). A row whose version is not the memory's current one is stale:
`load_projection` ignores it and `save_projection` replaces it. The rows are read and written by memcore.store.cached.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd

from memcore.store.cached import load_cached, save_cached

TABLE = "projections"  # its schema: memcore.store.schema.SCHEMAS


def memory_version(versions: pd.DataFrame) -> str:
    """A digest of a memory's stored item versions (kind, id, valid_from, valid_to: MemoryView.versions()):
    equal exactly when no item was added, changed, superseded or rolled back in between."""
    h = hashlib.sha1()
    if len(versions):
        df = versions[["kind", "id", "valid_from", "valid_to"]].sort_values(["kind", "id", "valid_from"])
        for row in df.itertuples(index=False):
            h.update(f"{row.kind}\x1f{row.id}\x1f{int(row.valid_from)}\x1f{int(row.valid_to)}\x1e".encode())
    return h.hexdigest()[:16]


def _key(space: str, conv_id: str, method: str) -> str:
    return f"{space}|{conv_id}|{method}"


def load_projection(store: Any, space: str, conv_id: str, method: str, version: str) -> dict | None:
    """The cached projection of a memory by `method` at `version` (its payload dict), or None when there is
    none or only a stale one."""
    return load_cached(store, TABLE, _key(space, conv_id, method), version)


def save_projection(store: Any, space: str, conv_id: str, method: str, step: int, version: str,
                    payload: dict) -> None:
    """Store a memory's projection by `method`, replacing any earlier one of that memory and method."""
    save_cached(store, TABLE, _key(space, conv_id, method), version, payload, space=space, conv_id=conv_id,
                method=method, step=int(step))
