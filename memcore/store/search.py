"""Search for LanceStore: each registered retriever (memcore.retrievers) over one scope of a table.

The store does not know how dense, lexical or hybrid search rank: it builds a `Scope` (the main
table, the filter, and a lazily built snapshot) and calls the retriever registered under the
name the system's config gives (`get_retriever(name).search(scope, query, vector, k)`).

A LanceDB full-text (BM25) index pools its statistics (IDF, average length) over every row
of its table, and rows added after the index was built are not in it. So lexical and
hybrid search run on a *scope snapshot*: a small table holding exactly the rows one search
filter selects (one conversation's turns, or one memory space's live item versions), with
its own FTS index. A scope's results are thus a function of its own content and the query.

Snapshots are content-addressed (`fts_<scope hash>_<content hash>`), so processes sharing
a store build identical tables under identical names and reuse each other's; a snapshot is
rebuilt lazily when the main table's version moved and the scope's rows differ. Hybrid is
LanceDB's own hybrid query (dense + FTS legs fused by its RRFReranker) on the snapshot,
which holds the same rows and vectors the dense search sees.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

import numpy as np
import pyarrow as pa

os.environ.setdefault("LANCE_LOG", "error")

from lancedb.index import FTS
from tenacity import Retrying, stop_after_attempt, wait_exponential

from memcore.retrievers import fts_query, get_retriever

__all__ = ["SNAPSHOT_PREFIX", "Scope", "ScopedSearch", "fts_query", "list_table_names"]

SNAPSHOT_PREFIX = "fts_"


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\0")
    return h.hexdigest()[:20]


def _table_bytes(data: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as w:
        w.write_table(data.combine_chunks())
    return sink.getvalue().to_pybytes()


def _has_fts(t: Any) -> bool:
    return any("text" in (getattr(ix, "columns", None) or []) for ix in t.list_indices())


class ScopedSearch:
    """Top-k search by a registered retriever, and the scope snapshots it may use; one per LanceStore."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self._lock = threading.RLock()
        # (table name, filter) -> (main table version seen, snapshot name or None if empty)
        self._seen: dict[tuple[str, str], tuple[int, str | None]] = {}
        self._open: dict[str, Any] = {}
        self.builds = 0  # snapshots created by this process (for tests and benchmarks)

    def search(self, t: Any, name: str, filt: str, query: str, vector: np.ndarray | None, k: int,
               retriever: str) -> list[tuple[dict, float]]:
        """Top-k (row, score) of table `t` (named `name`) among the rows `filt` selects, ranked by the
        registered retriever of that name. A snapshot dropped under the search (another thread or
        process rebuilt it) is rebuilt and the search run once more."""
        r = get_retriever(retriever)
        for attempt in range(2):
            scope = Scope(self, t, name, filt)
            try:
                return r.search(scope, query, vector, k)
            except Exception:
                if attempt or not scope.used_snapshot:
                    raise
                self._forget(name, filt)
        return []

    def _forget(self, name: str, filt: str) -> None:
        with self._lock:
            old = self._seen.pop((name, filt), None)
            if old and old[1]:
                self._open.pop(old[1], None)

    def snapshot(self, t: Any, name: str, filt: str) -> Any | None:
        """The FTS-indexed snapshot table of the rows `filt` selects (None when there are none)."""
        key = (name, filt)
        version = t.version  # read before the rows: a write in between only causes one more check
        with self._lock:
            seen = self._seen.get(key)
            if seen and seen[0] == version and (seen[1] is None or seen[1] in self._open):
                return self._open.get(seen[1]) if seen[1] else None
            data = t.search().where(filt).limit(None).to_arrow()
            if data.num_rows == 0:
                self._seen[key] = (version, None)
                return None
            order = ["uid"] if "uid" in data.column_names else ["id", "valid_from"]
            data = data.sort_by([(c, "ascending") for c in order if c in data.column_names])
            prefix = f"{SNAPSHOT_PREFIX}{_digest(name.encode(), filt.encode())}_"
            snap_name = prefix + _digest(_table_bytes(data))
            snap = self._materialize(snap_name, data)
            self._seen[key] = (version, snap_name)
            self._open[snap_name] = snap
            if not seen or seen[1] != snap_name:
                self._drop_stale(prefix, keep=snap_name)
            return snap

    def _materialize(self, snap_name: str, data: pa.Table) -> Any:
        """Open the snapshot table if some process made it already, else create it; make sure it has FTS."""
        try:
            s = self.db.open_table(snap_name)
        except (ValueError, FileNotFoundError):
            try:
                s = self.db.create_table(snap_name, data=data)
                self.builds += 1
            except Exception:
                s = self.db.open_table(snap_name)
        for attempt in Retrying(stop=stop_after_attempt(6), wait=wait_exponential(multiplier=0.05, max=1),
                                reraise=True):
            with attempt:  # another process may create, overwrite or index the same snapshot meanwhile
                if not _has_fts(s):
                    try:
                        s.create_index("text", config=FTS(with_position=False), replace=True)
                    except Exception:
                        s = self.db.open_table(snap_name)  # a fresh handle: the concurrent commit may hold FTS
                        if not _has_fts(s):
                            raise
        return s

    def _drop_stale(self, prefix: str, keep: str) -> None:
        """Drop this scope's older snapshots (best effort: a reader of one rebuilds and retries)."""
        for n in list_table_names(self.db):
            if n.startswith(prefix) and n != keep:
                self._open.pop(n, None)
                try:
                    self.db.drop_table(n)
                except Exception:
                    pass


class Scope:
    """The rows one filter selects in one table, as a retriever sees them (memcore.retrievers.SearchScope)."""

    def __init__(self, searcher: ScopedSearch, table: Any, name: str, filt: str) -> None:
        self.table, self.filter = table, filt
        self._searcher, self._name = searcher, name
        self.used_snapshot = False  # a snapshot was handed out: a failure may mean it was dropped meanwhile

    def snapshot(self) -> Any | None:
        """The scope's FTS-indexed snapshot table, or None when the filter selects no rows."""
        snap = self._searcher.snapshot(self.table, self._name, self.filter)
        self.used_snapshot = snap is not None
        return snap


def list_table_names(db: Any) -> list[str]:
    """Every table name in the database, following pagination."""
    names: list[str] = []
    token = None
    while True:
        res = db.list_tables(page_token=token) if token else db.list_tables()
        names += list(getattr(res, "tables", res))
        token = getattr(res, "page_token", None)
        if not token:
            return names
