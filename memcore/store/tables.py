"""Tables: the one LanceDB connection of a LanceStore and everything its parts share.

The parts of the store (items, records, commit; lance.py composes them) talk to the database only through
this small interface: `table` (open or create, by schema), `fresh` (at its latest version), `df` (rows by a
filter), `has`, `names`, `search` (a registered retriever over one scope), `after_write` (scope indexes),
`lock_rows` (a short lock on shared rows), and `held` (the lease this handle holds for a key, if any).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

os.environ.setdefault("LANCE_LOG", "error")

from memcore.errors import StoreError
from memcore.llm.redact import redact
from memcore.store.indexes import IndexKeeper, scope_column
from memcore.store.lease import Lease
from memcore.store.schema import ADDED_COLUMNS, SCHEMAS, memory_schema, turns_schema
from memcore.store.search import SNAPSHOT_PREFIX, ScopedSearch, list_table_names

_SQL_LITERAL = re.compile(r"('(?:[^']|'')*')")


def _with_columns(where: str, exprs: dict[str, str]) -> str:
    """A SQL filter with each named column replaced by its expression (outside string literals): a filter on a
    column an older table lacks reads what the migration would have stored there (ADDED_COLUMNS)."""
    names = re.compile(r"\b(" + "|".join(map(re.escape, exprs)) + r")\b")
    parts = _SQL_LITERAL.split(where)
    return "".join(p if i % 2 else names.sub(lambda m: f"({exprs[m.group(1)]})", p) for i, p in enumerate(parts))


class Tables:
    """Open tables of one LanceDB database (`db`, at `uri`) holding `dim`-d vectors; `lease_mode` is how
    leases are kept there ('file' locally, 'row' remotely); `read_only`: a table that does not exist is a
    StoreError, never created, and an older table that lacks columns (ADDED_COLUMNS) is not migrated: `df`
    computes them in the query as the migration would fill them (the commands that only read)."""

    def __init__(self, db: Any, uri: str, dim: int, lease_mode: str, read_only: bool = False) -> None:
        self.db, self.uri, self.dim, self.lease_mode, self.read_only = db, uri, dim, lease_mode, read_only
        self._open: dict[str, Any] = {}
        self._lock = threading.RLock()
        self.searcher = ScopedSearch(db)
        self.indexes = IndexKeeper()  # scope indexes, built after writes (memcore.store.indexes)
        self._held: dict[str, Lease] = {}
        self._absent: dict[str, dict[str, str]] = {}  # read-only: columns an older table lacks, with their SQL

    def table(self, name: str, schema: Any = None) -> Any:
        """Open or create a table by name (a schema is needed only for a table memcore does not know)."""
        with self._lock:
            if name in self._open:
                return self._open[name]
            if schema is None:
                schema = self.schema_for(name)
            try:
                t = self.db.open_table(name)
            except (ValueError, FileNotFoundError):
                if self.read_only:
                    raise StoreError(f"the store at {redact(self.uri)!r} holds no {name} table yet (nothing of "
                                     "that kind was stored there). Fix: check --store, or write it first") from None
                t = self.db.create_table(name, schema=schema, exist_ok=True)
            self._check_dim(name, t)
            missing = {c: v for c, v in ADDED_COLUMNS.get(name, {}).items() if c not in t.schema.names}
            if missing and self.read_only:  # never written here: reads compute the columns (df)
                self._absent[name] = missing
            elif missing:  # a store written before these columns existed
                try:
                    t.add_columns(missing)
                except Exception:
                    t = self.db.open_table(name)
                    if any(c not in t.schema.names for c in missing):
                        raise
            self._open[name] = t
            return t

    def fresh(self, name: str) -> Any:
        """A table at its latest version: writes keyed on rows must see other processes' commits."""
        t = self.table(name)
        t.checkout_latest()
        return t

    def refresh(self) -> None:
        """Point every open table at its latest version (rows other processes committed since)."""
        with self._lock:
            tables = list(self._open.values())
        for t in tables:
            try:
                t.checkout_latest()
            except Exception:
                pass

    def schema_for(self, name: str) -> Any:
        """The pyarrow schema of a table memcore knows (StoreError for any other name)."""
        if name == "turns":
            return turns_schema(self.dim)
        if name.startswith("mem_"):
            return memory_schema(name[4:], self.dim)
        if name in SCHEMAS:
            return SCHEMAS[name]
        raise StoreError(f"unknown table {name!r}")

    def _check_dim(self, name: str, t: Any) -> None:
        if "vector" not in t.schema.names:
            return
        got = t.schema.field("vector").type.list_size
        if got != self.dim:
            raise StoreError(
                f"table {name!r} in {redact(self.uri)} holds {got}-d vectors but the embedder gives {self.dim}-d. "
                "Fix: use another --store path for this embedder, or delete the store folder")

    def names(self) -> list[str]:
        """Names of the tables that exist (without the internal search snapshots)."""
        return [n for n in list_table_names(self.db) if not n.startswith(SNAPSHOT_PREFIX)]

    def has(self, name: str) -> bool:
        """Whether a table exists (or is open in this handle)."""
        return name in self._open or name in self.names()

    def df(self, name: str, where: str | None = None, columns: list[str] | None = None) -> pd.DataFrame:
        """Rows of a table matching a filter (all without one), some columns only; a table that does not
        exist yet reads empty."""
        if not self.has(name):
            return pd.DataFrame(columns=columns or self.schema_for(name).names)
        return self._scan(name, where, columns).to_pandas()

    def arrow(self, name: str, where: str | None = None, columns: list[str] | None = None) -> Any:
        """The rows `df` reads, as a pyarrow Table (no pandas conversion: a reader that turns rows into objects
        skips it); the table must exist."""
        return self._scan(name, where, columns).to_arrow()

    def _scan(self, name: str, where: str | None, columns: list[str] | None) -> Any:
        t = self.table(name)
        q = t.search()
        absent = self._absent.get(name)
        if absent:  # an older table read without migrating it: each missing column computed as migrating fills it
            where = where and _with_columns(where, absent)
            q = q.select({c: absent.get(c, c) for c in columns or [*t.schema.names, *absent]})
        elif columns:
            q = q.select(columns)
        if where:
            q = q.where(where)
        return q.limit(None)

    def search(self, name: str, filt: str, query: str, vector: np.ndarray | None, k: int,
               retriever: str) -> list[tuple[dict, float]]:
        """Top-k rows of one scope of a table by a registered retriever (memcore.store.search)."""
        return self.searcher.search(self.table(name), name, filt, query, vector, k, retriever)

    def after_write(self, name: str, added: int | None = None) -> None:
        """Keep the table's scope index (memcore.store.indexes: built once it is large, rebuilt as it grows);
        `added` = rows this write added, when known (spares a row count on most writes)."""
        self.indexes.after_write(name, self.table(name), added=added)

    def index_all(self) -> list[tuple[str, str, int]]:
        """Build or rebuild every table's scope index now; (table, column, rows) of those built so far."""
        for name in filter(scope_column, self.names()):
            self.indexes.after_write(name, self.table(name), force=True)
        return list(self.indexes.built)

    def lock_rows(self, name: str) -> Lease:
        """A short exclusive lock on some shared rows (a conversation, its turns) for one write."""
        return Lease(self.uri, f"store|{name}", f"the store's {name} rows", db=self.db, wait=True,
                     timeout=120, mode=self.lease_mode, ttl=30)

    @contextmanager
    def holding(self, lease: Lease) -> Iterator[Lease]:
        """Acquire a lease for a `with` block: tables are refreshed once it is held (the previous holder's
        rows are seen) and `held(key)` returns it meanwhile."""
        with lease:
            self.refresh()
            self._held[lease.key] = lease
            try:
                yield lease
            finally:
                self._held.pop(lease.key, None)

    def held(self, key: str) -> Lease | None:
        """The lease this handle holds for a key (`space|conv_id`, `run|<run_id>`), or None."""
        return self._held.get(key)
