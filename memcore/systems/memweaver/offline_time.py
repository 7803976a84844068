"""Offline MemWeaver time (`mw_time`): time expressions resolved to the paper's absolute formats.

Relative expressions are resolved against the session date, absolute dates copied, in the
paper's formats ("20 May, 2022" / "May, 2022" / "2022").
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from memcore.systems.memweaver.graph import norm_name
from memcore.systems.memweaver.offline_extract import offline_entities, offline_relations
from memcore.text.dates import MONTHS, RELATIVE, normalize_time, parse_date
from memcore.text.sentences import sentences

_ABS_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS) + r"),?\s+(\d{4})\b", re.I)
_ABS_DAY_US = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)
_ABS_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + r"),?\s+(\d{4})\b", re.I)
_ABS_YEAR = re.compile(r"\b(?:in|since|of|during)\s+((?:19|20)\d{2})\b", re.I)
_DIGITS_AGO = re.compile(r"\b(\d+)\s+(day|week|month|year)s?\s+ago\b", re.I)


def to_paper_format(value: str) -> str:
    """Rewrite normalize_time output ("7 May 2023", "June 2023") in the paper's formats."""
    m = re.fullmatch(r"(\d{1,2}) ([A-Z][a-z]+) (\d{4})", value)
    if m:
        return f"{m.group(1)} {m.group(2)}, {m.group(3)}"
    m = re.fullmatch(r"([A-Z][a-z]+) (\d{4})", value)
    if m:
        return f"{m.group(1)}, {m.group(2)}"
    m = re.fullmatch(r"the (week|weekend) (before|of|after) (\d{1,2}) ([A-Z][a-z]+) (\d{4})", value)
    if m:  # week granularity has no paper format: keep LoCoMo's anchored phrase
        return f"the {m.group(1)} {m.group(2)} {m.group(3)} {m.group(4)}, {m.group(5)}"
    return value if re.fullmatch(r"\d{4}", value) else ""


def time_expressions(text: str, anchor: str) -> list[tuple[int, str]]:
    """(position, absolute time in the paper's format) for every time expression in a text."""
    out: list[tuple[int, str]] = []
    for m in RELATIVE.finditer(text):
        val = to_paper_format(normalize_time(m.group(0), anchor))
        if val:
            out.append((m.start(), val))
    a = parse_date(anchor) if anchor else None
    for m in _DIGITS_AGO.finditer(text):
        if a is not None and all(pos != m.start() for pos, _ in out):
            words = {"day": "days", "week": "weeks", "month": "months", "year": "years"}
            val = normalize_time(f"{_num_word(int(m.group(1)))} {words[m.group(2).lower()]} ago", a)
            if val:
                out.append((m.start(), to_paper_format(val) or val))
    taken: list[tuple[int, int]] = []
    for rx, kind in ((_ABS_DAY, "d"), (_ABS_DAY_US, "u"), (_ABS_MONTH, "m"), (_ABS_YEAR, "y")):
        for m in rx.finditer(text):
            if any(s <= m.start() < e for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            g = m.groups()
            if kind == "d":
                val = f"{int(g[0])} {g[1].capitalize()}, {g[2]}"
            elif kind == "u":
                val = f"{int(g[1])} {g[0].capitalize()}, {g[2]}"
            elif kind == "m":
                val = f"{g[0].capitalize()}, {g[1]}"
            else:
                val = g[0]
            out.append((m.start(), val))
    return sorted(out)


def _num_word(n: int) -> str:
    return {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}.get(n, "a few")


@functools.lru_cache(maxsize=4096)
def _targets(base_json: str) -> dict[str, str]:
    """{"source relation target": target} of the relations the offline extraction finds in one turn's inputs
    (json): one extraction per turn, not one per relation."""
    base = json.loads(base_json)
    names = list(dict.fromkeys(n for n in offline_entities(base)["entities"] if norm_name(n)))
    found: dict[str, str] = {}
    for r in offline_relations({**base, "entities": names})["relations"] if len(names) >= 2 else []:
        found.setdefault(f"{r['source']} {r['relation']} {r['target']}", str(r["target"]))
    return found


def relation_sentence(inputs: dict[str, Any]) -> str:
    """The sentence of the turn that mentions the relation's target, '' when unknown. The input names the
    relation as "source relation target"; the target is found by redoing the offline extraction of the turn
    (the same inputs give the same entities and relations) and matching the relation's text."""
    base = json.dumps({k: v for k, v in inputs.items() if k != "relation"}, sort_keys=True, default=str)
    target = _targets(base).get(str(inputs.get("relation", "")), "")
    low = target.lower()
    return next((s for s in sentences(str(inputs.get("text", ""))) if low in s.lower()), "") if target else ""


def offline_time(inputs: dict[str, Any]) -> dict[str, str]:
    """The time expression of the relation's own sentence, else the turn's only one, else ""."""
    text, anchor = str(inputs.get("text", "")), str(inputs.get("date", ""))
    clause = relation_sentence(inputs)
    if clause:
        own = time_expressions(clause, anchor)
        if own:
            return {"absolute_time": own[0][1]}
    found = list(dict.fromkeys(v for _, v in time_expressions(text, anchor)))
    return {"absolute_time": found[0] if len(found) == 1 else ""}
