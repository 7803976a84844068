"""A content-addressed on-disk cache of LLM calls (SQLite, safe across processes)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memcore.llm.base import ChatResult
from memcore.sqlite_util import LocalSQLite


def call_key(**parts: Any) -> str:
    """SHA-256 of the canonical JSON of everything that determines a reply."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CallCache:
    """Maps call keys to ChatResults in `<dir>/llm_cache.sqlite`."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / "llm_cache.sqlite"
        self._db = LocalSQLite(self.path, "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._conn = self._db.conn

    def get(self, key: str) -> ChatResult | None:
        """The cached result for `key`, marked cached, or None."""
        row = self._conn().execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        res = ChatResult(**json.loads(row[0]))
        res.cached = True
        return res

    def put(self, key: str, result: ChatResult) -> None:
        """Store a result (first write wins; the content is the same)."""
        value = json.dumps({**asdict(result), "cached": False})
        with self._conn() as c:
            c.execute("INSERT OR IGNORE INTO calls (key, value) VALUES (?, ?)", (key, value))

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM calls").fetchone()[0]
