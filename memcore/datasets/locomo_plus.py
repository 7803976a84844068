"""LoCoMo-Plus loader (Li et al., 2026): cue / trigger items stitched into LoCoMo conversations, the authors' way.

`locomo_plus.json` is a list of items `{relation_type, cue_dialogue: "A: ...\\nB: ...", trigger_query: "A: ...",
time_gap: "two weeks later", ...}`. The authors' deterministic rule (their evaluation code):
- item i goes into LoCoMo conversation i mod 10 of `locomo10.json`; A and B become its speaker_a / speaker_b;
- the trigger is placed 7 days after the conversation's last session and the cue `time_gap` before the
  trigger (weeks x 7, months x 30, years x 365 days, days x 1; a number written as digits or a word, "a"/"an" = 1;
  a gap it cannot read, such as "several months later", counts 0); each is a new session and sessions are
  ordered by time;
- one conversation per item (one memory per item is the official protocol); the question is the trigger query,
  the evidence the cue's turns, and there is no reference answer (an LLM judge labels the response correct /
  partial / wrong for whether it connects the trigger to the cue); category `cognitive`.

In memcore: the item's conversation is `<sample_id>+plus<i>`; the LoCoMo turns keep their ids (D3:7), the cue
turns are `CUE:1`, `CUE:2`; sessions are renumbered 1..N in time order (the cue session is marked in
metadata["cue_session"]). The trigger is asked as the question at the trigger's date (question_date, and
metadata["question_timestamp"]); it is not stored as a turn. Question.answer is "" (no reference answer:
metadata["no_reference_answer"] = True) and metadata["cue"] holds the cue dialogue for the judge.

The LoCoMo file is the one the user points to (`locomo=` argument, else $MEMCORE_LOCOMO_FILE, else a
`locomo10.json` beside the LoCoMo-Plus file or in `../locomo/`, else `../locomo/locomo8.json`). With 10
conversations they are taken in file order; with fewer, each is placed by its sample_id in locomo10.json's
order (LOCOMO10_ORDER), and items whose conversation the file lacks are skipped with a DatasetWarning naming
how many (e.g. the shared locomo8.json holds 8 of the 10). The file used is recorded in each conversation's
metadata["locomo_file"].
"""

from __future__ import annotations

import os
import re
import warnings
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memcore.datasets.checks import DatasetWarning
from memcore.datasets.locomo import check_type, describe, load_locomo, need, read_json
from memcore.errors import DatasetError
from memcore.types import Conversation, Question, Turn

LOCOMO10_ORDER = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48",
                  "conv-49", "conv-50")
CATEGORY = "cognitive"
TRIGGER_AFTER_DAYS = 7
UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_GAP = re.compile(r"\b(\d+|" + "|".join(_WORDS) + r")\s+(day|week|month|year)s?\b", re.I)
ENV = "MEMCORE_LOCOMO_FILE"
_FIX = (f"point to a LoCoMo file in the locomo10.json layout: set ${ENV}=/path/to/locomo10.json, or put "
        "locomo10.json beside the LoCoMo-Plus file")


def is_locomo_plus(data: Any) -> bool:
    """True when parsed JSON looks like locomo_plus.json (a list of items with cue_dialogue and trigger_query)."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and "cue_dialogue" in data[0] and "trigger_query" in data[0])


def gap_days(gap: str) -> int:
    """Days of a LoCoMo-Plus time gap by the authors' rule ("two weeks later" -> 14; unreadable -> 0)."""
    m = _GAP.search(gap or "")
    if not m:
        return 0
    n = int(m.group(1)) if m.group(1).isdigit() else _WORDS[m.group(1).lower()]
    return n * UNIT_DAYS[m.group(2).lower()]


def find_locomo(path: str | Path, locomo: str | Path | None = None) -> Path:
    """The LoCoMo file to stitch into (see the module doc for the order tried); DatasetError when none."""
    if locomo:
        return Path(locomo)
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    here = Path(path).resolve().parent
    for cand in (here / "locomo10.json", here.parent / "locomo" / "locomo10.json",
                 here.parent / "locomo" / "locomo8.json"):
        if cand.is_file():
            return cand
    raise DatasetError(str(path), "LoCoMo-Plus items are stitched into LoCoMo conversations, and no LoCoMo file "
                       "was found", _FIX)


def split_dialogue(text: str, speakers: list[str], path: str | Path, where: str) -> list[tuple[str, str]]:
    """(speaker, text) per line of "A: ...\\nB: ..."; A and B become the conversation's two speakers."""
    out = []
    for line in (ln.strip() for ln in text.splitlines()):
        if not line:
            continue
        m = re.match(r"^([AB])\s*:\s*(.*)$", line)
        if not m:
            raise DatasetError(str(path), f"{where}: the line {line[:40]!r} does not start with 'A:' or 'B:'",
                               "write each line of the dialogue as 'A: ...' or 'B: ...'")
        out.append((speakers[0] if m.group(1) == "A" else speakers[1], m.group(2)))
    return out


def _locomo_date(dt: datetime) -> str:
    """A date written as LoCoMo writes session dates ("1:56 pm on 8 May, 2023")."""
    return f"{dt.hour % 12 or 12}:{dt.minute:02d} {'am' if dt.hour < 12 else 'pm'} on {dt.day} {dt:%B}, {dt.year}"


