"""WorkingMemory: a system's items in RAM during ingest, with cosine search and change tracking.

Changes are kept per step: `seal(step)` (called by the system after each turn) snapshots every item
put or touched during the step, and `drain()` hands the commit every version of every changed item
and every deletion with its step. So the store holds the state of each step, also inside a commit
batch (replay at any step), and a resumed ingest, which commits at other steps, stores exactly the
versions an uninterrupted one stores.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from memcore.types import MemoryItem


class WorkingMemory:
    """Items by id, their unit vectors, and what changed since the last commit."""

    def __init__(self) -> None:
        self.items: dict[str, MemoryItem] = {}
        self._vecs: dict[str, np.ndarray] = {}
        self._touched: dict[str, None] = {}  # put or touched since the last seal
        self._versions: dict[str, dict[int, MemoryItem]] = {}  # id -> updated_step -> sealed snapshot
        self._deleted: dict[str, tuple[str, int]] = {}  # id -> (kind, step of the deletion)
        self._mats: dict[str, tuple[list[str], np.ndarray]] = {}  # kind -> the (ids, matrix) handed out
        self._grow: dict[str, list] = {}  # kind -> [ids, row buffer, rows used]: new items are appended to it
        self.step = 0  # the step being processed (set by the system; deletions are dated with it)

    def __contains__(self, item_id: str) -> bool:
        return item_id in self.items

    def __len__(self) -> int:
        return len(self.items)

    def get(self, item_id: str) -> MemoryItem:
        """The item with this id (KeyError if absent)."""
        return self.items[item_id]

    def put(self, item: MemoryItem, vector: np.ndarray | None = None, dirty: bool = True) -> MemoryItem:
        """Add or replace an item (its vector from `vector` or item.embedding)."""
        new = item.id not in self.items
        if vector is not None:
            item.embedding = [float(x) for x in vector]
        if item.embedding is not None:
            v = np.asarray(item.embedding, dtype=np.float32)
            n = float(np.linalg.norm(v))
            self._vecs[item.id] = v / n if n > 0 else v
        self.items[item.id] = item
        self._deleted.pop(item.id, None)
        if dirty:
            self._touched[item.id] = None
        if new and item.id in self._vecs and item.kind in self._grow:
            self._append(item.kind, item.id)  # the end of the kind's order, as a rebuild would put it
        else:
            self._forget(item.kind)
        return item

    def _append(self, kind: str, item_id: str) -> None:
        """One more row in the kind's matrix (capacity doubles): a search after each new item costs a matrix
        product, not a rebuild from every item (which made a per-turn search quadratic in the memory)."""
        g = self._grow[kind]
        ids, buf, n = g
        v = self._vecs[item_id]
        if buf is None or n == len(buf):
            grown = np.empty((max(16, 2 * n), v.shape[0]), dtype=v.dtype)
            if n:
                grown[:n] = buf[:n]
            buf = grown  # matrices handed out before keep the old buffer: they never change
        buf[n] = v
        ids.append(item_id)
        g[1], g[2] = buf, n + 1
        self._mats.pop(kind, None)

    def _forget(self, kind: str) -> None:
        """The kind's matrix is rebuilt at its next use (an item replaced, touched or removed)."""
        self._mats.pop(kind, None)
        self._grow.pop(kind, None)

    def touch(self, item: MemoryItem, step: int) -> None:
        """Mark an item changed at `step` (after editing it in place)."""
        item.updated_step = step
        self.put(item, None)

    def remove(self, item_id: str) -> MemoryItem | None:
        """Delete an item; it is closed in the store at the next commit."""
        item = self.items.pop(item_id, None)
        self._vecs.pop(item_id, None)
        self._touched.pop(item_id, None)
        if item is not None:
            self._deleted[item_id] = (item.kind, self.step)
            self._forget(item.kind)
        return item

    def vector(self, item_id: str) -> np.ndarray:
        """The unit vector of an item."""
        return self._vecs[item_id]

    def of_kind(self, kind: str) -> list[MemoryItem]:
        """Items of one kind in insertion order."""
        return [it for it in self.items.values() if it.kind == kind]

    def matrix(self, kind: str) -> tuple[list[str], np.ndarray]:
        """Ids and stacked unit vectors of one kind in insertion order (the same objects until the kind changes;
        a later change hands out new ones and never alters these)."""
        if kind not in self._mats:
            g = self._grow.get(kind)
            if g is None:
                ids = [i for i, it in self.items.items() if it.kind == kind and i in self._vecs]
                g = self._grow[kind] = [ids, np.stack([self._vecs[i] for i in ids]) if ids else None, len(ids)]
            ids, buf, n = g
            self._mats[kind] = (list(ids), buf[:n]) if n else ([], np.zeros((0, 1), dtype=np.float32))
        return self._mats[kind]

    def search(self, kind: str, vector: np.ndarray, k: int,
               keep: Callable[[MemoryItem], bool] | None = None) -> list[tuple[MemoryItem, float]]:
        """Top-k items of a kind by cosine to `vector`, optionally filtered by `keep`."""
        ids, mat = self.matrix(kind)
        if not ids:
            return []
        sims = mat @ np.asarray(vector, dtype=np.float32)
        order = np.argsort(-sims, kind="stable")
        out: list[tuple[MemoryItem, float]] = []
        for j in order:
            it = self.items[ids[j]]
            if keep is None or keep(it):
                out.append((it, float(sims[j])))
                if len(out) >= k:
                    break
        return out

    def seal(self, step: int | None = None) -> None:
        """Snapshot the items changed since the last seal: their state at the end of this step."""
        for i in self._touched:
            it = self.items.get(i)
            if it is not None:
                snap = copy.copy(it)
                snap.metadata = copy.deepcopy(it.metadata)
                snap.sources, snap.turn_ids = list(it.sources), list(it.turn_ids)
                self._versions.setdefault(i, {})[int(it.updated_step)] = snap
        self._touched.clear()

    def drain(self) -> tuple[list[MemoryItem], list[tuple[str, str, int]]]:
        """Every version of every item changed since the last drain (per item in step order) and the
        deleted (kind, id, step) triples; an item created and deleted in between has its closed versions."""
        self.seal()
        ups = [v for vs in self._versions.values() for _, v in sorted(vs.items())]
        dels = [(k, i, st) for i, (k, st) in self._deleted.items()]
        self._versions.clear()
        self._deleted.clear()
        return ups, dels
