"""One SQLite connection per thread, in WAL mode: the on-disk caches share this."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

SYNC_MODES = ("FULL", "NORMAL")


class LocalSQLite:
    """Opens `path` lazily once per thread (WAL, 30 s busy timeout) and runs `schema` once.

    `synchronous`: SQLite's sync mode. FULL (default) syncs the log on every commit (~8 ms each on this
    project's VMs); NORMAL syncs at checkpoints only: in WAL mode the file stays consistent, and a power loss
    or OS crash may lose the last commits. For a cache whose entries are recomputed exactly when missing
    (the embedding cache), losing the last ones costs only their recomputation."""

    def __init__(self, path: str | Path, schema: str, synchronous: str = "FULL") -> None:
        if synchronous not in SYNC_MODES:
            raise ValueError(f"synchronous must be one of {SYNC_MODES}, not {synchronous!r}")
        self.synchronous = synchronous
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self.conn() as c:
            c.execute(schema)

    def conn(self) -> sqlite3.Connection:
        """This thread's connection."""
        c = getattr(self._local, "conn", None)
        if c is None:
            c = sqlite3.connect(self.path, timeout=30)
            c.execute("PRAGMA journal_mode=WAL")
            c.execute(f"PRAGMA synchronous={self.synchronous}")  # one of SYNC_MODES (checked)
            self._local.conn = c
        return c
