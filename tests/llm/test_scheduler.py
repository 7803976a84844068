"""The call scheduler: bounded concurrency, shared Retry-After pause, retries within a deadline, the
circuit breaker, rate budgets; run-ahead work (Ahead, Stream) booked in program order."""

from __future__ import annotations

import threading
import time

import pytest

from memcore.errors import LLMCallFailed, PermanentLLMError, TransientLLMError
from memcore.llm import CallScheduler, LLMClient, SchedulerConfig
from memcore.llm.ahead import current_depth, set_depth
from memcore.llm.simulated import SimulatedProvider


def test_concurrency_is_bounded_and_used() -> None:
    sch = CallScheduler(SchedulerConfig(concurrency=3))
    live, peak, lock = [0], [0], threading.Lock()

    def attempt() -> int:
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.05)
        with lock:
            live[0] -= 1
        return 1

    threads = [threading.Thread(target=sch.call, args=(attempt,)) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 3 and sch.peak_in_flight == 3


def test_retry_after_pauses_every_caller() -> None:
    sch = CallScheduler(SchedulerConfig(concurrency=4, retries=3, backoff_s=0.01))
    first = [True]

    def limited() -> str:
        if first[0]:
            first[0] = False
            raise TransientLLMError("429", retry_after=0.4, status=429)
        return "ok"

    t0 = time.monotonic()
    assert sch.call(limited) == "ok"
    assert time.monotonic() - t0 >= 0.35  # the retry waited for Retry-After, not the 10 ms backoff
    t1 = time.monotonic()
    sch.limiter.pause(0.3)
    sch.call(lambda: "other caller")  # another caller is held back by the same pause
    assert time.monotonic() - t1 >= 0.25


def test_transient_errors_retried_then_given_up_permanent_not_retried() -> None:
    sch = CallScheduler(SchedulerConfig(retries=3, backoff_s=0.01, breaker=0))
    n = [0]

    def flaky() -> str:
        n[0] += 1
        raise TransientLLMError("503")

    with pytest.raises(TransientLLMError, match="gave up after 3 attempt"):
        sch.call(flaky)
    assert n[0] == 3
    n[0] = 0

    def refused() -> str:
        n[0] += 1
        raise PermanentLLMError("401")

    with pytest.raises(PermanentLLMError):
        sch.call(refused)
    assert n[0] == 1


def test_deadline_bounds_all_attempts() -> None:
    sch = CallScheduler(SchedulerConfig(retries=100, backoff_s=0.2, deadline_s=0.5, breaker=0))
    t0 = time.monotonic()
    with pytest.raises(TransientLLMError):
        sch.call(lambda: (_ for _ in ()).throw(TransientLLMError("down")))
    assert time.monotonic() - t0 < 1.5


def test_circuit_opens_after_failures_and_recovers() -> None:
    sch = CallScheduler(SchedulerConfig(retries=1, breaker=2, breaker_cooldown_s=0.3))
    calls = [0]

    def down() -> str:
        calls[0] += 1
        raise TransientLLMError("down")

    for _ in range(2):
        with pytest.raises(TransientLLMError):
            sch.call(down)
    with pytest.raises(TransientLLMError, match="endpoint is failing"):
        sch.call(down)
    assert calls[0] == 2  # the open circuit did not call the endpoint
    time.sleep(0.35)
    assert sch.call(lambda: "back") == "back"


def test_rpm_budget_waits() -> None:
    sch = CallScheduler(SchedulerConfig(rpm=2, deadline_s=0.3))
    sch.call(lambda: 1)
    sch.call(lambda: 2)
    with pytest.raises(TransientLLMError, match="rate limit"):  # the third would wait ~60 s > deadline
        sch.call(lambda: 3)


def _client(n: int, delay_ms: float = 20.0) -> LLMClient:
    prov = SimulatedProvider(delay_ms=delay_ms, jitter_ms=delay_ms)
    return LLMClient(prov, scheduler=CallScheduler(SchedulerConfig(concurrency=n)))


def _answer(client: LLMClient, q: str) -> str:
    return client.run("answer", {"question": q, "context": f"[today] A: {q} is yes."}, stage="answer").output.text


def test_ahead_runs_concurrently_and_books_in_use_order() -> None:
    client = _client(8, delay_ms=100.0)
    _answer(_client(1, 0.0), "warm-up")  # the offline engine's first call imports nltk (seconds)
    set_depth(0)
    t0 = time.monotonic()
    aheads = [client.ahead(_answer, f"q{i}") for i in range(8)]
    outs = [a.result() for a in aheads]
    assert time.monotonic() - t0 < 0.6  # 8 calls of 100-200 ms overlapped
    assert len(outs) == 8 and len(client.ledger.records) == 8
    assert all(r.depth == 1 for r in client.ledger.records)  # independent calls: each on a chain of one
    seq = _client(1, delay_ms=1.0)
    seq_outs = [a.result() for a in [seq.ahead(_answer, f"q{i}") for i in range(8)]]
    assert seq_outs == outs


def test_stream_produces_ahead_raises_at_the_failing_item_and_books_per_item() -> None:
    def gen(c: LLMClient, n: int):
        for i in range(n):
            if i == 3:
                raise LLMCallFailed("answer", "construction", "simulated outage")
            c.step = i + 1
            yield _answer(c, f"q{i}")

    set_depth(0)
    client = _client(4)
    st = client.stream(gen, 6, lookahead=8)
    got = [st.next() for _ in range(3)]
    assert len(got) == 3 and [r.step for r in client.ledger.records] == [1, 2, 3]
    assert current_depth() == 3
    with pytest.raises(LLMCallFailed, match="simulated outage"):
        st.next()
    lazy = _client(1, delay_ms=1.0).stream(gen, 2)
    assert [lazy.next(), lazy.next()] == got[:2]
    with pytest.raises(StopIteration):
        lazy.next()
