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
        self._mats: dict[str, tuple[list[str], np.ndarray]] = {}
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
        self._mats.pop(item.kind, None)
        return item

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
            self._mats.pop(item.kind, None)
        return item

    def vector(self, item_id: str) -> np.ndarray:
        """The unit vector of an item."""
        return self._vecs[item_id]

    def of_kind(self, kind: str) -> list[MemoryItem]:
        """Items of one kind in insertion order."""
        return [it for it in self.items.values() if it.kind == kind]

    def matrix(self, kind: str) -> tuple[list[str], np.ndarray]:
        """Ids and stacked unit vectors of one kind (cached until the kind changes)."""
        if kind not in self._mats:
            ids = [i for i, it in self.items.items() if it.kind == kind and i in self._vecs]
            mat = np.stack([self._vecs[i] for i in ids]) if ids else np.zeros((0, 1), dtype=np.float32)
            self._mats[kind] = (ids, mat)
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
