"""LanceStore.items reads rows straight from Arrow (memcore.store.items.arrow_rows): the same items, vectors and
metadata as the pandas read it replaced, now, at a step, with and without vectors, across several writes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from memcore.embed import HashingEmbedder
from memcore.store import LanceStore
from memcore.store.items import arrow_rows, at_filter, row_item
from memcore.types import MemoryItem

EMB = HashingEmbedder()


def _item(i: int, step: int, kind: str = "semantic") -> MemoryItem:
    text = f"fact {i} at step {step}: Ana's dog Biscuit likes café au lait"
    return MemoryItem(id=f"{kind}-{i}", kind=kind, text=text, system="s", conv_id="c",
                      embedding=EMB.embed([text])[0].tolist(), sources=[f"D1:{i}"] if i % 2 else [],
                      turn_ids=[f"D1:{i}", f"D1:{i + 1}"], created_step=step, updated_step=step,
                      timestamp="" if i % 3 else "8 May 2023", metadata={"n": i, "tags": ["a", str(step)]})


def _pandas_items(store: LanceStore, kind: str, at_step: int | None, with_vectors: bool) -> list[MemoryItem]:
    """The read items() made before: pandas' to_dict records, one row at a time."""
    name = f"mem_{kind}"
    cols = None if with_vectors else [c for c in store.tables.table(name).schema.names if c != "vector"]
    df = store.tables.df(name, where=at_filter("sp", "c", at_step), columns=cols)
    return [row_item(r, with_vectors) for r in df.to_dict("records")]


def test_items_from_arrow_equal_the_pandas_read(tmp_path):
    store = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    store.commit("sp", "s", "c", 2, [_item(i, 2) for i in range(7)], [], [], {})  # several fragments: chunks
    store.commit("sp", "s", "c", 5, [_item(i, 5) for i in range(3, 12)], [("semantic", "semantic-0")], [], {})
    for at in (None, 3, 6):
        for vectors in (True, False):
            got = store.items("sp", "c", "semantic", at_step=at, with_vectors=vectors)
            assert got == _pandas_items(store, "semantic", at, vectors)
            assert all((it.embedding is not None) == vectors for it in got)
    now = {it.id: it for it in store.items("sp", "c", "semantic")}
    assert "semantic-0" not in now and now["semantic-4"].text.endswith("café au lait") and now["semantic-4"].updated_step == 5
    assert np.allclose(now["semantic-4"].embedding, _item(4, 5).embedding, atol=1e-6)
    assert all(isinstance(x, float) for x in now["semantic-4"].embedding)


def test_arrow_rows_converts_vectors_in_one_pass_and_keeps_a_row_without_one():
    vecs = pa.array([[0.5, -1.0], [0.25, 2.0]], type=pa.list_(pa.float32(), 2))
    tbl = pa.table({"id": ["a", "b"], "vector": vecs})
    assert arrow_rows(tbl) == [{"id": "a", "vector": [0.5, -1.0]}, {"id": "b", "vector": [0.25, 2.0]}]
    assert arrow_rows(tbl, with_vectors=False) == [{"id": "a"}, {"id": "b"}]
    sliced = pa.table({"id": ["b"], "vector": vecs.slice(1)})  # a chunk with an offset
    assert arrow_rows(sliced) == [{"id": "b", "vector": [0.25, 2.0]}]
    holey = pa.table({"id": ["a", "b"], "vector": pa.array([[0.5, -1.0], None], type=pa.list_(pa.float32(), 2))})
    assert arrow_rows(holey) == [{"id": "a", "vector": [0.5, -1.0]}, {"id": "b", "vector": None}]
