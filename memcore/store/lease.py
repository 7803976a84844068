"""Write leases: at most one process builds a memory (space, conversation) at a time.

Two ingests of the same memory into one store would otherwise both build it and write
every item, event and link twice. `Lease` is the lock both take first:

- local stores (a path): an OS file lock, `<store>/locks/<key>.lock` (`filelock`: flock on
  POSIX), released by the OS when the holder dies. The holder notes who it is (pid, host,
  since) in `<key>.holder` beside it, for the busy message.
- remote stores (a URI with `://`, or `mode="row"`): a row of the store's `leases` table
  (key, holder token, pid, host, since, expires_at). Acquiring is one conditional
  merge_insert (insert when absent, take over only when `target.expires_at < now`), then
  a read of the table as of that commit's version: of two claims committed at once the
  earlier version wins and the later withdraws. A thread renews the row every ttl/3; a
  holder that stops renewing (killed, hung, partitioned) loses it after `ttl` seconds. A
  holder whose row was taken over is `lost`: `LanceStore.commit` then writes nothing and
  raises MemoryBusy. Expiry compares the hosts' wall clocks: keep them roughly in sync.

Defaults: wait for a busy memory up to `MEMCORE_LEASE_WAIT_S` seconds (3600), then fail
with MemoryBusy; `wait=False` fails at once. Row leases live `MEMCORE_LEASE_TTL_S` (60 s).

Waiting is never silent: while it waits, a Lease reports one line (whose lease, since when, how long it has
waited and will wait, and for a row lease when it lapses unless renewed) at once and every
`MEMCORE_LEASE_REPORT_S` seconds (10) to its `on_wait` callback, by default the process's wait reporter
(`set_wait_reporter`; standard error unless a UI sets its own).

The same lease guards an evaluation run (`run|<run_id>`, memcore.eval.runner): one writer per run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from memcore.errors import MemoryBusy
from memcore.store.leases import LEASES_TABLE, FileBackend, Holder, RowBackend, new_holder, safe_name

__all__ = ["LEASES_TABLE", "Holder", "Lease", "lease_mode", "safe_name", "set_wait_reporter"]

DEFAULT_WAIT_S = 3600.0
DEFAULT_TTL_S = 60.0
DEFAULT_REPORT_S = 10.0
WaitReporter = Callable[[str], None]


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


_reporter: list[WaitReporter] = [_stderr_line]


def set_wait_reporter(report: WaitReporter) -> WaitReporter:
    """Make `report(line)` receive every waiting line of this process's leases; returns the previous reporter."""
    old, _reporter[0] = _reporter[0], report
    return old


def _env_s(name: str, default: float) -> float:
    return float(os.environ.get(name) or default)


def lease_mode(uri: str) -> str:
    """'file' for a local store path, 'row' for a remote URI."""
    return "row" if "://" in str(uri) else "file"


