"""LanceStore: every table memcore keeps, on one LanceDB database (local path or any URI).

Memory items are versioned rows: a row is the item's state for valid_from <= step <
valid_to, so the store answers both "what is in memory now" (valid_to = INF_STEP) and
"what was in memory at step t" (replay). Ingest commits a batch of steps, then writes a
checkpoint; resuming rolls back anything written after the last checkpoint, so a killed
ingest never leaves duplicates or loses committed items.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

os.environ.setdefault("LANCE_LOG", "error")

import lancedb  # noqa: E402
from lancedb.index import FTS  # noqa: E402
from lancedb.rerankers import RRFReranker  # noqa: E402

from memcore.errors import StoreError  # noqa: E402
from memcore.store_schema import INF_STEP, KIND_EXTRA, SCHEMAS, memory_schema, turns_schema  # noqa: E402
from memcore.types import Event, MemoryItem  # noqa: E402

RETRIEVERS = ("dense", "lexical", "hybrid")


def sql_str(s: str) -> str:
    """A SQL string literal with quotes escaped."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_in(values: Iterable[str]) -> str:
    """A SQL IN list of string literals."""
    return "(" + ",".join(sql_str(v) for v in values) + ")"


class LanceStore:
    """The memcore store. `dim` is the embedding size; it is fixed when tables are created."""

    def __init__(self, uri: str = ".memcore", dim: int = 384) -> None:
        self.uri = uri
        self.dim = dim
        try:
            if "://" not in uri:
                os.makedirs(uri, exist_ok=True)
            self.db = lancedb.connect(uri)
        except Exception as e:
            raise StoreError(f"cannot open the store at {uri!r}: {e}. Fix: choose a writable path "
                             "with --store or MEMCORE_STORE") from e
        self._tables: dict[str, Any] = {}
        self._fts_ready: set[str] = set()
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- tables
    def table(self, name: str, schema=None):  # noqa: ANN001 - pyarrow schema
        """Open or create a table by name (schema needed only to create it)."""
        with self._lock:
            if name in self._tables:
                return self._tables[name]
            if schema is None:
                schema = self._schema_for(name)
            try:
                t = self.db.open_table(name)
            except (ValueError, FileNotFoundError):
                t = self.db.create_table(name, schema=schema, exist_ok=True)
            self._check_dim(name, t)
            self._tables[name] = t
            return t

    def _schema_for(self, name: str):  # noqa: ANN202
        if name == "turns":
            return turns_schema(self.dim)
        if name.startswith("mem_"):
            return memory_schema(name[4:], self.dim)
        if name in SCHEMAS:
            return SCHEMAS[name]
        raise StoreError(f"unknown table {name!r}")

    def _check_dim(self, name: str, t) -> None:  # noqa: ANN001
        if "vector" not in t.schema.names:
            return
        got = t.schema.field("vector").type.list_size
        if got != self.dim:
            raise StoreError(
                f"table {name!r} in {self.uri} holds {got}-d vectors but the embedder gives {self.dim}-d. "
                "Fix: use another --store path for this embedder, or delete the store folder")

    def table_names(self) -> list[str]:
        """Names of the tables that exist."""
        res = self.db.list_tables()
        return list(getattr(res, "tables", res))

    def _df(self, name: str, where: str | None = None, columns: list[str] | None = None) -> pd.DataFrame:
        if name not in self._tables and name not in self.table_names():
            return pd.DataFrame(columns=columns or self._schema_for(name).names)
        q = self.table(name).search()
        if where:
            q = q.where(where)
        if columns:
            q = q.select(columns)
        return q.limit(None).to_pandas()

    # --------------------------------------------------------- conversations
    def save_conversation(self, conv) -> None:  # noqa: ANN001 - Conversation
        """Store a conversation (turns and questions) so the app can list and reload it."""
        from memcore.serialize import conversation_to_json

        row = {"conv_id": conv.id, "source": conv.source, "n_turns": len(conv.turns),
               "n_questions": len(conv.questions), "speakers": json.dumps(conv.speakers),
               "payload": conversation_to_json(conv)}
        t = self.table("conversations")
        t.merge_insert("conv_id").when_matched_update_all().when_not_matched_insert_all().execute([row])

    def conversations(self) -> pd.DataFrame:
        """One row per stored conversation: conv_id, source, n_turns, n_questions."""
        return self._df("conversations", columns=["conv_id", "source", "n_turns", "n_questions"])

    def load_conversation(self, conv_id: str):  # noqa: ANN201 - Conversation
        """A stored conversation, or StoreError naming the ones that exist."""
        from memcore.serialize import conversation_from_json

        df = self._df("conversations", where=f"conv_id = {sql_str(conv_id)}")
        if df.empty:
            have = ", ".join(self.conversations()["conv_id"]) or "none"
            raise StoreError(f"no conversation {conv_id!r} in {self.uri} (have: {have}). Fix: load it first")
        return conversation_from_json(df.iloc[0]["payload"])

    # ----------------------------------------------------------------- turns
    def has_turns(self, conv_id: str) -> int:
        """Number of stored turns of this conversation."""
        if "turns" not in self.table_names():
            return 0
        return self.table("turns").count_rows(f"conv_id = {sql_str(conv_id)}")

    def save_turns(self, turns: Sequence, vectors: np.ndarray) -> None:
        """Store embedded turns (idempotent: keyed by conv_id|turn_id)."""
        rows = [{
            "uid": f"{t.conv_id}|{t.turn_id}", "conv_id": t.conv_id, "turn_id": t.turn_id, "idx": t.index,
            "session": t.session, "session_date": t.session_date, "timestamp": t.timestamp,
            "speaker": t.speaker, "text": t.content, "raw_text": t.text, "image_caption": t.image_caption,
            "vector": v.astype(np.float32).tolist(),
        } for t, v in zip(turns, vectors, strict=True)]
        if rows:
            self.table("turns").merge_insert("uid").when_matched_update_all() \
                .when_not_matched_insert_all().execute(rows)
            self._fts_ready.discard("turns")

    def turn_matrix(self, conv_id: str) -> tuple[list[str], np.ndarray]:
        """Turn ids in conversation order and their embedding matrix."""
        df = self._df("turns", where=f"conv_id = {sql_str(conv_id)}", columns=["turn_id", "idx", "vector"])
        df = df.sort_values("idx")
        mat = np.stack(df["vector"].to_numpy()).astype(np.float32) if len(df) else np.zeros((0, self.dim))
        return df["turn_id"].tolist(), mat

    def search_turns(self, conv_id: str, query: str, vector: np.ndarray | None, k: int,
                     mode: str = "dense", where: str | None = None) -> list[tuple[dict, float]]:
        """Top-k turns of one conversation by cosine, full-text (BM25) or RRF hybrid search."""
        filt = f"conv_id = {sql_str(conv_id)}" + (f" AND ({where})" if where else "")
        return self._search("turns", filt, query, vector, k, mode)

    # ---------------------------------------------------------------- memory
    def commit(self, space: str, system: str, conv_id: str, step: int, upserts: Sequence[MemoryItem],
               deletes: Sequence[tuple[str, str]], events: Sequence[Event], state: dict,
               config: dict | None = None, done: bool = False) -> None:
        """Write one batch of ingest work and then its checkpoint (see module docstring).

        `deletes` are (kind, item_id) pairs. Items carry their own step in updated_step.
        """
        base = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        by_kind: dict[str, list[MemoryItem]] = {}
        for it in upserts:
            by_kind.setdefault(it.kind, []).append(it)
        del_by_kind: dict[str, list[str]] = {}
        for kind, iid in deletes:
            del_by_kind.setdefault(kind, []).append(iid)
        for kind in sorted(set(by_kind) | set(del_by_kind)):
            t = self.table(f"mem_{kind}")
            items = by_kind.get(kind, [])
            if items:  # close current versions at the step of their new version
                live = self._df(f"mem_{kind}", where=f"{base} AND valid_to = {INF_STEP} AND id IN "
                                f"{sql_in(it.id for it in items)}", columns=["id"])["id"]
                live = set(live)
                by_step: dict[int, list[str]] = {}
                for it in items:
                    if it.id in live:
                        by_step.setdefault(int(it.updated_step), []).append(it.id)
                for st, ids_at in sorted(by_step.items()):
                    t.update(where=f"{base} AND valid_to = {INF_STEP} AND id IN {sql_in(ids_at)}",
                             values={"valid_to": st})
            ids = del_by_kind.get(kind, [])
            if ids:
                t.update(where=f"{base} AND valid_to = {INF_STEP} AND id IN {sql_in(ids)}",
                         values={"valid_to": int(step)})
            if items:
                t.add([self._item_row(space, it) for it in items])
                self._fts_ready.discard(f"mem_{kind}")
        link_rows = [{"space": space, "conv_id": conv_id, "item_id": it.id, "source_id": s,
                      "step": int(it.updated_step)} for it in upserts for s in it.sources]
        if link_rows:
            self.table("links").add(link_rows)
        if events:
            self.table("events").add([self._event_row(space, e, i) for i, e in enumerate(events)])
        self.save_checkpoint(space, system, conv_id, step, state, config or {}, done)

    def _item_row(self, space: str, it: MemoryItem) -> dict:
        vec = it.embedding if it.embedding is not None else [0.0] * self.dim
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

    def _event_row(self, space: str, e: Event, seq: int) -> dict:
        return {"space": space, "system": e.system, "conv_id": e.conv_id, "step": int(e.step), "seq": seq,
                "kind": e.kind, "item_kind": e.item_kind, "item_ids": list(e.item_ids), "turn_id": e.turn_id,
                "reason": e.reason, "data": json.dumps(e.data, ensure_ascii=False, default=_json_default)}

    def save_checkpoint(self, space: str, system: str, conv_id: str, step: int, state: dict,
                        config: dict, done: bool) -> None:
        """Record that everything up to `step` is committed."""
        row = {"key": f"{space}|{conv_id}", "space": space, "system": system, "conv_id": conv_id,
               "step": int(step), "done": bool(done), "state": json.dumps(state, default=_json_default),
               "config": json.dumps(config, default=str), "updated": time.time()}
        self.table("checkpoints").merge_insert("key").when_matched_update_all() \
            .when_not_matched_insert_all().execute([row])

    def checkpoint(self, space: str, conv_id: str) -> dict | None:
        """The last checkpoint {step, done, state, config} of an ingest, or None."""
        df = self._df("checkpoints", where=f"key = {sql_str(space + '|' + conv_id)}")
        if df.empty:
            return None
        r = df.iloc[0]
        return {"step": int(r["step"]), "done": bool(r["done"]), "state": json.loads(r["state"]),
                "config": json.loads(r["config"]), "system": r["system"]}

    def checkpoints(self) -> pd.DataFrame:
        """All ingest checkpoints (one row per memory space and conversation)."""
        return self._df("checkpoints")

    def rollback(self, space: str, conv_id: str, step: int) -> None:
        """Undo everything written for steps after `step` (a killed ingest's partial batch)."""
        base = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        existing = set(self.table_names())
        for name in existing:
            if not name.startswith("mem_"):
                continue
            t = self.table(name)
            t.delete(f"{base} AND valid_from > {int(step)}")
            t.update(where=f"{base} AND valid_to > {int(step)} AND valid_to < {INF_STEP}",
                     values={"valid_to": INF_STEP})
        for name in ("events", "links"):
            if name in existing:
                self.table(name).delete(f"{base} AND step > {int(step)}")

    def items(self, space: str, conv_id: str, kind: str, at_step: int | None = None,
              with_vectors: bool = True) -> list[MemoryItem]:
        """Items of one kind now (or as they were at `at_step`)."""
        name = f"mem_{kind}"
        if name not in self._tables and name not in self.table_names():
            return []
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND " + (
            f"valid_to = {INF_STEP}" if at_step is None else f"valid_from <= {at_step} AND valid_to > {at_step}")
        df = self._df(name, where=where)
        return [self._row_item(r, with_vectors) for r in df.to_dict("records")]

    def item_history(self, space: str, conv_id: str, kind: str, item_id: str) -> list[MemoryItem]:
        """Every stored version of one item, oldest first."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND id = {sql_str(item_id)}"
        df = self._df(f"mem_{kind}", where=where)
        return [self._row_item(r, False) for r in df.sort_values("valid_from").to_dict("records")]

    def kind_counts(self, space: str, conv_id: str, at_step: int | None = None) -> dict[str, int]:
        """Number of current items per kind (or at `at_step`)."""
        out = {}
        for name in self.table_names():
            if name.startswith("mem_"):
                where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND " + (
                    f"valid_to = {INF_STEP}" if at_step is None
                    else f"valid_from <= {at_step} AND valid_to > {at_step}")
                n = self.table(name).count_rows(where)
                if n:
                    out[name[4:]] = n
        return out

    def item_versions(self, space: str, conv_id: str) -> pd.DataFrame:
        """Every stored item version of a memory space: kind, id, valid_from, valid_to."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        frames = [self._df(name, where=where, columns=["id", "valid_from", "valid_to"]).assign(kind=name[4:])
                  for name in self.table_names() if name.startswith("mem_")]
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.DataFrame(columns=["id", "valid_from", "valid_to", "kind"])
        return pd.concat(frames, ignore_index=True)

    @staticmethod
    def _row_item(r: dict, with_vectors: bool) -> MemoryItem:
        return MemoryItem(
            id=r["id"], kind=r["kind"], text=r["text"], system=r["system"], conv_id=r["conv_id"],
            embedding=[float(x) for x in r["vector"]] if with_vectors else None,
            sources=list(r["sources"] if r["sources"] is not None else []),
            turn_ids=list(r["turn_ids"] if r["turn_ids"] is not None else []),
            created_step=int(r["created_step"]), updated_step=int(r["valid_from"]),
            timestamp=r["timestamp"] or "", metadata=json.loads(r["metadata"] or "{}"),
        )

    def search_items(self, space: str, conv_id: str, kind: str, query: str, vector: np.ndarray | None,
                     k: int, mode: str = "dense", where: str | None = None) -> list[tuple[MemoryItem, float]]:
        """Top-k current items of one kind by dense, lexical or hybrid search."""
        name = f"mem_{kind}"
        if name not in self._tables and name not in self.table_names():
            return []
        filt = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND valid_to = {INF_STEP}"
        if where:
            filt += f" AND ({where})"
        return [(self._row_item(r, True), s) for r, s in self._search(name, filt, query, vector, k, mode)]

    # ------------------------------------------------------------ provenance
    def sources_of(self, space: str, conv_id: str, item_id: str) -> list[str]:
        """Direct sources (turn ids or item ids) of an item: walking down."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND item_id = {sql_str(item_id)}"
        return list(dict.fromkeys(self._df("links", where=where, columns=["source_id"])["source_id"]))

    def derived_from(self, space: str, conv_id: str, source_id: str) -> list[str]:
        """Items built directly from a turn or item: walking up."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND source_id = {sql_str(source_id)}"
        return list(dict.fromkeys(self._df("links", where=where, columns=["item_id"])["item_id"]))

    # ---------------------------------------------------------------- events
    def events(self, space: str, conv_id: str, upto: int | None = None) -> list[Event]:
        """Ingest events in order (optionally up to a step)."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        if upto is not None:
            where += f" AND step <= {int(upto)}"
        df = self._df("events", where=where)
        if df.empty:
            return []
        df = df.sort_values(["step", "seq"], kind="stable")
        return [Event(step=int(r["step"]), kind=r["kind"], item_ids=list(r["item_ids"]), reason=r["reason"],
                      system=r["system"], conv_id=r["conv_id"], turn_id=r["turn_id"], item_kind=r["item_kind"],
                      data=json.loads(r["data"] or "{}")) for r in df.to_dict("records")]

    # ---------------------------------------------------------- ledger, runs
    def add_llm_calls(self, records: Sequence) -> None:
        """Persist usage-ledger records."""
        if records:
            self.table("llm_calls").add([r.to_dict() for r in records])

    def llm_calls(self, where: str | None = None) -> pd.DataFrame:
        """Persisted LLM calls (optionally filtered by a SQL where clause)."""
        return self._df("llm_calls", where=where)

    def save_results(self, run_id: str, rows: Sequence[dict]) -> None:
        """Upsert per-question results of an evaluation run (keyed by run, system, question)."""
        out = [{"key": f"{run_id}|{r['system']}|{r['question_id']}", "run_id": run_id, "system": r["system"],
                "conv_id": r.get("conv_id", ""), "question_id": r["question_id"],
                "payload": json.dumps(r, default=_json_default), "ts": time.time()} for r in rows]
        if out:
            self.table("results").merge_insert("key").when_matched_update_all() \
                .when_not_matched_insert_all().execute(out)

    def result(self, run_id: str, system: str, question_id: str) -> dict | None:
        """One stored per-question result (with its trace), or None."""
        df = self._df("results", where=f"key = {sql_str(f'{run_id}|{system}|{question_id}')}", columns=["payload"])
        return json.loads(df.iloc[0]["payload"]) if len(df) else None

    def results(self, run_id: str) -> list[dict]:
        """Stored per-question results of a run."""
        df = self._df("results", where=f"run_id = {sql_str(run_id)}", columns=["payload"])
        return [json.loads(p) for p in df["payload"]]

    # ---------------------------------------------------------------- search
    def _search(self, name: str, filt: str, query: str, vector: np.ndarray | None, k: int,
                mode: str) -> list[tuple[dict, float]]:
        if mode not in RETRIEVERS:
            raise ValueError(f"retriever must be one of {RETRIEVERS}, not {mode!r}")
        t = self.table(name)
        if mode in ("lexical", "hybrid"):
            self._ensure_fts(name)
        if mode == "dense" or (mode == "hybrid" and not query.strip()):
            q = t.search(np.asarray(vector, dtype=np.float32).tolist()).distance_type("cosine")
            rows = q.where(filt, prefilter=True).limit(k).to_list()
            return [(r, 1.0 - float(r["_distance"])) for r in rows]
        if mode == "lexical":
            rows = t.search(_fts_query(query), query_type="fts").where(filt, prefilter=True).limit(k).to_list()
            return [(r, float(r.get("_score", 0.0))) for r in rows]
        rows = (t.search(query_type="hybrid").vector(np.asarray(vector, dtype=np.float32).tolist())
                .text(_fts_query(query)).distance_type("cosine").where(filt, prefilter=True)
                .rerank(RRFReranker()).limit(k).to_list())
        return [(r, float(r.get("_relevance_score", 0.0))) for r in rows]

    def _ensure_fts(self, name: str) -> None:
        with self._lock:
            if name in self._fts_ready:
                return
            t = self.table(name)
            has = any("text" in (getattr(ix, "columns", None) or []) for ix in t.list_indices())
            if not has:
                t.create_index("text", config=FTS(with_position=False), replace=True)
            self._fts_ready.add(name)

    def optimize(self) -> None:
        """Compact tables after a large ingest (fewer fragments, faster scans)."""
        for name in self.table_names():
            try:
                self.table(name).optimize()
            except Exception:  # noqa: BLE001 - compaction is best effort
                pass


def _fts_query(q: str) -> str:
    """Plain words only: full-text query syntax characters in user text must not break the search."""
    import re

    words = re.findall(r"[A-Za-z0-9]+", q)
    return " ".join(words) or "_"


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, set):
        return sorted(o)
    return str(o)
