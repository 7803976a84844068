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
    """Ingest writes (needs `table`, `_fresh`, `_df`, `_item_row`, `_event_row`, `_leases`)."""

    def commit(self, space: str, system: str, conv_id: str, step: int, upserts: Sequence[MemoryItem],
               deletes: Sequence[tuple[str, str]], events: Sequence[Event], state: dict,
               config: dict | None = None, done: bool = False) -> None:
        """Write one batch of ingest work and then its checkpoint (see module docstring).

        `deletes` are (kind, item_id) pairs. Items carry their own step in updated_step.
        Committing the same batch again leaves the same rows. Raises MemoryBusy, writing
        nothing, when this process held the memory's lease and lost it.
        """
        held = self._leases.get(f"{space}|{conv_id}")
        if held is not None:
            held.check()
        base = f"space = {sql_str(space)} AND conv_id = {sql_str(conv_id)}"
        by_kind: dict[str, list[MemoryItem]] = {}
        for it in upserts:
            by_kind.setdefault(it.kind, []).append(it)
        del_by_kind: dict[str, list[str]] = {}
        for kind, iid in deletes:
            del_by_kind.setdefault(kind, []).append(iid)
        up_ids = {it.id for it in upserts}
        for kind in sorted(set(by_kind) | set(del_by_kind)):
            self._commit_items(f"mem_{kind}", base, space, step, by_kind.get(kind, []),
                               [i for i in del_by_kind.get(kind, []) if i not in up_ids])
        links = dict.fromkeys((it.id, s, int(it.updated_step)) for it in upserts for s in it.sources)
        self._append_keyed("links", base, LINK_KEY, [
            {"space": space, "conv_id": conv_id, "item_id": i, "source_id": s, "step": st} for i, s, st in links])
        self._append_keyed("events", base, EVENT_KEY, [self._event_row(space, e, i) for i, e in enumerate(events)])
        self.save_checkpoint(space, system, conv_id, step, state, config or {}, done)

    def _commit_items(self, name: str, base: str, space: str, step: int, items: list[MemoryItem],
                      deleted: list[str]) -> None:
        t = self._fresh(name)
        if items:
            have = self._df(name, where=f"{base} AND id IN {sql_in(it.id for it in items)}",
                            columns=["id", "valid_from", "valid_to"])
            stored = {(i, int(f)) for i, f in zip(have["id"], have["valid_from"], strict=True)}
            live_from = {i: int(f) for i, f, to in zip(have["id"], have["valid_from"], have["valid_to"], strict=True)
                         if int(to) == INF_STEP}
            by_step: dict[int, list[str]] = {}  # close older current versions at the step of the new one
            for it in items:
                if it.id in live_from and live_from[it.id] < int(it.updated_step):
                    by_step.setdefault(int(it.updated_step), []).append(it.id)
            for st, ids_at in sorted(by_step.items()):  # valid_from < st: a replay never closes its own row
                t.update(where=f"{base} AND valid_to = {INF_STEP} AND valid_from < {st} AND id IN "
                         f"{sql_in(ids_at)}", values={"valid_to": st})
        if deleted:
            t.update(where=f"{base} AND valid_to = {INF_STEP} AND id IN {sql_in(deleted)}",
                     values={"valid_to": int(step)})
        if not items:
            return
        rows = [self._item_row(space, it) for it in items]
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
