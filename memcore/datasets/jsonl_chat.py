"""JSONL chat logs: a simple format for your own conversations (full spec: docs/jsonl-format.md).

One JSON object per line; blank lines are skipped. Three kinds of line, told apart by
"type" (default "message"):

    {"conversation": "my-chat", "session": 1, "date": "2024-03-01 10:00",
     "speaker": "Alice", "text": "Hi Bob!", "image_caption": "a red bicycle"}
    {"type": "question", "conversation": "my-chat", "question": "What colour is Alice's bike?",
     "answer": "red", "evidence": ["D1:1"], "category": 4}
    {"type": "conversation", "conversation": "my-chat", "speakers": ["Alice", "Bob"]}

Messages: "speaker" and "text" are required. "conversation" defaults to the file name,
"session" (an integer) to 1. "date" is required on the first message of each session;
later messages of the session may omit it (they inherit it) or give their own time.
Turn ids are "D<session>:<n>" (n counts from 1 within the session) unless a message
gives its own "id". Several conversations may share a file; turns are ordered by
session, then by file order. "image_caption" is optional.

Questions: "question" and "answer" are required; "evidence" (a list of turn ids, or a
string like "D1:3; D2:5"), "category" (1-5 as in LoCoMo, or any label),
"adversarial_answer", "question_date", "id" and "metadata" are optional.

Held to the format (memcore.datasets.checks): an evidence id naming no turn, a message with
empty text (and no image_caption) and a gap in a conversation's session numbers (1..N) are
errors; with `lenient=True` they are accepted with a warning (dangling ids listed in
Question.metadata["missing_evidence"]). Files are read by memcore.datasets.files (UTF-8/16/32).

The optional "conversation" line sets the speakers' order and free-form "metadata";
without it speakers are listed in order of first appearance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memcore.datasets.checks import Checks, fingerprint
from memcore.datasets.files import parse_json, read_text
from memcore.datasets.locomo import check_type, need, split_evidence, to_iso
from memcore.errors import DatasetError
from memcore.types import Conversation, Question, Turn

LINE_TYPES = ("message", "question", "conversation")


def read_jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; DatasetError on bad JSON or non-objects."""
    p = Path(path)
    lines = read_text(p).splitlines()  # datasets.files: regular files only, encoding detected
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line, p, f"line {n}")
        except json.JSONDecodeError as e:
            raise DatasetError(str(p), f"line {n}, column {e.colno}: invalid JSON ({e.msg})",
                               "put exactly one complete JSON object on each line") from None
        out.append((n, check_type(obj, dict, p, f"line {n}")))
    return out


def load_jsonl_chat(path: str | Path, lenient: bool = False) -> list[Conversation]:
    """Load a JSONL chat log (one or more conversations, optional questions).

    Dangling evidence, empty messages and session gaps raise a DatasetError unless `lenient`
    (then one DatasetWarning)."""
    default_id = Path(path).stem
    headers: dict[str, dict[str, Any]] = {}
    messages: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    questions: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for n, obj in read_jsonl(path):
        kind = obj.get("type", "message")
        if kind not in LINE_TYPES:
            raise DatasetError(str(path), f"line {n}: unknown type {kind!r}", f"use one of {', '.join(LINE_TYPES)}")
        conv_id = check_type(obj.get("conversation", default_id), str, path, f"line {n}.conversation")
        if kind == "conversation":
            headers[conv_id] = obj
        bucket = messages if kind == "message" else questions if kind == "question" else None
        if bucket is not None:
            bucket.setdefault(conv_id, []).append((n, obj))
    for conv_id in [*headers, *questions]:
        if conv_id not in messages:
            raise DatasetError(str(path), f"conversation {conv_id!r} has no messages",
                               "add message lines for it, or fix the 'conversation' name")
    if not messages:
        raise DatasetError(str(path), "holds no messages", "add one JSON object per message (see docs/jsonl-format.md)")
    checks = Checks(path, lenient)
    entries = [(check_type(q.get("id", f"{cid}:q{i}"), str, path, f"line {n}.id"), f"line {n}", fingerprint(q))
               for cid, qs in questions.items() for i, (n, q) in enumerate(qs)]
    ids = iter(checks.unique(entries, "question id"))
    with_ids = {cid: [(n, q, next(ids)) for n, q in qs] for cid, qs in questions.items()}
    out = [_conversation(cid, msgs, headers.get(cid, {}), with_ids.get(cid, []), path, checks)
           for cid, msgs in messages.items()]
    checks.finish()
    return out


