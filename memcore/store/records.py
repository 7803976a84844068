"""LanceStore parts that record what happened: events, provenance links, LLM calls, eval results."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from memcore.store.schema import match, sql_in, sql_str
from memcore.store.tables import Tables
from memcore.types import Event


def event_row(space: str, e: Event, seq: int) -> dict:
    """The stored row of an ingest event (`seq`: its place among its batch's events)."""
    return {"space": space, "system": e.system, "conv_id": e.conv_id, "step": int(e.step), "seq": seq,
            "kind": e.kind, "item_kind": e.item_kind, "item_ids": list(e.item_ids), "turn_id": e.turn_id,
            "reason": e.reason, "data": json.dumps(e.data, ensure_ascii=False, default=json_default)}


def events_of_table(tb: Any) -> list[Event]:
    """The Events of stored event rows (a pyarrow Table as `RecordsPart.events_table` gives it, or None: none), in
    the table's order. Read as pyarrow columns, not pandas records: a 10M chat's 126k events take ~1.5-2 CPU s, not
    ~4.5 (to_dict's boxing), which is why a reader that needs only some steps slices first (`EventStream`)."""
    if tb is None or not tb.num_rows:
        return []
    cols = {c: tb.column(c).to_pylist() for c in ("step", "kind", "item_ids", "reason", "system", "conv_id",
                                                   "turn_id", "item_kind", "data")}
    return [Event(step=step, kind=kind, item_ids=list(ids or []), reason=reason, system=system, conv_id=conv,
                  turn_id=turn, item_kind=ikind, data=json.loads(data or "{}"))
            for step, kind, ids, reason, system, conv, turn, ikind, data in zip(*cols.values(), strict=True)]


class EventStream:
    """A memory's stored event rows held as one pyarrow Table in stream order (step, then their order within the
    step), from which the Events of a run of steps are built on demand: a reader that steps through a memory
    (Replay's step diff) holds the whole stream at ~0.15 s of reading on the 10M chat (126k events) and builds
    the few Events of each step it shows, where building every Event took ~2 CPU s on the server's shared GIL."""

    def __init__(self, tb: Any) -> None:
        self.table = tb
        self.steps = (np.zeros(0, dtype=np.int64) if tb is None else
                      tb.column("step").to_numpy().astype(np.int64, copy=False))

    def __len__(self) -> int:
        return len(self.steps)

    def between(self, after: int | None = None, upto: int | None = None) -> list[Event]:
        """The Events of the steps after `after` and up to `upto` (each bound optional), in stream order (two
        binary searches in the step column: the rows are in step order)."""
        lo = 0 if after is None else int(np.searchsorted(self.steps, after, side="right"))
        hi = len(self.steps) if upto is None else int(np.searchsorted(self.steps, upto, side="right"))
        if hi <= lo:
            return []
        return events_of_table(self.table.slice(lo, hi - lo))


class RecordsPart:
    """Events, provenance, usage ledger and per-question results, through the store's Tables."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    # ------------------------------------------------------------ provenance
    def sources_of(self, space: str, conv_id: str, item_id: str) -> list[str]:
        """Direct sources (turn ids or item ids) of an item: walking down."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND item_id = {sql_str(item_id)}"
        return list(dict.fromkeys(self.tables.df("links", where=where, columns=["source_id"])["source_id"]))

    def derived_from(self, space: str, conv_id: str, source_id: str) -> list[str]:
        """Items built directly from a turn or item: walking up."""
        where = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)} AND source_id = {sql_str(source_id)}"
        return list(dict.fromkeys(self.tables.df("links", where=where, columns=["item_id"])["item_id"]))

    # ---------------------------------------------------------------- events
    def events(self, space: str, conv_id: str, upto: int | None = None, after: int | None = None) -> list[Event]:
        """Ingest events in order (optionally those of the steps after `after` and up to `upto`)."""
        return events_of_table(self.events_table(space, conv_id, upto=upto, after=after))

    def events_table(self, space: str | Sequence[str], conv_id: str, upto: int | None = None,
                     after: int | None = None) -> Any:
        """The stored event rows of `events` as a pyarrow Table in the same order (step, then their order within
        the step), their `data` the stored JSON text; None when there are none (a reader that needs only some
        columns, such as Replay's per-step counts, skips building an Event per row). `space` may name several
        memory spaces: one read for all of them (Replay's step of several memories), each one's rows in its order."""
        if not self.tables.has("events"):
            return None
        where = (f"space = {sql_str(space)}" if isinstance(space, str) else f"space IN {sql_in(space)}") + \
            f" AND conv_id = {sql_str(conv_id)}"
        if upto is not None:
            where += f" AND step <= {int(upto)}"
        if after is not None:
            where += f" AND step > {int(after)}"
        tb = self.tables.arrow("events", where=where)
        if not tb.num_rows:
            return None
        return tb.sort_by([("step", "ascending"), ("seq", "ascending")])  # stable (arrow's sort_indices)

    # ---------------------------------------------------------- ledger, runs
    def add_llm_calls(self, records: Sequence) -> None:
        """Persist usage-ledger records."""
        if records:
            self.tables.table("llm_calls").add([r.to_dict() for r in records])
            self.tables.after_write("llm_calls", len(records))

    def rollback_llm_calls(self, space: str, conv_id: str, step: int) -> None:
        """Delete the ledger rows of a killed ingest's lost steps (construction calls after `step`).

        Ledger rows carry system and conversation, not the memory space: the rows removed are this
        system's construction calls on this conversation for steps after `step`, recorded after
        the last checkpoint of any other memory space of the same system and conversation (so
        another configuration's finished or stopped ingest keeps its calls).
        """
        if "llm_calls" not in self.tables.names():
            return
        key = f"{space}|{conv_id}"
        cks = self.tables.df("checkpoints", where=f"conv_id = {sql_str(conv_id)}", columns=["key", "system", "updated"])
        own = cks[cks["key"] == key]
        system = str(own["system"].iloc[0]) if len(own) else space.rsplit("-", 1)[0]
        others = cks[(cks["key"] != key) & (cks["system"] == system)]
        where = (f"system = {sql_str(system)} AND conv_id = {sql_str(conv_id)} AND stage = 'construction' "
                 f"AND step > {int(step)}")
        if len(others):
            where += f" AND ts > {float(others['updated'].max())!r}"
        t = self.tables.table("llm_calls")
        t.checkout_latest()
        t.delete(where)

    def llm_calls(self, *, system: str | None = None, conv_id: str | Sequence[str] | None = None,
                  stage: str | None = None, provider: str | None = None, role: str | None = None,
                  after_step: int | None = None, variant: str | Sequence[str] | None = None,
                  step: int | None = None, texts: bool = True) -> pd.DataFrame:
        """Persisted LLM calls, all of them or those matching every filter given: system, conversation
        (one id or several), stage, provider, role, step > after_step, variant (canonical name(s)) and step;
        `texts=False`: without the prompt and completion columns (a 10M chat's construction calls: 545 MB and
        2 CPU s with them, 0.5 s without)."""
        if conv_id is not None and not isinstance(conv_id, str):
            conv_id = list(conv_id)
        if variant is not None and not isinstance(variant, str):
            variant = list(variant)
        where = match(system=system, conv_id=conv_id, stage=stage, provider=provider, role=role,
                      step__gt=after_step, variant=variant, step=step)
        columns = None if texts else [c for c in self.tables.schema_for("llm_calls").names
                                      if c not in ("prompt", "completion")]
        return self.tables.df("llm_calls", where=where or None, columns=columns)

    def save_results(self, run_id: str, rows: Sequence[dict]) -> None:
        """Upsert per-question results of an evaluation run (keyed by run, variant, question).

        Two processes upserting the same new key at once would both insert it (LanceDB rebases the two
        commits; it does not see the key twice), so each conversation's rows are merged under a short
        store lock of (run, conversation) on the table's latest version: workers on other conversations
        never wait, and a second run of the same conversation (a rerun racing a running one) updates
        the rows the first inserted instead of adding them again.
        """
        held = self.tables.held(f"run|{run_id}")
        if held is not None:
            held.check()  # a run lease that expired and was taken over: write nothing (MemoryBusy)
        # keyed by the result set: the row's canonical variant (its plain system for rows without one); the
        # table's `system` column holds that name too, so results(run_id, systems=[variants]) selects by it
        out = [{"key": f"{run_id}|{_set(r)}|{r['question_id']}", "run_id": run_id, "system": _set(r),
                "conv_id": r.get("conv_id", ""), "question_id": r["question_id"],
                "payload": json.dumps(r, default=json_default), "ts": time.time()} for r in rows]
        by_conv: dict[str, list[dict]] = {}
        for r in out:
            by_conv.setdefault(r["conv_id"], []).append(r)
        for conv_id, group in by_conv.items():
            with self.tables.lock_rows(f"results|{run_id}|{conv_id}"):
                self.tables.fresh("results").merge_insert("key").when_matched_update_all() \
                    .when_not_matched_insert_all().execute(group)
        if out:
            self.tables.after_write("results")

    def results_table(self) -> Any:
        """The results table at its latest version: rows other processes (eval workers, `memcore eval`
        while the app is open) committed since this handle opened it are visible."""
        t = self.tables.table("results")
        try:
            t.checkout_latest()
        except Exception:
            pass
        return t

    def result(self, run_id: str, system: str, question_id: str) -> dict | None:
        """One stored per-question result (with its trace) of a result set (`system`: a canonical variant name,
        a plain system's being its own), or None."""
        self.results_table()
        df = self.tables.df("results", where=f"key = {sql_str(f'{run_id}|{system}|{question_id}')}", columns=["payload"])
        return json.loads(df.iloc[0]["payload"]) if len(df) else None

    def results(self, run_id: str, systems: Sequence[str] | None = None, *, traces: bool = True,
                limit: int | None = None) -> list[dict]:
        """Stored per-question results of a run (including rows other processes wrote since), of some
        result sets only when `systems` (canonical variant names; a plain system is its own) is given; without their traces (read in batches) when traces=False;
        at most `limit` rows."""
        return list(self._result_rows(run_id, systems, traces, limit))

    def result_keys(self, run_id: str) -> set[tuple[str, str]]:
        """The (variant, question_id) pairs stored for a run (a plain system is its own variant)."""
        if not self.tables.has("results"):
            return set()
        df = self.results_table().search().where(match(run_id=run_id)).select(["system", "question_id"]) \
            .limit(None).to_pandas()
        return set(zip(df["system"], df["question_id"], strict=True))

    def _result_rows(self, run_id: str, systems: Sequence[str] | None, traces: bool,
                     limit: int | None) -> Iterator[dict]:
        if not self.tables.has("results"):
            return
        where = match(run_id=run_id, system=None if systems is None else list(systems))
        q = self.results_table().search().where(where).select(["payload"]).limit(limit)
        for batch in q.to_batches(256):
            for payload in batch.column("payload").to_pylist():
                row = json.loads(payload)
                if not traces:
                    row.pop("trace", None)
                yield row


def _set(row: dict) -> str:
    """The result set of a result row: its variant, else (a row without one) its system."""
    return str(row.get("variant") or row["system"])


def json_default(o: Any) -> Any:
    """JSON fallback for numpy values, arrays and sets (anything else as str)."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, set):
        return sorted(o)
    return str(o)
