"""Dataset loaders: LoCoMo (both layouts), LongMemEval, BEAM, LoCoMo-Plus, JSONL chat logs, and the demo.

    from memcore.datasets import load_dataset, load_demo
    convs = load_dataset("../shared/datasets/locomo/locomo8.json")  # format detected
    demo = load_demo()

`fmt` "auto" (or None) detects the format from the content (`detect_format`, which says why); a file that
fails to load as the detected or the named format gets a DatasetError naming the format tried and the
`--dataset` value that fixes it when the content looks like another format.

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

from memcore.datasets.beam import chat_files, is_beam_chat, load_beam
from memcore.datasets.checks import KNOWN_ERRATA, DatasetWarning
from memcore.datasets.demo import DEMO_PATH, load_demo
from memcore.datasets.files import check_file, read_text
from memcore.datasets.jsonl_chat import load_jsonl_chat, save_jsonl_chat
from memcore.datasets.locomo import ABSTAIN_ANSWER, describe, load_locomo, read_json, split_evidence
from memcore.datasets.locomo_plus import find_locomo, is_locomo_plus, load_locomo_plus
from memcore.datasets.longmemeval import load_longmemeval
from memcore.errors import DatasetError
from memcore.types import Conversation

Loader = Callable[..., list[Conversation]]  # (path, lenient=False) -> conversations

FORMATS: dict[str, Loader] = {
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
    "jsonl": load_jsonl_chat,
    "beam": load_beam,
    "locomo-plus": load_locomo_plus,
}
AUTO = "auto"

__all__ = [
    "ABSTAIN_ANSWER", "DEMO_PATH", "FORMATS", "KNOWN_ERRATA", "TOP_LEVEL", "DatasetWarning", "category_counts",
    "dataset_files", "detect_format", "load_beam", "load_dataset",
    "load_demo", "load_locomo_plus", "load_jsonl_chat", "load_locomo", "load_longmemeval", "save_jsonl_chat", "split_evidence",
]

_FIX = ("pass a LoCoMo, LongMemEval or LoCoMo-Plus .json file, a BEAM chat.json or chat folder, or your own chat as a .jsonl file (docs/jsonl-format.md "
        "describes that format)")
TOP_LEVEL = ("a dataset's top level must be a JSON object (one LoCoMo conversation) or a list of objects "
             "(LoCoMo samples, LongMemEval items, BEAM batches or LoCoMo-Plus items); a .jsonl file holds one JSON "
             "object per line")


def load_dataset(path: str | Path, fmt: str | None = None, lenient: bool = False, *,
                 detected: bool = False) -> list[Conversation]:
    """Load a dataset file (or a BEAM chat folder); `fmt` is a FORMATS name, or None / "auto" to detect it.

    `lenient` accepts missing sessions, empty turns and dangling evidence with a DatasetWarning
    (the default refuses them with a DatasetError naming each place). A load that fails names the format
    it tried and, when the content looks like another format, the `--dataset` value that fixes it."""
    detected = detected or fmt in (None, AUTO)  # `detected`: the caller's fmt came from detect_format
    fmt = detect_format(path) if fmt in (None, AUTO) else fmt
    if fmt not in FORMATS:
        raise DatasetError(str(path), f"unknown format {fmt!r}", f"use one of {', '.join(FORMATS)} or {AUTO}")
    try:
        return FORMATS[fmt](path, lenient=lenient)
    except DatasetError as err:
        raise _wrong_guess(err, path, fmt, detected) from None


def dataset_files(path: str | Path, fmt: str) -> list[Path]:
    """Every file a dataset's content comes from (its fingerprint hashes them): the file; a BEAM path's chat.json
    and probing-question files; a LoCoMo-Plus file and the LoCoMo file it is stitched into."""
    if fmt == "beam":
        files = chat_files(path)
        qs = [q for f in files for q in (f.parent / "probing_questions" / "probing_questions.json",
                                         f.parent / "probing_questions.json") if q.is_file()]
        return [*files, *qs]
    if fmt == "locomo-plus":
        return [Path(path), find_locomo(path)]
    return [Path(path)]


def _wrong_guess(err: DatasetError, path: str | Path, fmt: str, detected: bool) -> DatasetError:
    """`err` with the format tried and, when the content looks like another format, the flag that fixes it."""
    try:
        other = None if detected else detect_format(path)
    except DatasetError:
        other = None
    how = "detected from its content" if detected else "named by --dataset"
    tried = f"read as {fmt} ({how})"
    if other and other != fmt:
        fix = f"it looks like a {other} file: pass --dataset {other} (or --dataset {AUTO})"
    elif detected:
        fix = f"{err.fix}; if it is not a {fmt} file, name its format with --dataset ({', '.join(FORMATS)})"
    else:
        return err
    return DatasetError(err.path, f"{err.problem} [{tried}]", fix)


def detect_format(path: str | Path) -> str:
    """The FORMATS name for a file or folder, from its content: a folder with BEAM chat.json files -> beam;
    .jsonl -> jsonl; else by the JSON's shape and keys (a .json-named file of JSON lines -> jsonl)."""
    if Path(path).is_dir():
        if chat_files(path):
            return "beam"
        raise DatasetError(str(path), "is a folder with no BEAM chat.json in it or its subfolders",
                           "pass one .json or .jsonl file, or a BEAM chat folder")
    p = check_file(path)  # a FIFO or device is refused before anything opens it
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl"
    try:
        data = read_json(p)
    except DatasetError:
        if _looks_like_jsonl(p):
            return "jsonl"
        raise
    if is_beam_chat(data):
        return "beam"
    if is_locomo_plus(data):
        return "locomo-plus"
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, dict):
        if "sample_id" in first or "speaker_a" in first:
            return "locomo"
        if "question_id" in first and isinstance(data, list):
            return "longmemeval"
        keys = ", ".join(list(first)[:8]) or "none"
        what = "the first item of the list" if first is not data else "the top-level object"
        raise DatasetError(str(p), f"unknown format: {what} has keys {keys} (expected 'sample_id', "
                           "'speaker_a', 'question_id', 'batch_number' + 'turns' (BEAM) or 'cue_dialogue' + "
                           "'trigger_query' (LoCoMo-Plus))", _FIX)
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