def base_conversations(base: Path, lenient: bool) -> dict[int, Conversation]:
    """LoCoMo conversations by their index 0..9 in locomo10.json's order (file order when it holds 10)."""
    convs = load_locomo(base, lenient=lenient)
    if len(convs) == len(LOCOMO10_ORDER):
        return dict(enumerate(convs))
    by_id = {c.id: c for c in convs}
    return {i: by_id[sid] for i, sid in enumerate(LOCOMO10_ORDER) if sid in by_id}


def load_locomo_plus(path: str | Path, lenient: bool = False, locomo: str | Path | None = None) -> list[Conversation]:
    """Load locomo_plus.json stitched into the LoCoMo file found by `find_locomo` (one conversation per item)."""
    data = read_json(path)
    if not is_locomo_plus(data):
        raise DatasetError(str(path), f"is not a LoCoMo-Plus file: expected a list of {{cue_dialogue, "
                           f"trigger_query, time_gap, ...}} items, got {describe(data)}", "check the file")
    base = find_locomo(path, locomo)
    bases = base_conversations(base, lenient)
    out: list[Conversation] = []
    skipped = 0
    for i, item in enumerate(data):
        conv = bases.get(i % 10)
        if conv is None:
            skipped += 1
            continue
        out.append(stitch(i, check_type(item, dict, path, f"[{i}]"), conv, path, base))
    if skipped:
        have = ", ".join(sorted(c.id for c in bases.values()))
        warnings.warn(DatasetWarning(f"{path}: {skipped} of {len(data)} LoCoMo-Plus items skipped: their LoCoMo "
                                     f"conversation (item i -> conversation i mod 10 of locomo10.json) is not in "
                                     f"{base} (it holds {have})"), stacklevel=2)
    if not out:
        raise DatasetError(str(path), f"no item could be stitched: {base} holds none of locomo10.json's "
                           "conversations", _FIX)
    return out


def stitch(i: int, item: dict, conv: Conversation, path: str | Path, base: Path) -> Conversation:
    """Item i stitched into LoCoMo conversation `conv` (a new Conversation; `conv` is left unchanged)."""
    where = f"[{i}]"
    cue_text = need(item, "cue_dialogue", str, path, where)
    trigger = need(item, "trigger_query", str, path, where)
    gap = check_type(item.get("time_gap", ""), str, path, f"{where}.time_gap")
    last = max(datetime.fromisoformat(t.timestamp) for t in conv.turns)
    trigger_at = last + timedelta(days=TRIGGER_AFTER_DAYS)
    cue_at = trigger_at - timedelta(days=gap_days(gap))
    cid = f"{conv.id}+plus{i}"
    cue = split_dialogue(cue_text, conv.speakers, path, f"{where}.cue_dialogue")
    if not cue:
        raise DatasetError(str(path), f"{where}.cue_dialogue is empty", "give the item its cue dialogue")
    # sessions as (timestamp, original session or None for the cue, turns); stable sort keeps ties in place
    sessions: list[tuple[datetime, int | None]] = [
        (datetime.fromisoformat(ts[0].timestamp), n) for n, ts in conv.sessions().items()]
    sessions.append((cue_at, None))
    sessions.sort(key=lambda s: s[0])
    by_session = conv.sessions()
    turns: list[Turn] = []
    cue_session = 0
    for new, (_, old) in enumerate(sessions, start=1):
        if old is None:
            cue_session = new
            date = _locomo_date(cue_at)
            for j, (speaker, text) in enumerate(cue, start=1):
                turns.append(Turn(conv_id=cid, turn_id=f"CUE:{j}", index=len(turns), session=new, session_date=date,
                                  timestamp=cue_at.isoformat(), speaker=speaker, text=text))
            continue
        for t in by_session[old]:
            turns.append(Turn(conv_id=cid, turn_id=t.turn_id, index=len(turns), session=new,
                              session_date=t.session_date, timestamp=t.timestamp, speaker=t.speaker, text=t.text,
                              image_caption=t.image_caption))
    query = split_dialogue(trigger, conv.speakers, path, f"{where}.trigger_query")
    question = Question(
        id=f"locomo-plus:{i}", conv_id=cid, text=" ".join(text for _, text in query) or trigger, answer="",
        evidence=[f"CUE:{j}" for j in range(1, len(cue) + 1)], category=CATEGORY,
        question_date=_locomo_date(trigger_at),
        metadata={"no_reference_answer": True, "cue": cue_text, "trigger": trigger, "time_gap": gap,
                  "gap_days": gap_days(gap), "relation_type": item.get("relation_type", ""),
                  "question_timestamp": trigger_at.isoformat(), "asker": query[0][0] if query else conv.speakers[0]},
    )
    meta = {"locomo_plus_item": i, "stitched_into": conv.id, "locomo_file": str(base), "cue_session": cue_session,
            "cue_timestamp": cue_at.isoformat(), "trigger_timestamp": trigger_at.isoformat(),
            "relation_type": item.get("relation_type", "")}
    return Conversation(id=cid, speakers=list(conv.speakers), turns=turns, questions=[question], source="locomo-plus",
                        metadata=meta)
