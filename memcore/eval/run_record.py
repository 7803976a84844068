"""Run records: one row per evaluation run in the store, with its status, progress and heartbeat.

`run_eval` keeps its run's record up to date (a background thread writes progress and a heartbeat),
so any process reading the same store (the app's Benchmark page, on this machine or another) lists
the runs, sees which is still running and how far it got, and assembles its results so far from the
stored rows. A run whose process died keeps status "running" with an old heartbeat: it shows as
"lost" after STALE_AFTER seconds, and rerunning the same command resumes it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from typing import Any

import pyarrow as pa

from memcore.eval.runs import assemble
from memcore.types import Conversation, Question

log = logging.getLogger(__name__)
TABLE = "eval_runs"
SCHEMA = pa.schema([
    pa.field("run_id", pa.string()), pa.field("status", pa.string()), pa.field("done", pa.int64()),
    pa.field("total", pa.int64()), pa.field("engine", pa.string()), pa.field("dataset", pa.string()),
    pa.field("systems", pa.string()), pa.field("started", pa.float64()), pa.field("heartbeat", pa.float64()),
    pa.field("finished", pa.float64()), pa.field("host", pa.string()), pa.field("pid", pa.int64()),
    pa.field("message", pa.string()), pa.field("payload", pa.string()),
])
RUNNING, DONE, STOPPED, INCOMPLETE, FAILED, LOST = "running", "done", "stopped", "incomplete", "failed", "lost"
STALE_AFTER = 120.0  # seconds without a heartbeat before a "running" record counts as lost
WRITE_EVERY, HEARTBEAT_EVERY = 3.0, 30.0


def save_run(store: Any, record: dict) -> None:
    """Insert or update a run record (keyed by run id)."""
    row = {f.name: record.get(f.name) for f in SCHEMA}
    row["systems"] = record["systems"] if isinstance(record.get("systems"), str) else json.dumps(record.get("systems"))
    row["payload"] = record["payload"] if isinstance(record.get("payload"), str) else json.dumps(
        record.get("payload") or {}, default=str)
    t = store.table(TABLE, SCHEMA)
    t.merge_insert("run_id").when_matched_update_all().when_not_matched_insert_all().execute([row])


def list_runs(store: Any, now: float | None = None) -> list[dict]:
    """Every run record in the store, newest first, each with `state` (status, or "lost" for a running
    record without a recent heartbeat) and `systems` / `payload` decoded. Reads the latest version."""
    if TABLE not in store.table_names():
        return []
    t = store.table(TABLE, SCHEMA)
    try:
        t.checkout_latest()
    except Exception:
        pass
    now = time.time() if now is None else now
    out = []
    for rec in store.rows(TABLE, SCHEMA).to_dict("records"):
        rec["systems"] = json.loads(rec["systems"] or "[]")
        rec["payload"] = json.loads(rec["payload"] or "{}")
        rec["state"] = run_state(rec, now)
        out.append(rec)
    return sorted(out, key=lambda r: -float(r["started"] or 0))


def get_run(store: Any, run_id: str) -> dict | None:
    """One run record (latest version), or None."""
    return next((r for r in list_runs(store) if r["run_id"] == run_id), None)


def run_state(rec: dict, now: float) -> str:
    """The record's status, except a "running" one whose heartbeat is older than STALE_AFTER: "lost"."""
    if rec["status"] == RUNNING and now - float(rec["heartbeat"] or 0) > STALE_AFTER:
        return LOST
    return str(rec["status"])


def results_so_far(store: Any, rec: dict) -> dict[str, Any]:
    """The results dict of a recorded run from the rows stored so far (as `run_eval` assembles it)."""
    p = rec["payload"]
    selected = {cid: [Question(id=qid, conv_id=cid, text="", answer="", category=cat) for qid, cat in qs]
                for cid, qs in p["selected"].items()}
    convs = [Conversation(id=cid, speakers=[], turns=[]) for cid in p["selected"]]
    res = assemble(store, rec["run_id"], convs, selected, list(rec["systems"]), p["meta"], p["judge"],
                   p["fingerprint"], p["path"], p["dataset"])
    res.update(created=rec["started"], status=rec["state"] if "state" in rec else rec["status"])
    if p.get("limits"):  # known when the run started (questions that did not fit: in the finished results)
        res["limits"] = p["limits"]
    return res


class RunRecorder:
    """Keeps one run's record current: progress and a heartbeat from a background thread, then the end.

        with RunRecorder(store, record) as rec:   # writes status "running"
            rec.done = 12                         # written within WRITE_EVERY seconds
            rec.finish("done")                    # or an exception: status "failed"
    """

    def __init__(self, store: Any, record: dict) -> None:
        self.store, self.done, self.message = store, int(record.get("done") or 0), ""
        now = time.time()
        self.record = {**record, "status": RUNNING, "started": now, "heartbeat": now, "finished": 0.0,
                       "host": socket.gethostname(), "pid": os.getpid(), "message": ""}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="memcore-run-record", daemon=True)
        self._written = (-1, 0.0)
        self.failed_write = False

    def __enter__(self) -> RunRecorder:
        self._write()
        self._thread.start()
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if self.record["status"] == RUNNING:
            if exc is None:
                self.finish(DONE)
            else:
                self.finish(STOPPED if isinstance(exc, KeyboardInterrupt) else FAILED,
                            f"{type(exc).__name__}: {exc}")

    def finish(self, status: str, message: str = "") -> None:
        """Stop the heartbeat and write the final status (done, stopped, incomplete or failed)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.record.update(status=status, finished=time.time(), message=message[:500])
        self._write()

    def _write(self) -> None:
        now = time.time()
        self.record.update(done=self.done, heartbeat=now)
        try:
            save_run(self.store, self.record)
            self._written = (self.done, now)
        except Exception as e:
            if not self.failed_write:
                log.warning("cannot write the record of run %s (the run goes on; the app will not see its "
                            "progress): %s: %s", self.record.get("run_id"), type(e).__name__, e)
            self.failed_write = True

    def _beat(self) -> None:
        while not self._stop.wait(WRITE_EVERY):
            done, at = self._written
            if self.done != done or time.time() - at >= HEARTBEAT_EVERY:
                self._write()


def selection_payload(selected: dict[str, list[Question]]) -> dict[str, list[list]]:
    """The selected questions of a run as {conv_id: [[question_id, category], ...]} (for its record)."""
    return {cid: [[q.id, q.category] for q in qs] for cid, qs in selected.items()}
