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

from memcore.errors import MemcoreError

RUNNING, DONE, CANCELLED, FAILED = "running", "done", "cancelled", "failed"
ETA_MIN_S = 5.0  # a step's time left is estimated after this long


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
    # the step in progress, in the units it really processes (turns embedded, turns ingested, questions)
    step: str = ""
    step_done: int = 0
    step_total: int = 0
    step_unit: str = ""
    step_started: float = 0.0
    step_done0: int = 0  # units done when the step was first reported: the rate counts only units done since
    first_report: float = 0.0  # when the job first reported: the whole job's rate counts only units done since
    done0: int = -1  # the job's units done (`done`) at its first report (-1: none yet)

    @property
    def fraction(self) -> float:
        """Progress in [0, 1]."""
        return min(1.0, self.done / self.total) if self.total else 0.0

    def report(self, step: str, done: int, total: int, unit: str) -> None:
        """Record progress of the current step (a new name starts a new step and a new rate)."""
        if self.done0 < 0:
            self.done0, self.first_report = self.done, time.time()
        if step != self.step:
            self.step, self.step_started, self.step_done0 = step, time.time(), done
        self.step_done, self.step_total, self.step_unit = done, total, unit

    def eta(self) -> float | None:
        """Seconds left in the current step at its rate so far; None until ETA_MIN_S have passed and two units
        were done since the step began (the first turns of a step can come in a burst, e.g. work run ahead)."""
        n, elapsed = self.step_done - self.step_done0, time.time() - self.step_started
        if n < 2 or elapsed < ETA_MIN_S or not self.step_total:
            return None
        return max(0.0, (self.step_total - self.step_done) * elapsed / n)

    def total_eta(self) -> float | None:
        """Seconds left in the whole job (what the bar shows: `done` of `total`) at its rate since its first
        report; None until ETA_MIN_S have passed and two units were done since then."""
        n, elapsed = self.done - self.done0, time.time() - self.first_report
        if self.done0 < 0 or n < 2 or elapsed < ETA_MIN_S or not self.total:
            return None
        return max(0.0, (self.total - self.done) * elapsed / n)

    @property
    def one_step(self) -> bool:
        """Whether the step in progress is the whole job (the bar and the step count the same units)."""
        return self.step_total == self.total and self.step_done == self.done

    def progress_text(self) -> str:
        """One line: the job's message, the step with its units done, and the time left: in the step and, when
        the bar (the whole job) covers more than the step, in the whole job too, each named."""
        parts = [self.message] if self.message else []
        if self.step and not self.step_total:
            parts.append(self.step)  # a step without countable units (a system's end-of-conversation work)
        elif self.step:
            parts.append(f"{self.step}: {self.step_done}/{self.step_total} {self.step_unit}")
            left = self.eta()
            if self.one_step or not self.total:
                parts.append(f"about {duration(left)} left" if left is not None else "estimating time left…")
            else:
                parts.append(f"about {duration(left)} left in this step" if left is not None
                             else "estimating time left…")
        if self.step and self.total and not self.one_step:
            whole = self.total_eta()
            parts.append(f"all: {self.fraction:.0%} done"
                         + (f", about {duration(whole)} left" if whole is not None else ", estimating time left…"))
        return " · ".join(parts)

    @property
    def running(self) -> bool:
        """Whether the job is still working."""
        return self.status == RUNNING

    def cancel(self) -> None:
        """Ask the job to stop at its next safe point."""
        self.stop.set()


def duration(seconds: float) -> str:
    """A short human duration: '8 s', '3 min 20 s', '1 h 5 min'."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


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
        except MemcoreError as e:  # memcore's own errors read as sentences (the fix included): no class name
            job.status, job.error = FAILED, str(e)
            job.message = traceback.format_exc(limit=4)
        except Exception as e:
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
