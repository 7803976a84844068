"""LoCoMo loader (both layouts) and the small helpers every loader shares.

Layouts:
- list layout (`locomo10.json`): `[{sample_id, conversation: {speaker_a, speaker_b,
  session_N_date_time, session_N: [turn]}, qa: [...], ...}]`;
- single layout (`conv-26.json`, the multimodal-dialog release): one conversation per file
  with the `conversation` fields flattened to the top level. The id is `sample_id` when
  present, else the file name (`conv-26`). A single `{sample_id, conversation, qa}` item
  is accepted too.

Choices (documented in docs/jsonl-format.md as well):
- Category 5 (adversarial) questions get `answer = ABSTAIN_ANSWER` ("Not mentioned in
  the conversation"): LoCoMo's official evaluation scores them as correct only when the
  model abstains. The tempting wrong answer is kept in `adversarial_answer`; an `answer`
  the file carries anyway (2 items in conv-26) is kept in `metadata["dataset_answer"]`.
- Evidence strings are split on ";" "," and spaces; spellings of a turn id ("D:11:26", "D30:05")
  name that turn ("D11:26", "D30:5"). An id naming no turn is an error, and so is a piece that is
  no turn id in any spelling (checks.py: the published file's known errata excepted); with
  `lenient=True` a dangling id stays in `evidence` and is listed in `metadata["missing_evidence"]`,
  an unusable piece is dropped and listed in `metadata["unusable_evidence"]`. A missing session (numbers
  must run 1..N) and a turn with empty text are errors too, accepted with a warning when lenient.
- Files are read by memcore.datasets.files: UTF-8/16/32 (with or without a byte-order mark), regular
  files only, nesting too deep for the parser refused with a message.
- BLIP captions lose their leading "a photo of" / "a photography of", so that
  `Turn.content` reads "[shares a photo of a dog ...]" rather than "... of a photo of ...".
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from memcore.datasets.checks import Checks, fingerprint
from memcore.datasets.files import parse_json, read_text
from memcore.errors import DatasetError
from memcore.types import Conversation, Question, Turn

ABSTAIN_ANSWER = "Not mentioned in the conversation"
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%Y/%m/%d (%a) %H:%M", "%Y/%m/%d %H:%M", "%d %B, %Y")
_CAPTION_PREFIX = re.compile(r"^(a|an)\s+(photo|photograph|photography|picture|image)\s+of\s+", re.I)
_SESSION_KEY = re.compile(r"session_(\d+)")

# ---- helpers shared by all loaders -------------------------------------------------


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, turning every I/O, encoding or syntax problem into a DatasetError (datasets.files)."""
    p = Path(path)
    text = read_text(p)
    if not text.strip():  # nothing at all is not a cut-off file
        raise DatasetError(str(p), "the file is empty (0 bytes of JSON)",
                           "pass the dataset file itself (a download that saved nothing: download it again)")
    try:
        return parse_json(text, p)
    except json.JSONDecodeError as e:
        hint = " (the file looks truncated)" if e.pos >= len(text.rstrip()) else ""
        raise DatasetError(
            str(p),
            f"invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}{hint}",
            "re-download the file or repair the JSON at that position",
        ) from None


def need(obj: Any, key: str, typ: type | tuple[type, ...], path: str | Path, where: str) -> Any:
    """obj[key], checked to exist and to have type `typ`; DatasetError naming the field if not."""
    if not isinstance(obj, dict):
        raise DatasetError(str(path), f"{where or 'top level'} should be a JSON object, got {describe(obj)}")
    if key not in obj or obj[key] is None:
        at = f"{where} is" if where else "the top-level object is"
        raise DatasetError(str(path), f"{at} missing field '{key}'", f"add '{key}' to {where or 'the file'}")
    return check_type(obj[key], typ, path, f"{where}.{key}" if where else key)


def check_type(value: Any, typ: type | tuple[type, ...], path: str | Path, where: str) -> Any:
    """Return value if it has type `typ` (bool is not an int), else raise a DatasetError."""
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        want = " or ".join(_JSON_NAMES.get(t, t.__name__) for t in types)
        raise DatasetError(str(path), f"{where} should be {want}, got {describe(value)}")
    return value


