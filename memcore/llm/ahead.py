"""Work issued ahead of its use: `Ahead` (one piece of work) and `Stream` (a generator's items), run on the
client's scheduler when it is concurrent, with the ledger records booked in the thread that uses the result,
and the depth of the longest chain of dependent calls (the critical-path measure) carried per thread.

`client` is an `memcore.llm.client.LLMClient` (typed `Any` here: client.py imports this module).
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

from memcore.llm.ledger import CallRecord

# Calls on the longest chain of dependent calls that led to this point of this thread.
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("memcore_llm_depth", default=0)


def current_depth() -> int:
    """Dependent calls before this point of this thread (for the critical-path measure)."""
    return _DEPTH.get()


def set_depth(depth: int) -> None:
    """Start this thread's chain at `depth` (a task that depends on work that ended there)."""
    _DEPTH.set(depth)


class Ahead:
    """Work issued ahead of its use (`LLMClient.ahead`); `result()` waits for it and books its calls."""

    def __init__(self, client: Any, fn: Callable[..., Any], args: tuple, step: int,
                 depth: int | None = None) -> None:
        self._client, self._fn, self._args = client, fn, args
        self._child = client._detached(step)
        self._depth0 = current_depth() if depth is None else depth  # what it depends on
        self._future = None
        self._lock = threading.Lock()
        self._done = False
        if client.scheduler is not None and client.scheduler.concurrency > 1 and not client.is_offline:
            self._future = client.scheduler.submit(self._run)

    def _run(self) -> tuple[Any, int]:
        set_depth(self._depth0)
        return self._fn(self._child, *self._args), current_depth()

    def result(self) -> Any:
        """The work's return value (raises what it raised); its ledger records are added now, once."""
        with self._lock:
            if self._done:
                raise RuntimeError("Ahead.result() called twice")
            self._done = True
        try:
            if self._future is None:  # run now, in this thread (concurrency 1 or the offline engine)
                token = _DEPTH.set(self._depth0)
                try:
                    value, end = self._run()
                finally:
                    _DEPTH.reset(token)
            else:
                value, end = self._future.result()
            set_depth(max(current_depth(), end))
            return value
        finally:
            self._client.ledger.extend(self._child.take_records())

    def cancel(self) -> None:
        """Drop the work (not started: never runs; running: its result and records are discarded)."""
        with self._lock:
            self._done = True
        if self._future is not None:
            self._future.cancel()


class Stream:
    """The items of a generator `gen_fn(client, *args)`, produced ahead in a background thread (at most
    `lookahead` items ahead of the consumer) and consumed in order with `next()`, which books each
    item's ledger records and depends on its calls. At concurrency 1 (and offline) items are
    produced when asked for. A failure is raised by `next()` at the item where it happened."""

    _END = object()

    def __init__(self, client: Any, gen_fn: Callable[..., Any], args: tuple, lookahead: int,
                 depth: int | None) -> None:
        self._client = client
        self._child = client._detached(client.step)
        self._gen = gen_fn(self._child, *args)
        self._lane_depth = current_depth() if depth is None else depth
        self._stop = threading.Event()
        self._queue: queue.Queue | None = None
        if client.scheduler is not None and client.scheduler.concurrency > 1 and not client.is_offline:
            self._queue = queue.Queue(maxsize=max(1, lookahead))
            threading.Thread(target=self._produce, name="memcore-llm-stream", daemon=True).start()

    def _item(self) -> tuple[Any, list[CallRecord], int, BaseException | None]:
        try:
            value = next(self._gen)
            err = None
        except StopIteration:
            value, err = Stream._END, None
        except BaseException as e:
            value, err = None, e
        return value, self._child.take_records(), current_depth(), err

    def _produce(self) -> None:
        set_depth(self._lane_depth)
        while not self._stop.is_set():
            item = self._item()
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=0.2)
                    break
                except queue.Full:
                    continue
            if item[0] is Stream._END or item[3] is not None:
                return

    def next(self) -> Any:
        """The next item (StopIteration at the end); raises the failure of the work that produced it."""
        if self._queue is None:
            cur = current_depth()
            set_depth(self._lane_depth)
            try:
                value, recs, depth, err = self._item()
            finally:
                self._lane_depth = current_depth()
                set_depth(cur)
        else:
            value, recs, depth, err = self._queue.get()
        self._client.book(recs, depth)
        if err is not None:
            self._stop.set()
            raise err
        if value is Stream._END:
            raise StopIteration
        return value

    def cancel(self) -> None:
        """Stop producing (a call in flight finishes and is dropped)."""
        self._stop.set()
