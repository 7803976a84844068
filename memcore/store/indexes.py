"""Scalar indexes the store keeps on its scope columns, built and refreshed after writes.

Every search and read of memcore selects one scope: a conversation's turns, a memory space's items
of one conversation, a run's results. Without an index LanceDB evaluates the filter by scanning the
column over the whole table, which grows with every conversation in the store; a BTREE index on the
scope column finds the scope's rows directly, so one conversation's search costs about the same in
a store of 10K or 1M items (bench/scale.py). Dense search then stays an exact (flat) cosine search
over the scope's rows: no approximate vector index is needed for scopes of a few thousand rows.

When: after a write to a table (a commit, saved turns, saved results), once the table holds
`MEMCORE_INDEX_MIN_ROWS` rows (default 20,000: below that a scan is as fast), the index is created;
it is rebuilt when the table has grown by a quarter since (rows added after an index was built are
still found, by a scan of the new fragments only). Building is best effort: a failure (another
process built or rebuilt it at the same moment, a read-only store) leaves searches correct, only
slower, and is retried after the next growth.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from lancedb.index import BTree

GROWTH = 1.25  # rebuild once the table has this many times the rows it had when last indexed
RECOUNT_EVERY = 16  # writes of a known row count between two counts (other processes' rows are seen then)


def min_rows() -> int:
    """Rows a table needs before its scope column is indexed ($MEMCORE_INDEX_MIN_ROWS, default 20,000)."""
    return int(os.environ.get("MEMCORE_INDEX_MIN_ROWS") or 20_000)


def scope_column(name: str) -> str | None:
    """The column that selects a table's scopes, or None for tables that stay small."""
    if name in ("turns", "events", "links", "llm_calls") or name.startswith("mem_"):
        return "conv_id"
    if name == "results":
        return "run_id"
    return None


class IndexKeeper:
    """Builds and refreshes the scope indexes of one store's tables (one per LanceStore)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows_at_check: dict[str, int] = {}
        self._est: dict[str, tuple[int, int]] = {}  # table -> (rows counted + rows this process added, writes)
        self.built: list[tuple[str, str, int]] = []  # (table, column, rows) built by this process

    def after_write(self, name: str, table: Any, force: bool = False, added: int | None = None) -> None:
        """Index the table's scope column if it is large enough and the index is missing or stale
        (`force`: whatever its size and age, e.g. after a bulk load). A write that says how many rows
        it `added` to a table counted before skips the count (one LanceDB call per write) unless its
        estimate reaches a threshold or RECOUNT_EVERY writes went by since the last count."""
        col = scope_column(name)
        if col is None:
            return
        with self._lock:
            if not force and added is not None and name in self._est:
                est, writes = self._est[name]
                est, writes = est + added, writes + 1
                self._est[name] = (est, writes)
                last = self._rows_at_check.get(name, 0)
                due = est >= min_rows() and (not last or est >= last * GROWTH)
                if writes < RECOUNT_EVERY and not due:
                    return
        try:
            n = table.count_rows()
        except Exception:
            return
        with self._lock:
            self._est[name] = (n, 0)
            last = self._rows_at_check.get(name, 0)
            if not force and (n < min_rows() or (last and n < last * GROWTH)):
                return
            self._rows_at_check[name] = n
        try:
            ix = next((i for i in table.list_indices() if list(i.columns) == [col]), None)
            fresh = ix is not None and int(getattr(ix, "num_unindexed_rows", 0) or 0) <= n * (1 - 1 / GROWTH)
            if fresh and not force:
                return  # another process indexed it recently enough
            table.create_index(col, config=BTree(), replace=True)
            self.built.append((name, col, n))
        except Exception:
            with self._lock:
                self._rows_at_check[name] = last
