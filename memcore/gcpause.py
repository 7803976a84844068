"""Python's cyclic garbage collector paused while a thread loads a memory's long-lived data in bulk.

A bulk load (Replay's warm-up of a memory's item versions and events, a system's restore ahead of Ask) creates
hundreds of thousands of container objects that live as long as the cache holding them. Each time enough of them
pile up, the collector runs a full pass over the whole heap, holding the GIL for it: measured on the synthetic 10M
chat's warm-up of a graph memory (session 23), five passes of 0.17-0.32 s each stalled the page's own script run (a
Replay step) that long, and the load itself took 3.6 s instead of 2.0 s. Paused, no pass runs during the load; the
objects are examined by a later pass, once.

Only the cyclic collector is paused: reference counting frees everything as usual. Pauses nest across threads (the
collector comes back when the last one ends), and a process that had the collector off keeps it off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_state = {"depth": 0, "was_enabled": True}


@contextmanager
def paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (nested and concurrent blocks: until the last one ends)."""
    with _LOCK:
        if _state["depth"] == 0:
            _state["was_enabled"] = gc.isenabled()
            gc.disable()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["was_enabled"]:
                gc.enable()
