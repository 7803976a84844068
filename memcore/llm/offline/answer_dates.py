"""Dates for the offline `answer` role: date spans resolved against the passage date, question periods.

`date_span` finds the first date in a sentence ("yesterday" -> "7 May 2023" on 8 May 2023, "last
Friday" -> "the Friday before 8 May 2023", "for three years now" -> the year it started);
`question_period` reads the time a question restricts itself to ("in May 2023").
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from memcore.text.dates import MONTHS, NUMBER_WORDS, RELATIVE, fmt_day, fmt_month, normalize_time, parse_date

MON = r"(?:" + "|".join(m.capitalize() for m in MONTHS) + r"|" + "|".join(m[:3].capitalize() for m in MONTHS) + r")"
_DAYMONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?: of)? (" + MON + r")\.?,?(?: (\d{4}))?\b")
MONTH_DAY = re.compile(r"\b(" + MON + r")\.? (\d{1,2})(?:st|nd|rd|th)?\b,?(?: (\d{4}))?")
MONTH_YEAR = re.compile(r"\b(?:in |of |during |since |by )?(" + MON + r"),? (\d{4})\b")
_YEAR = re.compile(r"\b(in|since|during|of|back in|from|by)? ?((?:19|20)\d{2})\b")
_INMONTH = re.compile(r"\b(in|since|during|by|until|this|next|last) (" + MON + r")\b")
NUMWORD = r"(?:\d+(?:\.\d+)?|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r"|a few|a couple of|several|a)"
_AGO = re.compile(r"\b(" + NUMWORD + r" (?:years?|months?|weeks?|days?) ago)\b", re.I)
_LEAD_DATE = re.compile(r"^\s*On ([^,]{6,30}\d{4}),\s")
_FOR_SPAN = re.compile(r"\bfor (?:about |around |nearly |almost |over |just under |just over |roughly )?"
                       r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten) (years?|months?)(?: now)?\b", re.I)
_Q_DAY = re.compile(r"\b(?:on |in )?(?:(\d{1,2})(?:st|nd|rd|th)? (" + MON + r")|(" + MON + r") (\d{1,2})(?:st|nd|rd|th)?),? "
                    r"((?:19|20)\d{2})\b")
_QMONTH = re.compile(r"\b(?:in |during |of )?(?:the )?(?:(?:beginning|start|end|middle) of )?(" + MON +
                      r")\b(?:,? ((?:19|20)\d{2}))?")
_Q_YEAR = re.compile(r"\b(?:in|during) ((?:19|20)\d{2})\b")
_NOT_A_PERIOD = re.compile(r"\b(by|before|after|since|until|as of|between)\s*$", re.I)


def question_period(question: str) -> tuple[date | None, date | None, int | None, str]:
    """The time a question restricts itself to: (first day, last day, month-only, matched text).

    "on May 3, 2023" -> 3..11 May 2023 (conversations report events up to a week later);
    "in January 2022" -> January 2022 plus a week; "in May" -> month 5 of any year;
    "in 2023" -> the year. "by/before/after/as of ..." are not restrictions (None, None, None, "").
    """
    for rx in (_Q_DAY, _QMONTH, _Q_YEAR):
        for m in rx.finditer(question):
            if _NOT_A_PERIOD.search(question[: m.start()]):
                continue
            g = m.groups()
            if rx is _Q_DAY:
                day, mon = (g[0], g[1]) if g[0] else (g[3], g[2])
                d = date(int(g[4]), MONTHS.index(_month(mon).lower()) + 1, int(day))
                return d, d + timedelta(days=8), None, m.group(0)
            if rx is _QMONTH:
                if g[0] in ("May",) and not g[1] and not re.match(r"\s*(?:in|during|of)\b", m.group(0)):
                    continue  # "may" as a verb
                month = MONTHS.index(_month(g[0]).lower()) + 1
                if not g[1]:
                    return None, None, month, m.group(0)
                start = date(int(g[1]), month, 1)
                nxt = date(start.year + (month == 12), month % 12 + 1, 1)
                return start, nxt + timedelta(days=7), None, m.group(0)
            y = int(g[0])
            return date(y, 1, 1), date(y + 1, 1, 7), None, m.group(0)
    return None, None, None, ""


def in_period(when: str, period: tuple[date | None, date | None, int | None, str]) -> bool:
    """Whether a passage date falls in a question's period (see question_period)."""
    start, end, month, _ = period
    d = parse_date(when) if when else None
    if d is None or (start is None and month is None):
        return False
    if month is not None:
        return d.month == month or (d.month == month % 12 + 1 and d.day <= 7)
    return start <= d <= end


def date_span(text: str, date: str, sub: str) -> str:
    """The first date in a text, resolved against the passage date (LoCoMo style); "" when none."""
    if sub == "ago":
        m = _AGO.search(text)
        return m.group(1) if m else ""
    anchor = parse_date(date) if date else None
    lead = _LEAD_DATE.match(text)  # "On 8 May 2023, Caroline said ..." (a memory item's own date)
    if lead:
        anchor = parse_date(lead.group(1)) or anchor
        text = " " * lead.end() + text[lead.end():]
    found: list[tuple[int, str]] = []
    for m in RELATIVE.finditer(text):
        resolved = re.match(r"\s*\(([^)]{4,40})\)", text[m.end():])  # already resolved: "yesterday (7 May 2023)"
        val = resolved.group(1) if resolved else normalize_time(m.group(0), anchor, style="locomo") if anchor else ""
        if val:
            found.append((m.start(), val))
    for m in _DAYMONTH.finditer(text):
        found.append((m.start(), f"{int(m.group(1))} {_month(m.group(2))} {m.group(3) or _year(anchor)}".strip()))
    for m in MONTH_DAY.finditer(text):
        found.append((m.start(), f"{int(m.group(2))} {_month(m.group(1))} {m.group(3) or _year(anchor)}".strip()))
    for m in MONTH_YEAR.finditer(text):
        found.append((m.start(), f"{_month(m.group(1))} {m.group(2)}"))
    for m in _INMONTH.finditer(text):
        found.append((m.start(), f"{_month(m.group(2))} {_year(anchor)}".strip()))
    for m in _YEAR.finditer(text):
        found.append((m.start(), f"since {m.group(2)}" if m.group(1) == "since" else m.group(2)))
    if not found and anchor:  # "I've been playing for just under a year now" -> when it started
        since = _FOR_SPAN.search(text)
        if since:
            n = _amount(since.group(1))
            if n is not None and since.group(2).startswith("year"):
                found.append((since.start(), str(anchor.year - max(1, round(n)))))
            elif n is not None and since.group(2).startswith("month"):
                found.append((since.start(), fmt_month(anchor - timedelta(days=round(30.4 * n)))))
    if not found:
        return fmt_day(anchor) if lead and anchor and sub not in ("year", "month") else ""
    found.sort(key=lambda f: (f[0], -len(f[1])))
    val = found[0][1]
    if sub == "year":
        y = re.search(r"(?:19|20)\d{2}", val)
        return y.group(0) if y else val
    return val


def _amount(word: str) -> float | None:
    w = word.lower()
    if w in ("a", "an"):
        return 1.0
    if w in NUMBER_WORDS:
        return float(NUMBER_WORDS[w])
    try:
        return float(w)
    except ValueError:
        return None


def _month(name: str) -> str:
    low = name.lower()[:3]
    return next(m.capitalize() for m in MONTHS if m.startswith(low))


def _year(anchor) -> str:
    return str(anchor.year) if anchor else ""
