"""WorkingMemory's per-kind matrices: grown row by row as items arrive, always what a rebuild from every item
gives (ids in insertion order, their vectors), and a matrix handed out never changes afterwards."""

from __future__ import annotations

import random

import numpy as np

from memcore.systems.memory import WorkingMemory
from memcore.types import MemoryItem


def rebuilt(m: WorkingMemory, kind: str) -> tuple[list[str], np.ndarray]:
    """The matrix as a rebuild from every item computes it."""
    ids = [i for i, it in m.items.items() if it.kind == kind and i in m._vecs]
    return ids, (np.stack([m.vector(i) for i in ids]) if ids else np.zeros((0, 1), dtype=np.float32))


def test_matrices_equal_a_rebuild_through_puts_touches_removals_and_searches() -> None:
    rnd, rng = random.Random(7), np.random.default_rng(7)
    m, n, appended = WorkingMemory(), 0, 0
    held: list[tuple[list[str], np.ndarray, list[str], np.ndarray]] = []
    for step in range(600):
        op, kind = rnd.random(), rnd.choice(["unit", "episode", "semantic"])
        live = [i for i, it in m.items.items() if it.kind == kind]
        if op < 0.6 or not live:  # a new item, most with a vector
            n += 1
            vec = rng.standard_normal(8).astype(np.float32) if rnd.random() < 0.9 else None
            appended += kind in m._grow and vec is not None
            m.put(MemoryItem(id=f"i{n}", kind=kind, text="t"), vec)
        elif op < 0.75:  # an item replaced with a new vector
            m.put(m.get(rnd.choice(live)), rng.standard_normal(8).astype(np.float32))
        elif op < 0.85:
            m.touch(m.get(rnd.choice(live)), step)
        else:
            m.remove(rnd.choice(live))
        if rnd.random() < 0.7:
            ids, mat = m.matrix(kind)
            want_ids, want = rebuilt(m, kind)
            assert ids == want_ids and mat.shape == want.shape and np.array_equal(mat, want)
            held.append((ids, mat, list(ids), mat.copy()))
            q = rng.standard_normal(8).astype(np.float32)
            order = np.argsort(-(want @ q), kind="stable")[:3] if want_ids else []
            assert [it.id for it, _ in m.search(kind, q, 3)] == [want_ids[j] for j in order]
    assert appended > 100  # most new items took the appending path
    for ids, mat, ids0, mat0 in held:  # what a caller holds stays as it was handed out
        assert ids == ids0 and np.array_equal(mat, mat0)
