"""One SQLite connection per thread, in WAL mode: the on-disk caches share this."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class LocalSQLite:
    """Opens `path` lazily once per thread (WAL, 30 s busy timeout) and runs `schema` once."""

    def __init__(self, path: str | Path, schema: str) -> None:
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
            self._local.conn = c
        return c
