"""LanceStore parts that read versioned memory items: now, at a step, history, counts, search."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from memcore.store.schema import INF_STEP, KIND_EXTRA, sql_in, sql_str
from memcore.store.tables import Tables
from memcore.types import MemoryItem


def _payload_bytes(col: pa.ChunkedArray) -> int:
    """Payload bytes of an Arrow column: UTF-8 bytes of strings (in lists too), 4 per float32/int32 value."""
    t = col.type
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return sum(_payload_bytes(pa.chunked_array([c.flatten()])) for c in col.chunks) if col.num_chunks else 0
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return sum(int(pc.sum(pc.binary_length(c)).as_py() or 0) for c in col.chunks)
    return (t.bit_width // 8) * (len(col) - col.null_count)


def item_row(space: str, it: MemoryItem, dim: int) -> dict:
    """The stored row of one item version (a `dim`-d zero vector when it has no embedding)."""
    vec = it.embedding if it.embedding is not None else [0.0] * dim
    row = {
        "id": it.id, "space": space, "system": it.system, "conv_id": it.conv_id, "kind": it.kind,
        "text": it.text, "vector": [float(x) for x in vec], "sources": list(it.sources),
        "turn_ids": list(it.turn_ids), "created_step": int(it.created_step),
        "valid_from": int(it.updated_step), "valid_to": INF_STEP, "timestamp": it.timestamp,
        "metadata": json.dumps(it.metadata, ensure_ascii=False, default=str),
    }
    for f in KIND_EXTRA.get(it.kind, []):
        row[f.name] = str(it.metadata.get(f.name, ""))
    return row

def row_item(r: dict, with_vectors: bool) -> MemoryItem:
    """The item version a stored row holds (its vector read only `with_vectors`)."""
    return MemoryItem(
        id=r["id"], kind=r["kind"], text=r["text"], system=r["system"], conv_id=r["conv_id"],
        embedding=_floats(r["vector"]) if with_vectors else None,
        sources=list(r["sources"] if r["sources"] is not None else []),
        turn_ids=list(r["turn_ids"] if r["turn_ids"] is not None else []),
        created_step=int(r["created_step"]), updated_step=int(r["valid_from"]),
        timestamp=r["timestamp"] or "", metadata=json.loads(r["metadata"] or "{}"),
    )

def arrow_rows(tbl: pa.Table, with_vectors: bool = True) -> list[dict]:
    """A table read's rows as dicts of Python values, as `row_item` takes them: the rows pandas' to_dict gives,
    read straight from Arrow (~2x less CPU: a system's restore reads thousands of rows). The vector column, when
    read, comes as Python floats converted in one numpy call for all rows (the values `_floats` gives per row)."""
    vec = tbl["vector"] if with_vectors and "vector" in tbl.column_names else None
    rows = (tbl.drop_columns(["vector"]) if "vector" in tbl.column_names else tbl).to_pylist()
    if vec is not None and len(rows):
        if vec.null_count or not pa.types.is_fixed_size_list(vec.type):  # not the schema's layout: row by row
            for r, v in zip(rows, vec.to_pylist(), strict=True):
                r["vector"] = v
        else:
            flat = pa.concat_arrays([c.flatten() for c in vec.chunks]).to_numpy(zero_copy_only=False)
            for r, v in zip(rows, flat.astype(np.float64).reshape(len(rows), vec.type.list_size).tolist(),
                            strict=True):
                r["vector"] = v
    return rows


def at_filter(space: str, conv_id: str, at_step: int | None) -> str:
    """The filter of a memory's item versions current now (at_step None) or at a step."""
    return f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND " + (
        f"valid_to = {INF_STEP}" if at_step is None else f"valid_from <= {at_step} AND valid_to > {at_step}")