_JSON_NAMES = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "a JSON object"}


def describe(value: Any) -> str:
    """A JSON value's type and start, for messages: 'an integer (1)', 'a list ([1, 2])'."""
    try:
        start = json.dumps(value, default=str)[:40]
    except RecursionError:  # a value nested deeper than json can write
        start = "deeply nested"
    return _JSON_NAMES.get(type(value), type(value).__name__) + f" ({start})"


def to_iso(date: str, path: str | Path, where: str) -> str:
    """ISO 8601 for a dataset date ("1:56 pm on 8 May, 2023", "2023/05/20 (Sat) 02:21", ...)."""
    iso = _parse_date(date.strip())
    if iso is None:
        raise DatasetError(str(path), f"{where}: cannot read the date {date!r}", "write it like '2024-03-01 10:00'")
    return iso


@lru_cache(maxsize=4096)
def _parse_date(s: str) -> str | None:
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(s, fmt).isoformat()
        except ValueError:
            pass
    try:
        return datetime.fromisoformat(s).isoformat()
    except ValueError:
        pass
    if not re.search(r"\d", s):
        return None  # "someday", "yesterday": nothing absolute to read
    import dateparser  # slow to import: only for unusual formats

    settings = {"RETURN_AS_TIMEZONE_AWARE": False, "PREFER_DAY_OF_MONTH": "first",
                "PARSERS": ["timestamp", "custom-formats", "absolute-time"]}
    dt = dateparser.parse(s, settings=settings)
    return dt.isoformat() if dt else None


def split_evidence(items: list[Any] | str) -> list[str]:
    """Evidence pieces as written: "D8:6; D9:17" -> ["D8:6", "D9:17"] (split on ";", "," and spaces).

    Spellings ("D:11:26", "D30:05") are matched to turn ids, and pieces naming no turn are reported, by
    memcore.datasets.checks.Checks.evidence."""
    out: list[str] = []
    for item in [items] if isinstance(items, str) else items:
        for piece in re.split(r"[;,\s]+", str(item)):
            if piece and piece not in out:
                out.append(piece)
    return out


def clean_caption(caption: str) -> str:
    """A BLIP caption without its "a photo of" prefix."""
    return _CAPTION_PREFIX.sub("", caption.strip())


# ---- LoCoMo ------------------------------------------------------------------------


TOP_LEVEL = "a list of LoCoMo samples ({sample_id, conversation, qa}) or one conversation object"


def load_locomo(path: str | Path, lenient: bool = False) -> list[Conversation]:
    """Load a LoCoMo file in either layout (list of samples, or one conversation per file).

    Missing sessions, empty turns and dangling evidence raise a DatasetError unless `lenient`
    (then they are accepted as before, with one DatasetWarning; see memcore.datasets.checks)."""
    data = read_json(path)
    checks = Checks(path, lenient)
    if not isinstance(data, list | dict):
        raise DatasetError(str(path), f"the top level should be {TOP_LEVEL}, got {describe(data)}",
                           "check that this is a LoCoMo file")
    if isinstance(data, list):
        convs = []
        sids = [need(check_type(item, dict, path, f"[{i}]"), "sample_id", str, path, f"[{i}]")
                for i, item in enumerate(data)]
        ids = checks.unique([(sid, f"[{i}]", fingerprint(item)) for i, (sid, item) in enumerate(zip(sids, data,
                                                                                                    strict=True))],
                            "sample_id")
        for i, (item, sid, cid) in enumerate(zip(data, sids, ids, strict=True)):
            if cid is None:  # lenient: an identical repeat of an earlier sample
                continue
            where = f"[{i}] ({sid})"
            conv = need(item, "conversation", dict, path, where)
            convs.append(parse_conversation(cid, conv, item.get("qa", []), path, f"{where} conversation",
                                            f"{where} qa", checks))
            if cid != sid:
                convs[-1].metadata["dataset_id"] = sid
        if not convs:
            raise DatasetError(str(path), "the list holds no conversations", "check that this is a LoCoMo file")
        checks.finish()
        return convs
    sid = data.get("sample_id") or Path(path).stem
    check_type(sid, str, path, "sample_id")
    conv = data["conversation"] if isinstance(data.get("conversation"), dict) else data
    where = "conversation" if conv is not data else ""
    out = [parse_conversation(sid, conv, data.get("qa", []), path, where, checks=checks)]
    checks.finish()
    return out


