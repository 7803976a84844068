"""LongMemEval loader: one Conversation per item, since each item has its own haystack.

An item is `{question_id, question_type, question, answer, question_date,
haystack_session_ids, haystack_dates, haystack_sessions: [[{role, content, has_answer?}]],
answer_session_ids}`. Mapping:
- Conversation.id = Question.id = question_id (the dataset's own id, so results can be
  compared with LongMemEval's files); speakers = ["user", "assistant"].
- Session k (1-based) of the haystack becomes Turn.session = k, its date the
  session_date; turn ids are "D<k>:<t>" like LoCoMo's, so evidence works the same way.
- Evidence = the turns marked `has_answer: true`; category = question_type (a string);
  items whose id ends in "_abs" are abstention questions: metadata["abstention"] = True.
- haystack_session_ids, haystack_dates and answer_session_ids are kept in metadata;
  Question.metadata["question_timestamp"] is question_date in ISO 8601.
- Held to the format (memcore.datasets.checks): a message with empty content, an answer
  session id that is not in the haystack, or a question_id used by two items is an error (two
  items under one id would share one memory and one result); `lenient=True` accepts them with a warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcore.datasets.checks import Checks, fingerprint
from memcore.datasets.locomo import check_type, describe, need, read_json, to_iso
from memcore.errors import DatasetError
from memcore.types import Conversation, Question, Turn

SPEAKERS = ["user", "assistant"]


def load_longmemeval(path: str | Path, lenient: bool = False) -> list[Conversation]:
    """Load a LongMemEval JSON list (e.g. longmemeval_s.json) into one Conversation per item.

    Empty messages and answer sessions missing from the haystack raise a DatasetError unless
    `lenient` (then one DatasetWarning)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError(str(path), "the top level should be a list of LongMemEval items ({question_id, "
                           f"haystack_sessions, ...}}), got {describe(data)}", "check that this is a LongMemEval file")
    if not data:
        raise DatasetError(str(path), "the list holds no items", "check that this is a LongMemEval file")
    checks = Checks(path, lenient)
    qids = [need(item, "question_id", str, path, f"[{i}]") for i, item in enumerate(data)]
    entries = [(q, f"[{i}] ({q})", fingerprint(item)) for i, (q, item) in enumerate(zip(qids, data, strict=True))]
    ids = checks.unique(entries, "question_id")
    out = [parse_item(item, path, f"[{i}]", checks, ident=ident)
           for i, (item, ident) in enumerate(zip(data, ids, strict=True)) if ident is not None]
    checks.finish()
    return out


def parse_item(item: Any, path: str | Path, where: str = "", checks: Checks | None = None,
               ident: str | None = None) -> Conversation:
    """Build the Conversation (haystack + its one question) for one LongMemEval item.

    Format problems go to `checks` (a strict Checks of `path` that raises at once when None). `ident` replaces
    the item's question_id as conversation and question id (a repeated id, derived by Checks.unique); the
    file's id is then kept in both metadata["dataset_id"]."""
    own = checks is None
    checks = Checks(path) if checks is None else checks
    file_id = need(item, "question_id", str, path, where)
    qid = ident or file_id
    where = f"{where} ({file_id})".strip()
    renamed = {"dataset_id": file_id} if qid != file_id else {}
    sessions = need(item, "haystack_sessions", list, path, where)
    dates = need(item, "haystack_dates", list, path, where)
    session_ids = need(item, "haystack_session_ids", list, path, where)
    if not len(sessions) == len(dates) == len(session_ids):
        raise DatasetError(
            str(path),
            f"{where}: haystack_sessions ({len(sessions)}), haystack_dates ({len(dates)}) and "
            f"haystack_session_ids ({len(session_ids)}) should have the same length",
            "give one date and one id per session",
        )
    turns: list[Turn] = []
    evidence: list[str] = []
    for k, (session, date) in enumerate(zip(sessions, dates, strict=True), start=1):
        sw = f"{where}.haystack_sessions[{k - 1}]"
        check_type(session, list, path, sw)
        date = check_type(date, str, path, f"{where}.haystack_dates[{k - 1}]")
        iso = to_iso(date, path, f"{where}.haystack_dates[{k - 1}]") if session else ""
        for t, msg in enumerate(session, start=1):
            tw = f"{sw}[{t - 1}]"
            text = need(msg, "content", str, path, tw)
            checks.turn_text(text, "", tw)
            turn = Turn(
                conv_id=qid, turn_id=f"D{k}:{t}", index=len(turns), session=k, session_date=date,
                timestamp=iso, speaker=need(msg, "role", str, path, tw), text=text,
            )
            turns.append(turn)
            if msg.get("has_answer") is True:
                evidence.append(turn.turn_id)
    if not turns:
        raise DatasetError(str(path), f"{where} has no turns (every haystack session is empty)",
                           "check that haystack_sessions holds the conversation")
    qtype = need(item, "question_type", str, path, where)
    answer_ids = check_type(item.get("answer_session_ids", []), list, path, f"{where}.answer_session_ids")
    for sid in answer_ids:
        if sid not in session_ids:
            checks.add(f"{where}.answer_session_ids", f"answer session {sid!r} is not in haystack_session_ids",
                       "correct the id, or restore that session in the haystack")
    if own:
        checks.finish()
    abstention = file_id.endswith("_abs")
    qdate = need(item, "question_date", str, path, where)
    question = Question(
        id=qid, conv_id=qid, text=need(item, "question", str, path, where),
        answer=str(need(item, "answer", (str, int, float), path, where)),
        evidence=evidence, category=qtype,
        question_date=qdate,
        metadata={
            "abstention": abstention,
            "question_timestamp": to_iso(qdate, path, f"{where}.question_date"),
            "answer_session_ids": answer_ids,
            "answer_sessions": [i + 1 for i, sid in enumerate(session_ids) if sid in answer_ids],
            **renamed,
        },
    )
    return Conversation(
        id=qid, speakers=list(SPEAKERS), turns=turns, questions=[question], source="longmemeval",
        metadata={
            "question_type": qtype,
            "abstention": abstention,
            "haystack_session_ids": session_ids,
            "haystack_dates": dates,
            "answer_session_ids": answer_ids,
            **renamed,
        },
    )
