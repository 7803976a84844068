"""Dataset loaders: LoCoMo (both layouts), LongMemEval, JSONL chat logs, and the demo.

    from memcore.datasets import load_dataset, load_demo
    convs = load_dataset("../shared/datasets/locomo/locomo8.json")  # format detected
    demo = load_demo()

Every loader returns `list[Conversation]` and raises one `DatasetError` naming the file,
the field and the fix when a file is malformed. Files are held to their format (missing
sessions, empty turns and dangling evidence are errors, see memcore.datasets.checks);
`load_dataset(path, lenient=True)` accepts those with one `DatasetWarning`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from memcore.datasets.checks import KNOWN_ERRATA, DatasetWarning
from memcore.datasets.demo import DEMO_PATH, load_demo
from memcore.datasets.files import check_file, read_text
from memcore.datasets.jsonl_chat import load_jsonl_chat, save_jsonl_chat
from memcore.datasets.locomo import ABSTAIN_ANSWER, describe, load_locomo, read_json, split_evidence
from memcore.datasets.longmemeval import load_longmemeval
from memcore.errors import DatasetError
from memcore.types import Conversation

Loader = Callable[..., list[Conversation]]  # (path, lenient=False) -> conversations

FORMATS: dict[str, Loader] = {
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
    "jsonl": load_jsonl_chat,
}

__all__ = [
    "ABSTAIN_ANSWER", "DEMO_PATH", "FORMATS", "KNOWN_ERRATA", "TOP_LEVEL", "DatasetWarning", "category_counts",
    "detect_format", "load_dataset",
    "load_demo", "load_jsonl_chat", "load_locomo", "load_longmemeval", "save_jsonl_chat", "split_evidence",
]

_FIX = ("pass a LoCoMo or LongMemEval .json file, or your own chat as a .jsonl file (docs/jsonl-format.md "
        "describes that format)")
TOP_LEVEL = ("a dataset's top level must be a JSON object (one LoCoMo conversation) or a list of objects "
             "(LoCoMo samples or LongMemEval items); a .jsonl file holds one JSON object per line")


def load_dataset(path: str | Path, fmt: str | None = None, lenient: bool = False) -> list[Conversation]:
    """Load a dataset file; `fmt` is a FORMATS name, or None to detect it from the file.

    `lenient` accepts missing sessions, empty turns and dangling evidence with a DatasetWarning
    (the default refuses them with a DatasetError naming each place)."""
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise DatasetError(str(path), f"unknown format {fmt!r}", f"use one of {', '.join(FORMATS)}")
    return FORMATS[fmt](path, lenient=lenient)


def detect_format(path: str | Path) -> str:
    """The FORMATS name for a file: .jsonl -> jsonl; else by the JSON's keys."""
    p = check_file(path)  # a FIFO or device is refused before anything opens it
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl"
    try:
        data = read_json(p)
    except DatasetError:
        if _looks_like_jsonl(p):
            return "jsonl"
        raise
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, dict):
        if "sample_id" in first or "speaker_a" in first:
            return "locomo"
        if "question_id" in first and isinstance(data, list):
            return "longmemeval"
        keys = ", ".join(list(first)[:8]) or "none"
        what = "the first item of the list" if first is not data else "the top-level object"
        raise DatasetError(str(p), f"unknown format: {what} has keys {keys} (expected 'sample_id', "
                           "'speaker_a' or 'question_id')", _FIX)
    if data == []:
        raise DatasetError(str(p), "unknown format: the file holds an empty list", "check the file")
    if isinstance(data, list):
        got = f"a list whose first item is {describe(first)}"
    else:
        got = describe(data)
    raise DatasetError(str(p), f"unknown format: the top level is {got}; {TOP_LEVEL}", _FIX)


def _looks_like_jsonl(p: Path) -> bool:
    """True when the first non-blank line is a complete JSON object (a .json-named JSONL file)."""
    try:
        line = next((ln for ln in read_text(p).splitlines() if ln.strip()), "")
        return isinstance(json.loads(line), dict) and bool(line.strip())
    except (ValueError, RecursionError):  # DatasetError is a ValueError
        return False


def category_counts(conversations: list[Conversation]) -> dict[int | str, int]:
    """Number of questions per category over all conversations, sorted by category."""
    counts = Counter(q.category for c in conversations for q in c.questions)
    return dict(sorted(counts.items(), key=lambda kv: str(kv[0]).zfill(3)))
