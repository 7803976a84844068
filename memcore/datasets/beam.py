"""BEAM loader (Tavakoli et al., "Beyond a Million Tokens", ICLR 2026): the 128K / 500K / 1M chat layout.

A chat folder holds `chat.json` and `probing_questions/probing_questions.json` (a `probing_questions.json`
beside chat.json is accepted too). The loader takes the chat.json file, its folder, or a folder of chat
folders (e.g. `beam/100K/`: one Conversation per chat, in numeric order).

Mapping:
- `chat.json` is a list of batches `{batch_number, time_anchor, turns: [[message, ...], ...]}`; batch k (in
  file order) becomes session k. A message `{role, id, content, index?, question_type?, time_anchor?}` becomes
  a Turn with turn_id = str(id) (BEAM's `source_chat_ids` name these ids), speaker = role.
- Time anchors ("March-15-2024") are dates: a session's date is its batch's `time_anchor`, else the first
  message anchor in the batch, else the previous session's date; a turn's timestamp is the latest anchor seen
  so far in its batch (else the session's). A chat with no anchor at all is a format problem (lenient: the
  turns carry no date).
- `probing_questions.json` maps each ability to its questions. Abilities get readable names as the category
  ("information extraction"); the raw key is kept in metadata["ability"]. The gold is the ability's field
  (`answer`, `ideal_answer`, `ideal_response`, `ideal_summary` or `expected_compliance`), named in
  metadata["gold_field"]. The rubric is kept in metadata["rubric"] (event ordering: also the reference order
  in metadata["reference_order"]). `source_chat_ids` given as a list is the evidence; given as named groups
  (`original_info` / `updated_info`, `first_statement` / `second_statement`, `first_event` / `second_event`)
  the evidence is their union in order and metadata["evidence_groups"] keeps each group under its name.
  A list whose entries are lists (an event spanning several messages) is flattened into the evidence, the
  entries kept in metadata["evidence_items"]. Abstention questions (no source ids) get metadata["abstention"] = True. Every other field of a question is
  kept in metadata["beam"].
- Conversation ids: `beam-<scale>-<chat>` from the folders (`beam-100K-2`), else `beam-<folder>`.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.datasets.checks import Checks
from memcore.datasets.locomo import check_type, describe, need, read_json
from memcore.errors import DatasetError
from memcore.types import Conversation, Question, Turn

SPEAKERS = ["user", "assistant"]
GOLD_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
ABILITIES = {
    "abstention": "abstention",
    "contradiction_resolution": "contradiction resolution",
    "event_ordering": "event ordering",
    "information_extraction": "information extraction",
    "instruction_following": "instruction following",
    "knowledge_update": "knowledge update",
    "multi_session_reasoning": "multi-session reasoning",
    "preference_following": "preference following",
    "summarization": "summarization",
    "temporal_reasoning": "temporal reasoning",
}
_KEPT_APART = {"question", "rubric", "source_chat_ids", *GOLD_FIELDS}
_FIX = "pass a BEAM chat folder, its chat.json, or a folder of chat folders (BEAM's chats/<scale>/)"


def ability_name(key: str) -> str:
    """The readable name of a BEAM ability key ("multi_session_reasoning" -> "multi-session reasoning")."""
    return ABILITIES.get(key, key.replace("_", " "))


def is_beam_chat(data: Any) -> bool:
    """True when parsed JSON looks like a BEAM chat.json (a list of batches with `batch_number` and `turns`)."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and "turns" in data[0] and "batch_number" in data[0])


def chat_files(path: str | Path) -> list[Path]:
    """The chat.json files a path names: the file itself, a chat folder's, or each chat folder's of a folder."""
    p = Path(path)
    if p.is_file():
        return [p]
    if (p / "chat.json").is_file():
        return [p / "chat.json"]
    if p.is_dir():
        subs = [d / "chat.json" for d in p.iterdir() if (d / "chat.json").is_file()]
        return sorted(subs, key=lambda f: (not f.parent.name.isdigit(), int(f.parent.name) if f.parent.name.isdigit()
                                           else 0, f.parent.name))
    return []


def load_beam(path: str | Path, lenient: bool = False) -> list[Conversation]:
    """Load BEAM chats (a chat.json, a chat folder, or a folder of chat folders) with their probing questions."""
    files = chat_files(path)
    if not files:
        raise DatasetError(str(path), "holds no BEAM chat.json", _FIX)
    return [load_chat(f, lenient) for f in files]


def conversation_id(chat: Path) -> str:
    """`beam-<scale>-<chat>` (beam-100K-2) when the chat folder sits in a scale folder, else `beam-<folder>`."""
    folder = chat.parent
    scale = folder.parent.name
    if re.fullmatch(r"\d+[KM]", scale, re.I):
        return f"beam-{scale}-{folder.name}"
    return f"beam-{folder.name or chat.stem}"


def parse_anchor(anchor: str, path: str | Path, where: str) -> str:
    """ISO date of a BEAM time anchor ("March-15-2024" -> "2024-03-15T00:00:00")."""
    for fmt in ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(anchor.strip(), fmt).isoformat()
        except ValueError:
            pass
    raise DatasetError(str(path), f"{where}: cannot read the time anchor {anchor!r}", "write it like 'March-15-2024'")


