"""One scheduler per LLM endpoint: bounded concurrency, shared rate limits, retries, a deadline.

Every chat call of every thread goes through `CallScheduler.call`, which
- waits while a 429's Retry-After pause is in force (one pause slows every caller),
- waits for the optional requests- and tokens-per-minute budgets,
- holds one of `concurrency` slots while the request is in flight,
- retries transient failures (timeouts, connection errors, 429, 5xx) with exponential backoff
  (tenacity), at most `retries` attempts and never past the per-call `deadline_s`,
- fails fast while the endpoint is known to be down (a circuit breaker: after `breaker`
  calls in a row failed for good, new calls fail at once for `breaker_cooldown_s`, then one
  probe call decides).
`submit(fn)` runs work ahead in a thread pool of `concurrency` threads (see LLMClient.ahead).
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, stop_after_delay

from memcore.errors import LLMError, TransientLLMError

T = TypeVar("T")


@dataclass(frozen=True)
class SchedulerConfig:
    """Concurrency, rate limits and retry policy of one endpoint (all settings; see Settings)."""

    concurrency: int = 1
    rpm: int = 0  # requests per minute, 0 = unlimited
    tpm: int = 0  # tokens per minute (prompt estimate + max_tokens), 0 = unlimited
    retries: int = 3  # attempts per call, the first included
    deadline_s: float = 180.0  # one call, all attempts and waits included
    backoff_s: float = 0.5  # first retry wait; doubles per attempt, capped at 8 s
    breaker: int = 5  # calls failed for good in a row that open the circuit
    breaker_cooldown_s: float = 20.0


class RateLimiter:
    """Requests/tokens per minute over a sliding window, plus a shared Retry-After pause."""

    def __init__(self, rpm: int = 0, tpm: int = 0) -> None:
        self.rpm, self.tpm = rpm, tpm
        self._lock = threading.Lock()
        self._sent: deque[tuple[float, int]] = deque()  # (time, tokens) in the last 60 s
        self.paused_until = 0.0
        self.pauses = 0

    def pause(self, seconds: float) -> None:
        """Hold every caller back for `seconds` (a 429's Retry-After)."""
        with self._lock:
            self.paused_until = max(self.paused_until, time.monotonic() + max(0.0, seconds))
            self.pauses += 1

    def acquire(self, tokens: int, deadline: float) -> None:
        """Wait until a request of `tokens` fits the budgets; TransientLLMError past `deadline`."""
        while True:
            with self._lock:
                now = time.monotonic()
                while self._sent and now - self._sent[0][0] >= 60.0:
                    self._sent.popleft()
                wait = self.paused_until - now
                if wait <= 0 and self.rpm and len(self._sent) >= self.rpm:
                    wait = 60.0 - (now - self._sent[0][0])
                if wait <= 0 and self.tpm and self._sent:
                    used = sum(t for _, t in self._sent)
                    if used + tokens > self.tpm:
                        wait = 60.0 - (now - self._sent[0][0])
                if wait <= 0:
                    self._sent.append((now, tokens))
                    return
            if time.monotonic() + wait > deadline:
                raise TransientLLMError(f"rate limit: no budget within the call's deadline (wait {wait:.1f} s)")
            time.sleep(min(wait, 1.0))


class PrioritySlots:
    """A counting semaphore whose waiters are served by priority (lower first), then in arrival order."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._cond = threading.Condition()
        self._waiting: list[tuple[int, int]] = []
        self._seq = 0

    def acquire(self, priority: int) -> None:
        """Take a slot when it is this caller's turn."""
        with self._cond:
            self._seq += 1
            ticket = (priority, self._seq)
            heapq.heappush(self._waiting, ticket)
            while not (self._free > 0 and self._waiting[0] == ticket):
                self._cond.wait()
            heapq.heappop(self._waiting)
            self._free -= 1
            if self._free > 0:
                self._cond.notify_all()

    def release(self) -> None:
        """Give a slot back."""
        with self._cond:
            self._free += 1
            self._cond.notify_all()


class CallScheduler:
    """Bounded, rate-limited, retrying execution of chat calls; shared by every client of a provider."""

    def __init__(self, config: SchedulerConfig | None = None) -> None:
        self.config = config or SchedulerConfig()
        self.limiter = RateLimiter(self.config.rpm, self.config.tpm)
        self._slots = PrioritySlots(max(1, self.config.concurrency))
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._failed_in_row = 0
        self._open_until = 0.0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.retried = 0

    @property
    def concurrency(self) -> int:
        """The most requests in flight at once."""
        return max(1, self.config.concurrency)

    # ------------------------------------------------------------------ calls
    def call(self, attempt: Callable[[], T], tokens: int = 0, on_retry: Callable[[Exception], None] | None = None,
             priority: int = 1) -> T:
        """Run `attempt` (one request) with slots, limits, retries and the deadline; raises LLMError.

        Waiting callers get slots by `priority` (lower first): memory construction (0) goes before
        questions (1), as an ingest's sequential decisions are what a whole run waits for."""
        cfg = self.config
        deadline = time.monotonic() + cfg.deadline_s
        self._check_circuit()

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            base = min(8.0, cfg.backoff_s * 2 ** (state.attempt_number - 1))
            after = getattr(exc, "retry_after", None)
            if after:
                self.limiter.pause(float(after))
                base = max(base, float(after))
            return max(0.0, min(base, deadline - time.monotonic()))

        def before_sleep(state: RetryCallState) -> None:
            with self._lock:
                self.retried += 1
            if on_retry is not None and state.outcome is not None:
                on_retry(state.outcome.exception())

        retrying = Retrying(
            retry=retry_if_exception_type(TransientLLMError),
            stop=stop_after_attempt(max(1, cfg.retries)) | stop_after_delay(cfg.deadline_s),
            wait=wait, before_sleep=before_sleep, reraise=True)
        tries = [0]

        def counted() -> T:
            tries[0] += 1
            return self._one(attempt, tokens, deadline, priority)

        t0 = time.monotonic()
        try:
            result = retrying(counted)
        except TransientLLMError as e:
            self._record_outcome(False)
            raise TransientLLMError(f"{e} (gave up after {tries[0]} attempt(s) in {time.monotonic() - t0:.1f} s)",
                                    e.retry_after, e.status) from e
        except LLMError:
            self._record_outcome(False)
            raise
        self._record_outcome(True)
        return result

    def _one(self, attempt: Callable[[], T], tokens: int, deadline: float, priority: int) -> T:
        self.limiter.acquire(tokens, deadline)
        self._slots.acquire(priority)
        try:
            with self._lock:
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return attempt()
        finally:
            with self._lock:
                self.in_flight -= 1
            self._slots.release()

    def _check_circuit(self) -> None:
        with self._lock:
            if self._open_until and time.monotonic() < self._open_until:
                left = self._open_until - time.monotonic()
                raise TransientLLMError(
                    f"the endpoint is failing ({self._failed_in_row} calls in a row failed after retries); "
                    f"not calling it for another {left:.0f} s")
            if self._open_until:  # cooldown over: let this call probe (half-open)
                self._open_until = 0.0

    def _record_outcome(self, ok: bool) -> None:
        with self._lock:
            if ok:
                self._failed_in_row = 0
                return
            self._failed_in_row += 1
            if self.config.breaker and self._failed_in_row >= self.config.breaker:
                self._open_until = time.monotonic() + self.config.breaker_cooldown_s

    # ------------------------------------------------------------ run-ahead
    def submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        """Run `fn(*args)` on the scheduler's thread pool (work issued ahead of its use)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="memcore-llm")
            pool = self._pool
        return pool.submit(fn, *args)

    def shutdown(self) -> None:
        """Stop the thread pool (pending work is cancelled)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
