"""Background jobs (ingest, benchmark runs) that survive reruns, report progress and can be cancelled.

A job runs in a thread; the page polls it from an auto-refreshing fragment. Cancelling sets a
threading.Event that the job passes to memcore as `should_stop`, so memcore stops after a
commit and a later run resumes: the store is never left half-written.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

RUNNING, DONE, CANCELLED, FAILED = "running", "done", "cancelled", "failed"


@dataclass
class Job:
    """One background job and its progress."""

    id: str
    title: str
    total: int = 0
    done: int = 0
    status: str = RUNNING
    message: str = ""
    error: str = ""
    result: Any = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    @property
    def fraction(self) -> float:
        """Progress in [0, 1]."""
        return min(1.0, self.done / self.total) if self.total else 0.0

    @property
    def running(self) -> bool:
        """Whether the job is still working."""
        return self.status == RUNNING

    def cancel(self) -> None:
        """Ask the job to stop at its next safe point."""
        self.stop.set()


JOBS: dict[str, Job] = {}
_LOCK = threading.Lock()


def start(job_id: str, title: str, fn: Callable[[Job], Any]) -> Job:
    """Start `fn(job)` in a thread unless a job with this id is already running."""
    with _LOCK:
        old = JOBS.get(job_id)
        if old is not None and old.running:
            return old
        job = Job(job_id, title)
        JOBS[job_id] = job

    def run() -> None:
        try:
            job.result = fn(job)
            job.status = CANCELLED if job.stop.is_set() else DONE
        except Exception as e:  # noqa: BLE001 - shown to the user, never lost
            job.status, job.error = FAILED, f"{type(e).__name__}: {e}"
            job.message = traceback.format_exc(limit=4)
        finally:
            job.finished = time.time()

    job.thread = threading.Thread(target=run, name=f"memcore-job-{job_id}", daemon=True)
    job.thread.start()
    return job


def get(job_id: str) -> Job | None:
    """The job with this id, if any."""
    return JOBS.get(job_id)


def wait(job_id: str, timeout: float = 120.0) -> Job | None:
    """Block until a job finishes (tests and benchmarks)."""
    job = JOBS.get(job_id)
    if job is not None and job.thread is not None:
        job.thread.join(timeout)
    return job