def load_chat(chat: Path, lenient: bool = False) -> Conversation:
    """One BEAM chat (chat.json + its probing questions) as a Conversation."""
    data = read_json(chat)
    if not is_beam_chat(data):
        raise DatasetError(str(chat), f"is not a BEAM chat.json: expected a list of batches {{batch_number, "
                           f"time_anchor, turns}}, got {describe(data)}", _FIX)
    conv_id = conversation_id(chat)
    checks = Checks(chat, lenient)
    turns: list[Turn] = []
    ids: set[str] = set()
    date, iso = "", ""
    for k, batch in enumerate(data, start=1):
        bw = f"[{k - 1}] (batch {batch.get('batch_number', k)})"
        groups = need(batch, "turns", list, chat, bw)
        msgs = [(f"{bw}.turns[{g}][{j}]", m) for g, grp in enumerate(groups)
                for j, m in enumerate(check_type(grp, list, chat, f"{bw}.turns[{g}]"))]
        first = batch.get("time_anchor") or next((m.get("time_anchor") for _, m in msgs
                                                  if isinstance(m, dict) and m.get("time_anchor")), None)
        if first:
            date = check_type(first, str, chat, f"{bw}.time_anchor")
            iso = parse_anchor(date, chat, f"{bw}.time_anchor")
        elif not date and msgs:
            checks.add(bw, "the chat has no time anchor up to this batch (its turns carry no date)",
                       "give the batch a 'time_anchor' like 'March-15-2024'")
        stamp = iso
        for mw, m in msgs:
            role = need(m, "role", str, chat, mw)
            mid = need(m, "id", int, chat, mw)
            text = need(m, "content", str, chat, mw)
            if m.get("time_anchor"):
                stamp = parse_anchor(check_type(m["time_anchor"], str, chat, f"{mw}.time_anchor"), chat, mw)
            tid = str(mid)
            if tid in ids:
                raise DatasetError(str(chat), f"{mw}: message id {mid} appears twice", "make every message id unique")
            ids.add(tid)
            checks.turn_text(text, "", mw)
            turns.append(Turn(conv_id=conv_id, turn_id=tid, index=len(turns), session=k, session_date=date,
                              timestamp=stamp, speaker=role, text=text))
    if not turns:
        raise DatasetError(str(chat), "the chat has no messages", _FIX)
    qfile = next((f for f in (chat.parent / "probing_questions" / "probing_questions.json",
                              chat.parent / "probing_questions.json") if f.is_file()), None)
    questions = load_questions(qfile, conv_id, ids, checks) if qfile else []
    checks.finish()
    meta = {"chat_file": str(chat), "questions_file": str(qfile) if qfile else "",
            "scale": chat.parent.parent.name if conv_id.count("-") >= 2 else ""}
    return Conversation(id=conv_id, speakers=list(SPEAKERS), turns=turns, questions=questions, source="beam",
                        metadata=meta)


def load_questions(qfile: Path, conv_id: str, turn_ids: set[str], checks: Checks) -> list[Question]:
    """The probing questions of one chat (see the module doc for the mapping)."""
    data = read_json(qfile)
    check_type(data, dict, qfile, "the top level (ability -> questions)")
    out: list[Question] = []
    for ability, items in data.items():
        for i, q in enumerate(check_type(items, list, qfile, ability)):
            out.append(_question(conv_id, ability, i, q, turn_ids, qfile, checks))
    return out


def _ids(values: list) -> list[str]:
    """Message ids as turn ids, nested lists flattened, in order, each once."""
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    return list(dict.fromkeys(str(x) for x in flat))


def _question(conv_id: str, ability: str, i: int, q: Any, turn_ids: set[str], qfile: Path,
              checks: Checks) -> Question:
    where = f"{ability}[{i}]"
    text = need(q, "question", str, qfile, where)
    gold_field = next((f for f in GOLD_FIELDS if q.get(f) is not None), None)
    if gold_field is None:
        raise DatasetError(str(qfile), f"{where} has no gold field (one of {', '.join(GOLD_FIELDS)})",
                           "add the question's reference answer")
    gold = q[gold_field]
    gold = gold if isinstance(gold, str) else "; ".join(map(str, gold)) if isinstance(gold, list) else str(gold)
    rubric = [str(r) for r in check_type(q.get("rubric", []), list, qfile, f"{where}.rubric")]
    src = q.get("source_chat_ids")
    groups: dict[str, list[str]] = {}
    items: list[list[str]] = []
    if isinstance(src, dict):
        groups = {name: _ids(check_type(v, list, qfile, f"{where}.source_chat_ids.{name}"))
                  for name, v in src.items()}
        pieces = list(dict.fromkeys(x for v in groups.values() for x in v))
    elif src is None:
        pieces = []
    else:
        src = check_type(src, list, qfile, f"{where}.source_chat_ids")
        pieces = _ids(src)
        if any(isinstance(x, list) for x in src):  # one item per event, some spanning several messages
            items = [_ids(x if isinstance(x, list) else [x]) for x in src]
    meta: dict[str, Any] = {"ability": ability, "gold_field": gold_field, "rubric": rubric,
                            "beam": {k: v for k, v in q.items() if k not in _KEPT_APART}}
    if groups:
        meta["evidence_groups"] = groups
    if items:
        meta["evidence_items"] = items
    if ability == "event_ordering":
        meta["reference_order"] = list(rubric)
    if ability == "abstention":
        meta["abstention"] = True
    missing = [p for p in pieces if p not in turn_ids]
    for p in missing:
        checks.add(f"{where}.source_chat_ids", f"message id {p} names no message of {conv_id!r}",
                   "correct or remove the id", kind="dangling evidence id")
    if missing:
        meta["missing_evidence"] = missing
    return Question(id=f"{conv_id}:{ability}:{i}", conv_id=conv_id, text=text, answer=gold, evidence=pieces,
                    category=ability_name(ability), metadata=meta)
