"""`memcore ingest --follow FILE`: a JSONL chat log that grows, remembered as it grows.

Each poll reads the whole file (memcore.datasets.jsonl_chat rules); every conversation in it is a live
conversation whose stored turns must begin the file's (a rewritten history is refused with the store's one-line
StoreError); the new turns are appended and every system's memory catches up. A half-written last line (no
newline yet) waits for the next poll."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from memcore.datasets.jsonl_chat import load_jsonl_chat
from memcore.errors import StoreError
from memcore.live.log import ToolCall, log_calls
from memcore.live.session import LiveMemory
from memcore.workbench import Workbench

Report = Callable[[str, int, dict[str, dict[str, int]]], None]  # (conversation, new turns, counts per system)


def _complete_lines(path: Path, keep: Path) -> Path:
    """`path` itself when it ends with a newline, else a copy of its complete lines (`keep`)."""
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return path
    keep.write_bytes(data[:data.rfind(b"\n") + 1])
    return keep


def follow_once(wb: Workbench, path: Path, systems: list[str], lenient: bool = False,
                report: Report | None = None) -> int:
    """Remember the turns added to `path` since the last call; returns how many were added (all
    conversations). DatasetError for a file breaking its format, StoreError for a changed history, LiveError when
    a memory could not be built (the turns stay stored; the next call resumes)."""
    src = _complete_lines(path, path.with_name(f".{path.name}.complete"))
    if src.stat().st_size == 0:
        return 0
    added = 0
    for conv in load_jsonl_chat(src, lenient=lenient):
        live = LiveMemory(wb, conv.id, systems, client="follow")
        t0 = time.perf_counter()
        stored = live.conversation()
        if conv.turns[:len(stored.turns)] != stored.turns:
            raise StoreError(f"{path}: the first {len(stored.turns)} turns of {conv.id!r} differ from the stored "
                             "ones (a live log may only grow). Fix: follow it into another store or give it a new "
                             "conversation id")
        new = conv.turns[len(stored.turns):]
        if new:
            live.append(new)
        reports = live.catch_up()
        if new:
            log_calls(wb.store, [ToolCall(conv.id, "remember", ",".join(live.systems),
                                          (time.perf_counter() - t0) * 1000, step=len(conv.turns), client="follow",
                                          request={"file": str(path), "turns": len(new)},
                                          result={"turn_id": new[-1].turn_id, "turn": len(conv.turns),
                                                  "counts": {n: r.counts for n, r in reports.items()}})])
            added += len(new)
        if report is not None and new:
            report(conv.id, len(new), {n: r.counts for n, r in reports.items()})
    return added


def follow(wb: Workbench, path: Path, systems: list[str], *, poll_s: float = 0.5, idle_exit_s: float | None = None,
           lenient: bool = False, report: Report | None = None, should_stop: Callable[[], bool] | None = None) -> int:
    """Poll `path` every `poll_s` s and remember what it adds (follow_once) until `should_stop()`, or until it has
    not grown for `idle_exit_s` s (None: forever); returns the turns added."""
    total, last_change, last_size = 0, time.monotonic(), -1
    while should_stop is None or not should_stop():
        size = path.stat().st_size if path.exists() else 0
        if size != last_size:
            last_size, last_change = size, time.monotonic()
            if size:
                total += follow_once(wb, path, systems, lenient, report)
        elif idle_exit_s is not None and time.monotonic() - last_change >= idle_exit_s:
            break
        time.sleep(poll_s)
    return total
