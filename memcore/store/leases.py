"""The two lease backends behind memcore.store.lease.Lease: an OS file lock (local stores) and a lease row with
expiry in the store's `leases` table (remote stores); see memcore.store.lease for the protocol."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcore.store.schema import SCHEMAS, match

LEASES_TABLE = "leases"


def safe_name(key: str) -> str:
    """A file name for a lease key: readable part plus a hash (distinct keys never collide)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", key).strip("._")[:80] or "lease"
    return f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


@dataclass
class Holder:
    """Who holds a lease (as far as the holder told)."""

    pid: int = 0
    host: str = "?"
    since: float = 0.0
    token: str = ""
    expires: float = 0.0  # a row lease: when it lapses unless renewed (0: a file lock, held until released)

    def describe(self) -> str:
        """'pid 123, host box' or 'pid unknown'."""
        return f"pid {self.pid or 'unknown'}, host {self.host}"

    def since_text(self) -> str:
        """The acquire time as local ISO time."""
        if not self.since:
            return "an unknown time"
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))


def new_holder(token: str) -> Holder:
    """This process as the holder of a lease claim identified by `token`."""
    return Holder(pid=os.getpid(), host=socket.gethostname(), since=time.time(), token=token)


class FileBackend:
    """An OS file lock under <store>/locks."""

    def __init__(self, root: str, key: str) -> None:
        from filelock import FileLock

        d = Path(root) / "locks"
        d.mkdir(parents=True, exist_ok=True)
        name = safe_name(key)
        self.info = d / f"{name}.holder"
        self.lock = FileLock(str(d / f"{name}.lock"), thread_local=False)

    def try_acquire(self, me: Holder) -> bool:
        from filelock import Timeout

        try:
            self.lock.acquire(blocking=False)
        except Timeout:
            return False
        me.since = time.time()
        try:
            tmp = self.info.with_suffix(f".{me.token}.tmp")
            tmp.write_text(json.dumps(me.__dict__))
            os.replace(tmp, self.info)
        except BaseException:
            self.lock.release(force=True)
            raise
        return True

    def holder(self) -> Holder | None:
        try:
            h = Holder(**json.loads(self.info.read_text()))
        except (OSError, ValueError, TypeError):
            return None
        if h.host == socket.gethostname() and h.pid and not _alive(h.pid):
            return None  # a dead holder's note: the live one has not written its own yet
        return h

    def renew(self) -> bool:
        return True  # held until released or the process dies

    def release(self) -> None:
        try:
            self.info.unlink(missing_ok=True)  # before unlocking: the next holder writes its own
        finally:
            self.lock.release(force=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class RowBackend:
    """A lease row with expiry in the store's `leases` table (works on any LanceDB URI)."""

    def __init__(self, db: Any, key: str, ttl: float) -> None:
        self.db, self.key, self.ttl = db, key, ttl
        self.where = match(key=key)
        self._match = match
        try:
            self.t = db.open_table(LEASES_TABLE)
        except Exception:
            try:
                self.t = db.create_table(LEASES_TABLE, schema=SCHEMAS[LEASES_TABLE], exist_ok=True)
            except Exception:
                self.t = db.open_table(LEASES_TABLE)
        self.token = ""

    def _rows(self, version: int | None = None) -> list[dict]:
        t = self.t
        if version is None:
            t.checkout_latest()
        else:  # the table exactly as of one commit (a separate handle: this one keeps tracking latest)
            t = self.db.open_table(LEASES_TABLE)
            t.checkout(version)
        return t.search().where(self.where).limit(None).to_pandas().to_dict("records")

    def _others_live(self, rows: list[dict], now: float) -> list[dict]:
        return sorted((r for r in rows if r["holder"] != self.token and r["expires_at"] > now),
                      key=lambda r: r["since"])

    def holder(self) -> Holder | None:
        live = self._others_live(self._rows(), time.time())
        if not live:
            return None
        r = live[0]
        return Holder(pid=int(r["pid"]), host=r["host"], since=float(r["since"]), token=r["holder"],
                      expires=float(r["expires_at"]))

    def try_acquire(self, me: Holder) -> bool:
        self.token = me.token
        now = time.time()
        if self._others_live(self._rows(), now):
            return False
        row = {"key": self.key, "holder": me.token, "pid": me.pid, "host": me.host, "since": now,
               "expires_at": now + self.ttl}
        expired = self._match(**{"target.expires_at__lt": round(now, 6)})  # a lapsed row is taken over
        try:
            res = self.t.merge_insert("key").when_matched_update_all(where=expired) \
                .when_not_matched_insert_all().execute([row])
            rows = self._rows(res.version)
        except Exception:
            return False
        if not any(r["holder"] == me.token for r in rows):
            return False
        if self._others_live(rows, now):  # an earlier commit claimed it first: withdraw ours
            self._delete_mine()
            return False
        return True

    def renew(self) -> bool:
        res = self.t.update(where=self._match(key=self.key, holder=self.token),
                            values={"expires_at": time.time() + self.ttl})
        return int(getattr(res, "rows_updated", 1)) > 0

    def _delete_mine(self) -> None:
        self.t.delete(self._match(key=self.key, holder=self.token))

    def release(self) -> None:
        self._delete_mine()