def _conversation(conv_id: str, msgs: list, header: dict, qs: list, path: str | Path, checks: Checks) -> Conversation:
    msgs = sorted(msgs, key=lambda m: check_type(m[1].get("session", 1), int, path, f"line {m[0]}.session"))
    turns: list[Turn] = []
    session_date: dict[int, tuple[str, str]] = {}  # session -> (date as written, ISO)
    counts: dict[int, int] = {}
    ids: set[str] = set()
    for n, m in msgs:
        where = f"line {n}"
        s = m.get("session", 1)
        counts[s] = counts.get(s, 0) + 1
        date = check_type(m.get("date", ""), str, path, f"{where}.date")
        if s not in session_date:
            if not date:
                raise DatasetError(str(path), f"{where} is missing field 'date' (first message of session {s})",
                                   "give the first message of each session a date like '2024-03-01 10:00'")
            session_date[s] = (date, to_iso(date, path, f"{where}.date"))
        tid = check_type(m.get("id", f"D{s}:{counts[s]}"), str, path, f"{where}.id")
        if tid in ids:
            raise DatasetError(str(path), f"{where}: turn id {tid!r} is used twice in {conv_id!r}", "make ids unique")
        ids.add(tid)
        text = need(m, "text", str, path, where)
        caption = check_type(m.get("image_caption", ""), str, path, f"{where}.image_caption")
        checks.turn_text(text, caption, where)
        turns.append(Turn(
            conv_id=conv_id, turn_id=tid, index=len(turns), session=s, session_date=session_date[s][0],
            timestamp=to_iso(date, path, f"{where}.date") if date else session_date[s][1],
            speaker=need(m, "speaker", str, path, where), text=text, image_caption=caption,
        ))
    checks.sessions(counts, f"conversation {conv_id!r} ")
    speakers = check_type(header.get("speakers", []), list, path, f"conversation {conv_id!r}.speakers")
    speakers = speakers or list(dict.fromkeys(t.speaker for t in turns))
    questions = [_question(conv_id, n, q, qid, ids, path, checks) for n, q, qid in qs if qid is not None]
    meta = check_type(header.get("metadata", {}), dict, path, f"conversation {conv_id!r}.metadata")
    return Conversation(id=conv_id, speakers=list(speakers), turns=turns, questions=questions,
                        source="jsonl", metadata=dict(meta))


def _question(conv_id: str, n: int, q: dict, qid: str, ids: set[str], path: str | Path, checks: Checks) -> Question:
    where = f"line {n}"
    pieces = split_evidence(check_type(q.get("evidence", []), (list, str), path, f"{where}.evidence"))
    meta = dict(check_type(q.get("metadata", {}), dict, path, f"{where}.metadata"))
    for key in ("missing_evidence", "evidence_errata", "unusable_evidence"):
        meta.pop(key, None)
    evidence, found = checks.evidence(conv_id, pieces, ids, f"line {n}.evidence")
    meta.update(found)
    if qid != q.get("id", qid):
        meta["dataset_id"] = q["id"]
    return Question(
        id=qid, conv_id=conv_id,
        text=need(q, "question", str, path, where),
        answer=str(need(q, "answer", (str, int, float), path, where)),
        evidence=evidence, category=check_type(q.get("category", 0), (int, str), path, f"{where}.category"),
        question_date=check_type(q.get("question_date", ""), str, path, f"{where}.question_date"),
        adversarial_answer=str(check_type(q.get("adversarial_answer", ""), (str, int, float), path, where)),
        metadata=meta,
    )


def to_jsonl_records(conv: Conversation) -> list[dict[str, Any]]:
    """The JSONL lines (as dicts) that load back into `conv` (turns, questions, speakers)."""
    out: list[dict[str, Any]] = [{"type": "conversation", "conversation": conv.id, "speakers": conv.speakers}]
    if conv.metadata:
        out[0]["metadata"] = conv.metadata
    counts: dict[int, int] = {}
    first: dict[int, str] = {}
    for t in conv.turns:
        counts[t.session] = counts.get(t.session, 0) + 1
        rec: dict[str, Any] = {"conversation": conv.id, "session": t.session}
        if t.session not in first:
            first[t.session] = t.timestamp
            rec["date"] = t.session_date or t.timestamp
        elif t.timestamp != first[t.session]:
            rec["date"] = t.timestamp
        if t.turn_id != f"D{t.session}:{counts[t.session]}":
            rec["id"] = t.turn_id
        rec.update(speaker=t.speaker, text=t.text)
        if t.image_caption:
            rec["image_caption"] = t.image_caption
        out.append(rec)
    for i, q in enumerate(conv.questions):
        rec = {"type": "question", "conversation": conv.id, "question": q.text, "answer": q.answer,
               "evidence": q.evidence, "category": q.category}
        if q.id != f"{conv.id}:q{i}":
            rec["id"] = q.id
        extra = {"adversarial_answer": q.adversarial_answer, "question_date": q.question_date, "metadata": q.metadata}
        rec.update({k: v for k, v in extra.items() if v})
        out.append(rec)
    return out


def save_jsonl_chat(conversations: list[Conversation], path: str | Path) -> Path:
    """Write conversations in the JSONL chat format; `load_jsonl_chat` reads them back."""
    p = Path(path)
    with p.open("w", encoding="utf-8") as f:
        for conv in conversations:
            for rec in to_jsonl_records(conv):
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return p