class ItemsPart:
    """Reading `mem_<kind>` tables, through the store's Tables."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    def items(self, space: str, conv_id: str, kind: str, at_step: int | None = None,
              with_vectors: bool = True) -> list[MemoryItem]:
        """Items of one kind now (or as they were at `at_step`)."""
        name = f"mem_{kind}"
        if not self.tables.has(name):
            return []
        tbl = self.tables.arrow(name, where=at_filter(space, conv_id, at_step),
                                columns=None if with_vectors else self._columns_but_vector(name))
        return [row_item(r, with_vectors) for r in arrow_rows(tbl, with_vectors)]

    def _columns_but_vector(self, name: str) -> list[str]:
        """The table's columns without its vector (a read that does not need vectors skips them)."""
        return [c for c in self.tables.table(name).schema.names if c != "vector"]

    def kind_versions(self, space: str, conv_id: str, kind: str, ids: Collection[str] | None = None,
                      alive: tuple[int, int] | None = None) -> tuple[list[MemoryItem], np.ndarray]:
        """Every stored version of one kind's items (no vectors), in the table's order, with each version's
        valid_to: the versions alive at step s are those with updated_step <= s < valid_to, in the order
        `items(..., at_step=s)` gives them (one read serves every step). Only those of `ids`, and only those alive
        at some step from alive[0] to alive[1], when given."""
        name = f"mem_{kind}"
        if not self.tables.has(name) or (ids is not None and not ids):
            return [], np.zeros(0, dtype=np.int64)
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        if ids is not None:
            where += f" AND id IN {sql_in(sorted(ids))}"
        if alive is not None:
            where += f" AND valid_from <= {int(alive[1])} AND valid_to > {int(alive[0])}"
        tbl = self.tables.arrow(name, where=where, columns=self._columns_but_vector(name))  # no pandas: ~2x less CPU
        return ([row_item(r, False) for r in arrow_rows(tbl, False)],
                tbl["valid_to"].to_numpy().astype(np.int64, copy=False))

    def item_history(self, space: str, conv_id: str, kind: str, item_id: str) -> list[MemoryItem]:
        """Every stored version of one item, oldest first."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND id = {sql_str(item_id)}"
        df = self.tables.df(f"mem_{kind}", where=where)
        return [row_item(r, False) for r in df.sort_values("valid_from").to_dict("records")]

    def kind_counts(self, space: str, conv_id: str, at_step: int | None = None) -> dict[str, int]:
        """Number of current items per kind (or at `at_step`)."""
        out = {}
        for name in self.tables.names():
            if name.startswith("mem_"):
                n = self.tables.table(name).count_rows(at_filter(space, conv_id, at_step))
                if n:
                    out[name[4:]] = n
        return out

    def footprint(self, space: str | None, conv_id: str) -> dict[str, dict[str, int]]:
        """{kind: {"rows", "bytes"}} of one memory's current items (space None: the conversation's shared raw
        turns, under "turns"). Bytes are the rows' payload: UTF-8 bytes of every string value, 4 per float32
        vector value and int32 field (what the rows hold, without Lance's file overhead or indexes)."""
        if space is None:
            names = {"turns": ("turns", f"conv_id = {sql_str(conv_id)}")}
        else:
            names = {n[4:]: (n, at_filter(space, conv_id, None)) for n in self.tables.names() if n.startswith("mem_")}
        out = {}
        for kind, (name, where) in names.items():
            if not self.tables.has(name):
                continue
            tab = self.tables.table(name).search().where(where).limit(None).to_arrow()
            if tab.num_rows:
                out[kind] = {"rows": tab.num_rows, "bytes": sum(_payload_bytes(c) for c in tab.columns)}
        return out

    def item_versions(self, space: str, conv_id: str) -> pd.DataFrame:
        """Every stored item version of a memory space: kind, id, valid_from, valid_to."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        frames = [self.tables.df(name, where=where, columns=["id", "valid_from", "valid_to"]).assign(kind=name[4:])
                  for name in self.tables.names() if name.startswith("mem_")]
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.DataFrame(columns=["id", "valid_from", "valid_to", "kind"])
        return pd.concat(frames, ignore_index=True)

    def search_items(self, space: str, conv_id: str, kind: str, query: str, vector: np.ndarray | None,
                     k: int, retriever: str = "dense") -> list[tuple[MemoryItem, float]]:
        """Top-k current items of one kind by a registered retriever (memcore.retrievers).

        Lexical and hybrid scores depend only on this space's live items of this kind (see memcore.store.search).
        """
        name = f"mem_{kind}"
        if not self.tables.has(name):
            return []
        filt = at_filter(space, conv_id, None)
        return [(row_item(r, True), s) for r, s in self.tables.search(name, filt, query, vector, k, retriever)]


def _floats(v: Any) -> list[float]:
    """A stored vector as Python floats (a search gives a list of them, a table read a float32 array)."""
    return list(v) if isinstance(v, list) else np.asarray(v, dtype=np.float64).tolist()
