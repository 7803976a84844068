"""Dates: parsing session dates (LoCoMo, LongMemEval, ISO), formatting, relative time expressions.

Deterministic: every relative expression is resolved against an explicit anchor date, never
against the clock.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import lru_cache

MONTHS = ("january february march april may june july august september october november december").split()


@lru_cache(maxsize=4096)
def parse_date(s: str) -> date | None:
    """A date from strings like "1:56 pm on 8 May, 2023", "2023-05-08T13:56:00" or "8 May 2023"."""
    s = s.strip()
    if not s:
        return None
    try:
        return datetime.fromisoformat(s.replace("Z", "")).date()
    except ValueError:
        pass
    m = re.search(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", s)
    if m and m.group(2).lower() in MONTHS:
        return date(int(m.group(3)), MONTHS.index(m.group(2).lower()) + 1, int(m.group(1)))
    m = re.search(r"([A-Za-z]+)\s+(\d{1,2}),?\s+(\d{4})", s)
    if m and m.group(1).lower() in MONTHS:
        return date(int(m.group(3)), MONTHS.index(m.group(1).lower()) + 1, int(m.group(2)))
    return None


def fmt_day(d: date) -> str:
    """"8 May 2023" (LoCoMo's answer style)."""
    return f"{d.day} {MONTHS[d.month - 1].capitalize()} {d.year}"


def day_of(date: str) -> str:
    """"8 May 2023" for any date string memcore knows, else the string itself."""
    m = re.match(r"^(\d{4})/(\d{1,2})/(\d{1,2})\b", date)  # LongMemEval: "2023/05/20 (Sat) 02:21"
    d = parse_date(f"{m[1]}-{int(m[2]):02d}-{int(m[3]):02d}" if m else date) if date else None
    return fmt_day(d) if d else date


def fmt_month(d: date) -> str:
    """"May 2023"."""
    return f"{MONTHS[d.month - 1].capitalize()} {d.year}"


WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
WEEKDAY_ABBR = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday", "thu": "thursday",
                "thur": "thursday", "thurs": "thursday", "fri": "friday", "sat": "saturday", "sun": "sunday"}
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
        "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "few": 3, "a few": 3, "couple of": 2, "a couple of": 2,
        "couple": 2, "a couple": 2, "several": 3}
NUMBER_WORDS = {w: n for w, n in _NUM.items() if " " not in w and w not in ("a", "an", "few", "couple", "several")}

_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
_UNIT = r"(?:week|weekend|month|year|summer|winter|spring|fall|autumn|" + _WD + r")"
_COUNT = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2}|a few|few|" \
         r"a couple of|couple of|a couple|several)"
RELATIVE = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last night|this (?:morning|afternoon|evening)|earlier today|"
    r"(?:earlier|later) this (?:week|month|year)|"
    r"(?:last|this past|past|this|next|this coming) " + _UNIT + r"|"
    + _COUNT + r" (?:days?|weeks?|weekends?|months?|years?) ago|"
    r"on " + _WD + r")\b(?!-)", re.I)


def _shift_month(a: date, n: int) -> date:
    y, mo = divmod(a.month - 1 + n, 12)
    return date(a.year + y, mo + 1, 1)


def _weekday_name(word: str) -> str:
    w = word.lower().rstrip(".")
    return WEEKDAY_ABBR.get(w, w)


def normalize_time(expr: str, anchor: date | str | None, *, style: str = "exact") -> str:
    """Absolute time for a relative expression, at the granularity it names.

    "yesterday" on 8 May 2023 -> "7 May 2023"; "last year" -> "2022"; "next month" ->
    "June 2023"; "last week" -> "the week before 8 May 2023"; "" when not understood.
    style="locomo" words weekdays and week counts as LoCoMo's gold answers do:
    "last Friday" -> "the Friday before 8 May 2023", "two weeks ago" -> "two weeks before 8 May 2023".
    """
    a = parse_date(anchor) if isinstance(anchor, str) else anchor
    if a is None:
        return ""
    loc = style == "locomo"
    e = " ".join(expr.lower().split())
    if e in ("today", "tonight", "earlier today") or e.startswith("this ") and e[5:] in ("morning", "afternoon",
                                                                                      "evening"):
        return fmt_day(a)
    if e in ("yesterday", "last night"):
        return fmt_day(a - timedelta(days=1))
    if e == "tomorrow":
        return fmt_day(a + timedelta(days=1))
    m = re.fullmatch(r"(?:earlier|later) this (week|month|year)", e)
    if m:
        e = f"this {m.group(1)}"
    m = re.fullmatch(r"(last|this past|past|this|next|this coming|on) (\w+)", e)
    if m:
        rel, unit = m.groups()
        rel = {"this past": "last", "past": "last", "this coming": "next", "on": "last"}.get(rel, rel)
        unit = _weekday_name(unit)
        shift = {"last": -1, "this": 0, "next": 1}[rel]
        if unit == "year":
            return str(a.year + shift)
        if unit == "month":
            return fmt_month(_shift_month(a, shift))
        if unit in ("week", "weekend"):
            word = {"last": "before", "this": "of", "next": "after"}[rel]
            return f"the {unit} {word} {fmt_day(a)}"
        if unit in WEEKDAYS:
            if loc and rel != "this":
                return f"the {unit.capitalize()} {'before' if rel == 'last' else 'after'} {fmt_day(a)}"
            if rel == "last":
                return fmt_day(a - timedelta(days=(a.weekday() - WEEKDAYS.index(unit)) % 7 or 7))
            fwd = (WEEKDAYS.index(unit) - a.weekday()) % 7 or 7
            return fmt_day(a + timedelta(days=fwd if rel == "next" else fwd % 7))
        if unit in _SEASONS:
            start = _SEASONS[unit]
            year = a.year + shift if rel != "this" else a.year
            if rel == "last" and a.month >= start + 3:
                year = a.year  # the season already ended this year
            if rel == "next" and a.month < start:
                year = a.year
            return f"{unit} {year}"
        return ""
    m = re.fullmatch(r"(a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2}|a few|few|"
                     r"a couple of|couple of|a couple|several) (day|week|weekend|month|year)s? ago", e)
    if m:
        word, unit = m.groups()
        n = int(word) if word.isdigit() else _NUM[word]
        vague = word in ("a few", "few", "several", "a couple", "couple of", "a couple of")
        if unit == "day":
            if loc and vague:
                return f"{word} days before {fmt_day(a)}"
            return fmt_day(a - timedelta(days=n))
        if unit in ("week", "weekend"):
            if n == 1:
                return f"the {unit} before {fmt_day(a)}"
            if loc:
                return f"{word} {unit}s before {fmt_day(a)}"
            if unit == "weekend":
                return f"the weekend before {fmt_day(a - timedelta(weeks=n - 1))}"
            return f"the week of {fmt_day(a - timedelta(weeks=n))}"
        if unit == "month":
            return fmt_month(_shift_month(a, -n))
        if loc and vague:
            return f"{word} years before {a.year}"
        return str(a.year - n)
    return ""


def resolve_dates(text: str, anchor: date | str | None) -> str:
    """Annotate relative time expressions with their absolute value: "last year (2022)"."""
    def rep(m: re.Match) -> str:
        val = normalize_time(m.group(0), anchor)
        return f"{m.group(0)} ({val})" if val else m.group(0)

    return RELATIVE.sub(rep, text)