class Lease:
    """An exclusive write lease on `key` in the store at `uri` (a context manager).

    `what` names the thing for messages ("memory xmemory/conv-26"), `activity` what its holder does
    ("being built"). `wait=False` raises MemoryBusy at once when another process holds it; `wait=True`
    polls until it is free or `timeout` seconds (default MEMCORE_LEASE_WAIT_S) pass, then raises
    MemoryBusy, reporting a line to `on_wait` (default: the process's wait reporter) at once and every
    `report_every` seconds (MEMCORE_LEASE_REPORT_S) meanwhile. `mode` forces 'file' or 'row' (default: by
    URI); `db` (a LanceDB connection) is needed for rows.
    """

    def __init__(self, uri: str, key: str, what: str, *, db: Any = None, wait: bool = True,
                 timeout: float | None = None, mode: str | None = None, ttl: float | None = None,
                 poll: float | None = None, renew: bool = True, activity: str = "being built",
                 on_wait: WaitReporter | None = None, report_every: float | None = None) -> None:
        self.uri, self.key, self.what, self.wait = str(uri), key, what, wait
        self.activity, self._on_wait = activity, on_wait
        self.report_every = (_env_s("MEMCORE_LEASE_REPORT_S", DEFAULT_REPORT_S) if report_every is None
                             else float(report_every))
        self.timeout = _env_s("MEMCORE_LEASE_WAIT_S", DEFAULT_WAIT_S) if timeout is None else float(timeout)
        self.mode = mode or lease_mode(self.uri)
        self.ttl = _env_s("MEMCORE_LEASE_TTL_S", DEFAULT_TTL_S) if ttl is None else float(ttl)
        self.poll = poll if poll is not None else (0.1 if self.mode == "file" else min(1.0, self.ttl / 4))
        self._renew_enabled = renew
        self.held = False
        self._lost: Holder | None | bool = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.mode == "file":
            self._backend: Any = FileBackend(self.uri, key)
        elif self.mode == "row":
            if db is None:
                import lancedb

                db = lancedb.connect(self.uri)
            self._backend = RowBackend(db, key, self.ttl)
        else:
            raise ValueError(f"lease mode must be 'file' or 'row', not {self.mode!r}")

    # ------------------------------------------------------------- acquire
    def acquire(self) -> Lease:
        """Take the lease (waiting as configured) or raise MemoryBusy."""
        me = new_holder(uuid.uuid4().hex)
        start = time.monotonic()
        next_report = start
        while True:
            if self._backend.try_acquire(me):
                break
            waited = time.monotonic() - start
            if not self.wait or waited >= self.timeout:
                raise self._busy(waited if self.wait else None)
            if time.monotonic() >= next_report:
                (self._on_wait or _reporter[0])(self.waiting_line(waited))
                next_report = time.monotonic() + self.report_every
            time.sleep(min(self.poll, max(0.0, self.timeout - waited)))
        self.held, self._lost = True, False
        if self.mode == "row" and self._renew_enabled:
            self._stop.clear()
            self._thread = threading.Thread(target=self._renew_loop, name=f"lease-{self.key}", daemon=True)
            self._thread.start()
        return self

    def waiting_line(self, waited: float) -> str:
        """One line while waiting: whose lease, since when, how long waited and still to wait, when it lapses."""
        h = self._backend.holder() or Holder()
        line = (f"waiting: {self.what} is {self.activity} by another process ({h.describe()}) since "
                f"{h.since_text()}; waited {waited:.0f} s, will wait up to {max(0.0, self.timeout - waited):.0f} s "
                "more (MEMCORE_LEASE_WAIT_S; --no-wait fails at once)")
        if h.expires:
            left = h.expires - time.time()
            line += (f"; its lease lapses in {max(0.0, left):.0f} s unless renewed (a stopped or killed holder's "
                     "lease is taken over then)")
        return line

    def _busy(self, waited: float | None) -> MemoryBusy:
        h = self._backend.holder() or Holder()
        who = f"{self.what} is {self.activity} by another process ({h.describe()}) since {h.since_text()}"
        if waited is None:
            err = MemoryBusy(f"{who}; wait for it or rerun with --wait")
        else:
            err = MemoryBusy(f"{who}; gave up after waiting {waited:.0f} s (MEMCORE_LEASE_WAIT_S); "
                             "rerun when it is done, or wait longer")
        err.holder = h  # type: ignore[attr-defined]
        return err

    # --------------------------------------------------------------- renew
    def _renew_loop(self) -> None:
        every = max(0.05, self.ttl / 3)
        deadline = time.time() + self.ttl
        while not self._stop.wait(every):
            try:
                if not self._backend.renew():
                    self._lost = self._backend.holder() or True
                    return
                deadline = time.time() + self.ttl
            except Exception:
                if time.time() > deadline:
                    self._lost = True
                    return

    def renew_now(self) -> bool:
        """Renew once (tests; the background thread does this every ttl/3). False when lost."""
        ok = self._backend.renew()
        if not ok:
            self._lost = self._backend.holder() or True
        return ok

    @property
    def lost(self) -> bool:
        """Whether a held lease expired and another process took it over (or its row vanished)."""
        return bool(self._lost)

    def check(self) -> None:
        """Raise MemoryBusy when the lease was lost (called before each store commit)."""
        if not self._lost:
            return
        h = self._lost if isinstance(self._lost, Holder) else Holder()
        raise MemoryBusy(f"lost the write lease of {self.what} (it expired; now held by {h.describe()}): "
                         "stopped before writing; rerun to resume once the other process is done")

    # ------------------------------------------------------------- release
    def release(self) -> None:
        """Give the lease back (idempotent)."""
        if not self.held:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.held = False
        try:
            self._backend.release()
        except Exception:
            pass

    def __enter__(self) -> Lease:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
