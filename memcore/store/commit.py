"""The store part that writes ingest work: commit a batch, checkpoints (rollback: lance.py).

Commits are idempotent: every row has a key (store_schema.ITEM_KEY, EVENT_KEY, LINK_KEY) and a
batch whose keys may already be stored (a retried commit, a writer that lost its lease) is
merged on them (merge_insert) instead of appended. A first write (the normal case) is a
plain append after one filtered read, so commits cost about what they did before keys.
Writes go to tables checked out at their latest version, so rows other processes committed
are seen.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from memcore.store.items import item_row
from memcore.store.records import event_row, json_default
from memcore.store.schema import EVENT_KEY, INF_STEP, ITEM_KEY, LINK_KEY, sql_in, sql_str
from memcore.store.tables import Tables
from memcore.types import Event, MemoryItem


class CommitPart:
    """Ingest writes and checkpoints, through the store's Tables."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        # (table, scope) -> (lease, last step written): steps after it hold no rows (_append_keyed)
        self._clear_after: dict[tuple[str, str], tuple[Any, int]] = {}

    def commit(self, space: str, system: str, conv_id: str, step: int, upserts: Sequence[MemoryItem],
               deletes: Sequence[tuple[str, str]], events: Sequence[Event], state: dict,
               config: dict | None = None, done: bool = False) -> None:
        """Write one batch of ingest work and then its checkpoint (see module docstring).

        `upserts` may hold several versions of an item (one per step it changed at, in the batch);
        `deletes` are (kind, item_id, step) triples ((kind, item_id) = deleted at `step`). Items carry
        their own step in updated_step.
        Committing the same batch again leaves the same rows. Raises MemoryBusy, writing
        nothing, when this process held the memory's lease and lost it.
        """
        held = self.tables.held(f"{space}|{conv_id}")
        if held is not None:
            held.check()
        base = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        versions: dict[str, list[MemoryItem]] = {}  # an item may change at several steps of one batch
        for it in upserts:
            versions.setdefault(it.id, []).append(it)
        del_step = {d[1]: int(d[2]) if len(d) > 2 else int(step) for d in deletes}
        ends: dict[tuple[str, int], int] = {}  # (id, valid_from) -> valid_to of versions closed in the batch
        for iid, vs in versions.items():
            vs.sort(key=lambda v: int(v.updated_step))
            for a, b in zip(vs, vs[1:], strict=False):
                ends[(iid, int(a.updated_step))] = int(b.updated_step)
            if iid in del_step and del_step[iid] > int(vs[-1].updated_step):
                ends[(iid, int(vs[-1].updated_step))] = del_step[iid]
        by_kind: dict[str, list[MemoryItem]] = {}
        for it in upserts:
            by_kind.setdefault(it.kind, []).append(it)
        del_by_kind: dict[str, dict[str, int]] = {}
        for d in deletes:
            if d[1] not in versions:  # deleted items changed in the batch are closed by `ends`
                del_by_kind.setdefault(d[0], {})[d[1]] = del_step[d[1]]
        # Under this process's lease the tables were checked out at their latest version when it was taken
        # (LanceStore.lease) and no other process writes this memory's rows: no checkout per write.
        get = self.tables.table if held is not None else self.tables.fresh
        for kind in sorted(set(by_kind) | set(del_by_kind)):
            items = by_kind.get(kind, [])
            self._commit_items(get(f"mem_{kind}"), base, space, items, del_by_kind.get(kind, {}), ends)
            self.tables.after_write(f"mem_{kind}", len(items))
        links = dict.fromkeys((it.id, s, int(it.updated_step)) for it in upserts for s in it.sources)
        self._append_keyed("links", base, LINK_KEY, [
            {"space": space, "conv_id": conv_id, "item_id": i, "source_id": s, "step": st} for i, s, st in links],
            get, held)
        self._append_keyed("events", base, EVENT_KEY, [event_row(space, e, i) for i, e in enumerate(events)],
                           get, held)
        self.save_checkpoint(space, system, conv_id, step, state, config or {}, done, table=get("checkpoints"))

    def _commit_items(self, t: Any, base: str, space: str, items: list[MemoryItem], deleted: dict[str, int],
                      ends: dict[tuple[str, int], int]) -> None:
        """Write one kind's versions to table `t` in two LanceDB calls: one read of the stored versions
        of the batch's items, and one write (a plain append when nothing stored changes, else
        one merge that closes the replaced and deleted current versions, updates re-committed ones
        and inserts the new ones)."""
        ids = list(dict.fromkeys([it.id for it in items] + list(deleted)))
        if not ids:
            return
        stored_rows = t.search().where(f"{base} AND id IN {sql_in(ids)}").limit(None).to_arrow().to_pylist()
        stored = {(r["id"], int(r["valid_from"])) for r in stored_rows}
        live = {r["id"]: r for r in stored_rows if int(r["valid_to"]) == INF_STEP}
        first: dict[str, int] = {}
        for it in items:
            first[it.id] = min(first.get(it.id, INF_STEP), int(it.updated_step))
        closing: dict[str, int] = {}  # the current version of an id ends at the step of its first new one
        for iid, st in first.items():
            if iid in live and int(live[iid]["valid_from"]) < st:  # a replay never closes its own row
                closing[iid] = st
        for iid, st in deleted.items():
            if iid in live:
                closing[iid] = st
        closed = [{**live[i], "valid_to": st} for i, st in closing.items()]
        rows = [item_row(space, it, self.tables.dim) for it in items]
        for r in rows:
            r["valid_to"] = ends.get((r["id"], r["valid_from"]), INF_STEP)
        again = [r for r in rows if (r["id"], r["valid_from"]) in stored]
        if not closed and not again:
            if rows:
                t.add(rows)
            return
        # a stored version is updated only while current: a closed version is never reopened
        t.merge_insert(ITEM_KEY).when_matched_update_all(where=f"target.valid_to = {INF_STEP}") \
            .when_not_matched_insert_all().execute(closed + rows)

    def _append_keyed(self, name: str, base: str, key: list[str], rows: list[dict],
                      get: Callable[[str], Any] | None = None, held: Any = None) -> None:
        """Append rows, or merge them on `key` when rows of their steps are already stored (a replay);
        `get` opens the table (default: checked out at its latest version).

        Under a lease (`held`: no other process writes this memory) the first write counts the stored rows
        of its steps and every later step; when there are none, later batches of later steps are appended
        without a count (this process is the only writer of those steps until its lease ends), which
        spares a LanceDB call per table and commit. Any other batch is counted as without a lease.
        """
        if not rows:
            return
        t = (get or self.tables.fresh)(name)
        steps = [r["step"] for r in rows]
        lo, hi = min(steps), max(steps)
        marks = self._clear_after
        mark = marks.get((name, base)) if held is not None else None
        if mark is not None and mark[0] is held and lo > mark[1]:
            t.add(rows)
            marks[(name, base)] = (held, hi)
        elif t.count_rows(f"{base} AND step >= {lo}" + ("" if held is not None else f" AND step <= {hi}")) == 0:
            t.add(rows)
            if held is not None:
                marks[(name, base)] = (held, hi)
        else:
            t.merge_insert(key).when_matched_update_all().when_not_matched_insert_all().execute(rows)
            marks.pop((name, base), None)
        self.tables.after_write(name, len(rows))

    def save_checkpoint(self, space: str, system: str, conv_id: str, step: int, state: dict,
                        config: dict, done: bool, table: Any = None) -> None:
        """Record that everything up to `step` is committed (in `table`, default the checkpoints table
        checked out at its latest version)."""
        row = {"key": f"{space}|{conv_id}", "space": space, "system": system, "conv_id": conv_id,
               "step": int(step), "done": bool(done), "state": json.dumps(state, default=json_default),
               "config": json.dumps(config, default=str), "updated": time.time()}
        (table or self.tables.fresh("checkpoints")).merge_insert("key").when_matched_update_all() \
            .when_not_matched_insert_all().execute([row])

    def checkpoint(self, space: str, conv_id: str) -> dict | None:
        """The last checkpoint {step, done, state, config, system, updated} of an ingest, or None."""
        df = self.tables.df("checkpoints", where=f"key = {sql_str(space + '|' + conv_id)}")
        if df.empty:
            return None
        r = df.sort_values("updated").iloc[-1]  # the newest, should an older store hold several
        return {"step": int(r["step"]), "done": bool(r["done"]), "state": json.loads(r["state"]),
                "config": json.loads(r["config"]), "system": r["system"], "updated": float(r["updated"])}

    def checkpoints(self) -> pd.DataFrame:
        """All ingest checkpoints (one row per memory space and conversation)."""
        return self.tables.df("checkpoints")
