"""LanceStore parts that write ingest work: commit a batch, checkpoints (rollback: store.py).

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
from collections.abc import Sequence

import pandas as pd

from memcore.store_records import json_default
from memcore.store_schema import EVENT_KEY, INF_STEP, ITEM_KEY, LINK_KEY, sql_in, sql_str
from memcore.types import Event, MemoryItem


class CommitMixin:
    """Ingest writes (needs `table`, `_fresh`, `_df`, `_item_row`, `_event_row`, `_leases`, `_after_write`)."""

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
        held = self._leases.get(f"{space}|{conv_id}")
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
        for kind in sorted(set(by_kind) | set(del_by_kind)):
            self._commit_items(f"mem_{kind}", base, space, by_kind.get(kind, []), del_by_kind.get(kind, {}), ends)
            self._after_write(f"mem_{kind}")
        links = dict.fromkeys((it.id, s, int(it.updated_step)) for it in upserts for s in it.sources)
        self._append_keyed("links", base, LINK_KEY, [
            {"space": space, "conv_id": conv_id, "item_id": i, "source_id": s, "step": st} for i, s, st in links])
        self._append_keyed("events", base, EVENT_KEY, [self._event_row(space, e, i) for i, e in enumerate(events)])
        self.save_checkpoint(space, system, conv_id, step, state, config or {}, done)

    def _commit_items(self, name: str, base: str, space: str, items: list[MemoryItem], deleted: dict[str, int],
                      ends: dict[tuple[str, int], int]) -> None:
        t = self._fresh(name)
        if items:
            have = self._df(name, where=f"{base} AND id IN {sql_in(it.id for it in items)}",
                            columns=["id", "valid_from", "valid_to"])
            stored = {(i, int(f)) for i, f in zip(have["id"], have["valid_from"], strict=True)}
            live_from = {i: int(f) for i, f, to in zip(have["id"], have["valid_from"], have["valid_to"], strict=True)
                         if int(to) == INF_STEP}
            first: dict[str, int] = {}
            for it in items:
                first[it.id] = min(first.get(it.id, INF_STEP), int(it.updated_step))
            by_step: dict[int, list[str]] = {}  # close older current versions at the step of the first new one
            for iid, st in first.items():
                if iid in live_from and live_from[iid] < st:
                    by_step.setdefault(st, []).append(iid)
            for st, ids_at in sorted(by_step.items()):  # valid_from < st: a replay never closes its own row
                t.update(where=f"{base} AND valid_to = {INF_STEP} AND valid_from < {st} AND id IN "
                         f"{sql_in(ids_at)}", values={"valid_to": st})
        by_del: dict[int, list[str]] = {}
        for iid, st in deleted.items():
            by_del.setdefault(st, []).append(iid)
        for st, ids_at in sorted(by_del.items()):
            t.update(where=f"{base} AND valid_to = {INF_STEP} AND id IN {sql_in(ids_at)}", values={"valid_to": st})
        if not items:
            return
        rows = [self._item_row(space, it) for it in items]
        for r in rows:
            r["valid_to"] = ends.get((r["id"], r["valid_from"]), INF_STEP)
        new = [r for r in rows if (r["id"], r["valid_from"]) not in stored]
        again = [r for r in rows if (r["id"], r["valid_from"]) in stored]
        if new:
            t.add(new)
        if again:  # the version is stored: update it while current; a closed version is never reopened
            t.merge_insert(ITEM_KEY).when_matched_update_all(where=f"target.valid_to = {INF_STEP}").execute(again)

    def _append_keyed(self, name: str, base: str, key: list[str], rows: list[dict]) -> None:
        """Append rows, or merge them on `key` when rows of their steps are already stored (a replay)."""
        if not rows:
            return
        t = self._fresh(name)
        steps = [r["step"] for r in rows]
        if t.count_rows(f"{base} AND step >= {min(steps)} AND step <= {max(steps)}") == 0:
            t.add(rows)
        else:
            t.merge_insert(key).when_matched_update_all().when_not_matched_insert_all().execute(rows)
        self._after_write(name)

    def save_checkpoint(self, space: str, system: str, conv_id: str, step: int, state: dict,
                        config: dict, done: bool) -> None:
        """Record that everything up to `step` is committed."""
        row = {"key": f"{space}|{conv_id}", "space": space, "system": system, "conv_id": conv_id,
               "step": int(step), "done": bool(done), "state": json.dumps(state, default=json_default),
               "config": json.dumps(config, default=str), "updated": time.time()}
        self._fresh("checkpoints").merge_insert("key").when_matched_update_all() \
            .when_not_matched_insert_all().execute([row])

    def checkpoint(self, space: str, conv_id: str) -> dict | None:
        """The last checkpoint {step, done, state, config} of an ingest, or None."""
        df = self._df("checkpoints", where=f"key = {sql_str(space + '|' + conv_id)}")
        if df.empty:
            return None
        r = df.sort_values("updated").iloc[-1]  # the newest, should an older store hold several
        return {"step": int(r["step"]), "done": bool(r["done"]), "state": json.loads(r["state"]),
                "config": json.loads(r["config"]), "system": r["system"]}

    def checkpoints(self) -> pd.DataFrame:
        """All ingest checkpoints (one row per memory space and conversation)."""
        return self._df("checkpoints")
