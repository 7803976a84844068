"""LanceStore: every table memcore keeps, on one LanceDB database (local path or any URI).

Memory items are versioned rows: a row is the item's state for valid_from <= step <
valid_to, so the store answers both "what is in memory now" (valid_to = INF_STEP) and
"what was in memory at step t" (replay). Ingest commits a batch of steps, then writes a
checkpoint; resuming rolls back anything written after the last checkpoint, so a killed
ingest never leaves duplicates or loses committed items.

One writer per memory: `lease(space, conv_id)` (memcore.store.lease) serialises ingests of the same
memory across processes, and commits are idempotent besides (commit.py: rows have keys, a
replayed batch never adds rows twice).

LanceStore is composed of parts that share one `Tables` (tables.py: the connection, open tables, scope
indexes, searches, leases held) and use nothing of each other: ItemsPart (items.py), RecordsPart
(records.py), CommitPart (commit.py); conversations, turns and rollback are its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

os.environ.setdefault("LANCE_LOG", "error")

import lancedb

from memcore.errors import StoreError
from memcore.llm.redact import redact
from memcore.serialize import conversation_from_json, conversation_to_json
from memcore.settings import storage_options_from_env, storage_secrets
from memcore.store.commit import CommitPart
from memcore.store.items import ItemsPart
from memcore.store.lease import Lease, lease_mode
from memcore.store.records import RecordsPart
from memcore.store.schema import INF_STEP, match, sql_str
from memcore.store.tables import Tables

__all__ = ["INF_STEP", "LanceStore", "match"]


class LanceStore(CommitPart, ItemsPart, RecordsPart):
    """The memcore store. `dim` is the embedding size; it is fixed when tables are created.

    `uri` is a local path or any LanceDB URI (s3://, gs://, az://...). `storage_options` are LanceDB's
    object-store options (endpoint, region, credentials, allow_http...); None reads them from
    $MEMCORE_STORAGE_OPTIONS (memcore.settings), and LanceDB reads its own AWS_*, GOOGLE_*, AZURE_*
    variables besides. Option values that look secret never appear in the store's messages.
    """

    def __init__(self, uri: str = ".memcore", dim: int = 384,
                 storage_options: dict[str, str] | Sequence[tuple[str, str]] | None = None,
                 read_only: bool = False) -> None:
        """`read_only` (the rule of every command that only reads: compare, diff, doctor): a local store that
        does not exist is a StoreError naming the fix, not a new folder, a table it lacks is not created, and an
        older table is read as it is (columns added since are computed in memory, never written: no migration)."""
        self.uri = uri
        self.dim = dim
        self.read_only = read_only
        opts = dict(storage_options_from_env() if storage_options is None else storage_options)
        if read_only and "://" not in uri and not os.path.isdir(uri):
            raise StoreError(f"no store at {redact(uri)!r} (this command only reads: it creates none). Fix: pass "
                             "--store (or MEMCORE_STORE) naming the store your memories and runs were written to")
        try:
            if "://" not in uri and not read_only:
                os.makedirs(uri, exist_ok=True)
            self.db = lancedb.connect(uri, storage_options=opts or None)
        except Exception as e:
            secrets = storage_secrets(opts)
            raise StoreError(f"cannot open the store at {redact(uri, secrets)!r}: {redact(str(e), secrets)}. Fix: "
                             "choose a writable path or URI with --store or MEMCORE_STORE (a remote store's "
                             "options: $MEMCORE_STORAGE_OPTIONS or the AWS_*/GOOGLE_*/AZURE_* variables)") from None
        self.lease_mode = lease_mode(uri)  # 'file' (local path) or 'row' (remote URI); tests may force 'row'
        self.tables = Tables(self.db, uri, dim, self.lease_mode, read_only=read_only)
        CommitPart.__init__(self, self.tables)
        ItemsPart.__init__(self, self.tables)
        RecordsPart.__init__(self, self.tables)

    def table(self, name: str, schema=None):
        """Open or create a table by name (schema needed only to create it)."""
        return self.tables.table(name, schema)

    def refresh(self) -> None:
        """Point every open table at its latest version (rows other processes committed since)."""
        self.tables.refresh()

    # ---------------------------------------------------------------- leases
    @contextmanager
    def lease(self, space: str, conv_id: str, what: str = "", *, wait: bool = True, timeout: float | None = None,
              mode: str | None = None, ttl: float | None = None) -> Iterator[Lease]:
        """Hold the exclusive write lease of one memory (space, conversation) for a `with` block.

        Raises MemoryBusy when another process holds it: at once with wait=False, else after
        `timeout` seconds (default MEMCORE_LEASE_WAIT_S, see memcore.store.lease). Once acquired, open
        tables are refreshed (the previous holder's rows are seen); while held, `commit` of this
        memory raises MemoryBusy if the lease was lost (a remote lease that expired).
        """
        with self.tables.holding(Lease(self.uri, f"{space}|{conv_id}", what or f"memory {space}/{conv_id}", db=self.db,
                              wait=wait, timeout=timeout, mode=mode or self.lease_mode, ttl=ttl)) as lease:
            yield lease

    @contextmanager
    def run_lease(self, run_id: str, *, wait: bool = True, timeout: float | None = None) -> Iterator[Lease]:
        """Hold the exclusive lease of one evaluation run (key `run|<run_id>`) for a `with` block: one process
        answers a run's questions at a time (MemoryBusy as for `lease`); while held, `save_results` of the
        run raises MemoryBusy if the lease was lost (a remote lease that expired)."""
        with self.tables.holding(Lease(self.uri, f"run|{run_id}", f"eval run {run_id}", db=self.db, wait=wait,
                              timeout=timeout, mode=self.lease_mode, activity="being evaluated")) as lease:
            yield lease

    def index_scopes(self) -> list[tuple[str, str, int]]:
        """Build or rebuild every table's scope index now, whatever its size (e.g. after a bulk import);
        returns (table, column, rows) of the indexes built by this store handle so far."""
        return self.tables.index_all()

    def table_names(self) -> list[str]:
        """Names of the tables that exist (without the internal search snapshots)."""
        return self.tables.names()

    def rows(self, name: str, schema=None, *, columns: list[str] | None = None,
             **where: Any) -> pd.DataFrame:
        """Rows of a table whose columns match `where` (memcore.store.schema.match: `task_id="t"`,
        `system=["a", "b"]`, `step__gt=3`), all rows without conditions. A table with a `schema` is
        created when missing (a plugin's own table); a known table that does not exist yet reads empty."""
        if schema is not None:
            self.table(name, schema)
        return self.tables.df(name, where=match(**where) or None, columns=columns)

    # --------------------------------------------------------- conversations
    def save_conversation(self, conv, extend: bool = False) -> None:
        """Store a conversation (turns and questions) so the app can list and reload it.

        A stored conversation of the same id may change its questions, never its turns: StoreError (the
        memories and results of that id were built from the stored turns). `extend=True` (a live conversation,
        memcore.live) also accepts new turns after the stored ones, never a change to those."""
        row = {"conv_id": conv.id, "source": conv.source, "n_turns": len(conv.turns),
               "n_questions": len(conv.questions), "speakers": json.dumps(conv.speakers),
               "payload": conversation_to_json(conv)}
        where = f"conv_id = {sql_str(conv.id)}"

        def stored() -> list[dict]:
            self.tables.fresh("conversations")
            return self.tables.df("conversations", where=where).to_dict("records")

        if stored() == [row]:  # unchanged (Workbench.load, then ingest): no write
            return
        with self.tables.lock_rows(f"conversations|{conv.id}"):  # two processes must not both insert it
            have = stored()
            if have == [row]:
                return
            if have:
                self.check_turns(conv, have[0]["payload"], prefix=extend)
            t = self.table("conversations")
            if len(have) > 1:  # duplicates from an older memcore: keep one
                t.delete(where)
                t.add([row])
            else:
                t.merge_insert("conv_id").when_matched_update_all().when_not_matched_insert_all().execute([row])

    def check_turns(self, conv, payload: str | None = None, prefix: bool = False) -> None:
        """StoreError when the store holds conversation `conv.id` with other turns (its memories were built from
        those, so they must not answer for `conv`); `payload` is the stored row's, read when None. `prefix=True`:
        the stored turns need only begin `conv.turns` (a live conversation that grew)."""
        if payload is None:
            df = self.tables.df("conversations", where=f"conv_id = {sql_str(conv.id)}", columns=["payload"])
            if df.empty:
                return
            payload = df["payload"].iloc[0]
        stored = conversation_from_json(payload).turns
        if (conv.turns[:len(stored)] if prefix else conv.turns) != stored:
            raise StoreError(f"conversation {conv.id!r} is already in {redact(self.uri)} with other turns, and "
                             "memories built from those would answer for this one. Fix: load it into another "
                             "store (--store or MEMCORE_STORE), or give it its own id in the file")

    def conversations(self) -> pd.DataFrame:
        """One row per stored conversation: conv_id, source, n_turns, n_questions."""
        df = self.tables.df("conversations", columns=["conv_id", "source", "n_turns", "n_questions"])
        return df.drop_duplicates("conv_id", ignore_index=True)

    def conversations_version(self) -> int:
        """The conversations table's latest version (0 before it exists), read afresh: every write of a conversation
        (a load, a live turn, new questions), by this process or another, gives a new one. A cache of parsed
        conversations keyed by it (the app's: ui.state.conversation) never serves a replaced one."""
        if not self.tables.has("conversations"):
            return 0
        return int(self.tables.fresh("conversations").version)

    def load_conversation(self, conv_id: str):
        """A stored conversation, or StoreError naming the ones that exist."""
        df = self.tables.df("conversations", where=f"conv_id = {sql_str(conv_id)}")
        if df.empty:
            have = ", ".join(self.conversations()["conv_id"]) or "none"
            raise StoreError(f"no conversation {conv_id!r} in {redact(self.uri)} (have: {have}). Fix: load it first")
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
            with self.tables.lock_rows(f"turns|{rows[0]['conv_id']}"):  # merge on a fresh table, one process at a time
                t = self.tables.fresh("turns")
                if t.count_rows(f"conv_id = {sql_str(rows[0]['conv_id'])}") == 0:
                    t.add(rows)  # a new conversation (the normal case): nothing to merge with
                else:
                    t.merge_insert("uid").when_matched_update_all().when_not_matched_insert_all().execute(rows)
            self.tables.after_write("turns")

    def drop_turns_from(self, conv_id: str, index: int) -> None:
        """Delete the stored turn rows of a conversation from position `index` on (a live append killed after
        writing its turn row and before its conversation row leaves one; the append that follows redoes it)."""
        if "turns" in self.table_names():
            with self.tables.lock_rows(f"turns|{conv_id}"):
                self.tables.fresh("turns").delete(f"conv_id = {sql_str(conv_id)} AND idx >= {int(index)}")
            self.tables.after_write("turns")

    def turn_matrix(self, conv_id: str) -> tuple[list[str], np.ndarray]:
        """Turn ids in conversation order and their embedding matrix."""
        df = self.tables.df("turns", where=f"conv_id = {sql_str(conv_id)}", columns=["turn_id", "idx", "vector"])
        df = df.sort_values("idx")
        mat = np.stack(df["vector"].to_numpy()).astype(np.float32) if len(df) else np.zeros((0, self.dim))
        return df["turn_id"].tolist(), mat

    def search_turns(self, conv_id: str, query: str, vector: np.ndarray | None, k: int,
                     retriever: str = "dense") -> list[tuple[dict, float]]:
        """Top-k turns of one conversation by a registered retriever (memcore.retrievers: dense cosine,
        lexical BM25, hybrid RRF, ...). Lexical and hybrid scores depend only on this conversation's
        turns (see memcore.store.search)."""
        return self.tables.search("turns", f"conv_id = {sql_str(conv_id)}", query, vector, k, retriever)

    # ---------------------------------------------------------------- memory
    def rollback(self, space: str, conv_id: str, step: int) -> None:
        """Undo everything written for steps after `step` (a killed ingest's partial batch)."""
        base = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        existing = set(self.table_names())
        for name in existing:
            if not name.startswith("mem_"):
                continue
            t = self.tables.fresh(name)
            t.delete(f"{base} AND valid_from > {int(step)}")
            t.update(where=f"{base} AND valid_to > {int(step)} AND valid_to < {INF_STEP}",
                     values={"valid_to": INF_STEP})
        for name in ("events", "links"):
            if name in existing:
                self.tables.fresh(name).delete(f"{base} AND step > {int(step)}")
        self.rollback_llm_calls(space, conv_id, step)

    def optimize(self, min_fragments: int = 0) -> dict[str, str]:
        """Compact tables after a large ingest (fewer fragments, faster scans); table -> "" when
        compacted, else the error (a table that cannot be compacted now stays as it was). With `min_fragments`,
        only the tables holding at least that many small fragments (a build commits every 50 turns: on the 10M
        chat 428 fragments a table, and reading a memory's item versions took 0.4-1.1 s instead of 0.1).

        Safe beside other writers: old versions are kept (readers on them go on), and a compaction that meets
        another process's commit loses (Lance's conflict resolution; measured: 0 of 150 writers' update rounds
        failed beside 60 compactions, 38 of which were preempted), so only the compaction is left undone."""
        out: dict[str, str] = {}
        for name in self.table_names():
            try:
                try:
                    t = self.tables.fresh(name)
                except StoreError:  # a table memcore has no schema for (a plugin's): opened as it is
                    t = self.tables.db.open_table(name)
                if min_fragments and t.stats()["fragment_stats"]["num_small_fragments"] < min_fragments:
                    continue
                t.optimize()
                out[name] = ""
            except Exception as e:
                out[name] = f"{type(e).__name__}: {e}"
        return out