def parse_conversation(
    conv_id: str, conv: dict, qa: Any, path: str | Path, where: str = "", qa_where: str = "qa",
    checks: Checks | None = None,
) -> Conversation:
    """Build a Conversation from LoCoMo's `conversation` dict and `qa` list; `where` prefixes error fields.

    Format problems go to `checks` (a strict Checks of `path` that raises at once when None)."""
    own = checks is None
    checks = Checks(path) if checks is None else checks
    pre = f"{where}." if where else ""
    speakers = [need(conv, k, str, path, where) for k in ("speaker_a", "speaker_b")]
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    lists = {n: check_type(conv[f"session_{n}"], list, path, f"{pre}session_{n}") for n in sessions}
    checks.sessions({n: len(v) for n, v in lists.items()}, pre)
    turns: list[Turn] = []
    seen: set[str] = set()
    for n in sessions:
        items = lists[n]
        if not items:
            continue
        date = need(conv, f"session_{n}_date_time", str, path, where)
        iso = to_iso(date, path, f"{pre}session_{n}_date_time")
        for j, t in enumerate(items):
            tw = f"{pre}session_{n}[{j}]"
            tid = need(t, "dia_id", str, path, tw)
            if tid in seen:
                raise DatasetError(str(path), f"{tw}: turn id {tid!r} appears twice", "make every dia_id unique")
            seen.add(tid)
            caption = check_type(t.get("blip_caption") or "", str, path, f"{tw}.blip_caption")
            text = need(t, "text", str, path, tw)
            checks.turn_text(text, caption, tw)
            turns.append(Turn(
                conv_id=conv_id, turn_id=tid, index=len(turns), session=n, session_date=date, timestamp=iso,
                speaker=need(t, "speaker", str, path, tw), text=text, image_caption=clean_caption(caption),
            ))
    if not turns:
        raise DatasetError(str(path), f"conversation {conv_id!r} has no turns (no non-empty 'session_N' list)",
                           "check that this is a LoCoMo conversation with its sessions")
    qa = check_type(qa, list, path, qa_where)
    questions = [_question(conv_id, i, q, seen, path, f"{qa_where}[{i}]", checks) for i, q in enumerate(qa)]
    if own:
        checks.finish()
    return Conversation(id=conv_id, speakers=speakers, turns=turns, questions=questions, source="locomo")


def _question(conv_id: str, i: int, q: Any, turn_ids: set[str], path: str | Path, where: str,
              checks: Checks) -> Question:
    text = need(q, "question", str, path, where)
    category = need(q, "category", (int, str), path, where)
    if isinstance(category, str):
        if not category.strip().isdigit():
            raise DatasetError(str(path), f"{where}.category should be 1-5, got {category!r}")
        category = int(category)
    meta: dict[str, Any] = {}
    if category == 5:
        answer = ABSTAIN_ANSWER
        adversarial = str(need(q, "adversarial_answer", (str, int, float), path, where))
        if q.get("answer") is not None:
            meta["dataset_answer"] = str(q["answer"])
    else:
        answer = str(need(q, "answer", (str, int, float), path, where))
        adversarial = ""
    pieces = split_evidence(check_type(q.get("evidence", []), (list, str), path, f"{where}.evidence"))
    evidence, found = checks.evidence(conv_id, pieces, turn_ids, f"{where} ({conv_id}:q{i}).evidence")
    meta.update(found)
    return Question(id=f"{conv_id}:q{i}", conv_id=conv_id, text=text, answer=answer, evidence=evidence,
                    category=category, adversarial_answer=adversarial, metadata=meta)
