"""Text tools shared by the offline engine's roles: terms, keywords, dates, rewriting, types.

Everything here is deterministic (no randomness, no dict-order or clock dependence).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from functools import lru_cache

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
STOPWORDS = frozenset("""a an the and or but if then so of to in on at for with by from as into onto about over
under after before during between through up down out off again further once is am are was were be been being
have has had having do does did doing i me my myself we our ours you your yours he him his she her hers it its
they them their theirs what which who whom whose this that these those there here when where why how all any
both each few more most other some such no nor not only own same than too very can will just should would could
may might must shall also yeah yes oh ok okay really like get got go going gonna wanna lot lots thing things
one ones much many well sure hey hi hello thanks thank bit way still even though""".split())

MONTHS = ("january february march april may june july august september october november december").split()


def terms(text: str) -> list[str]:
    """Lower-cased content words of a text (stopwords removed), in order."""
    return [w for w in (m.group(0).lower().strip("'-") for m in WORD.finditer(text)) if w and w not in STOPWORDS]


def term_set(text: str) -> set[str]:
    """The set of content words of a text."""
    return set(terms(text))


def sentences(text: str) -> list[str]:
    """Split text into sentences on ., !, ? and line breaks."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text.strip())
    return [p.strip() for p in parts if p and p.strip()]


def keywords(docs: Sequence[str], k: int = 5, background: Sequence[str] = ()) -> list[str]:
    """Top-k keywords of the joined docs by tf-idf against the docs plus a background corpus."""
    tf = Counter(w for d in docs for w in terms(d) if len(w) > 2 and not w.isdigit())
    if not tf:
        return []
    corpus = [term_set(d) for d in list(docs) + list(background)]
    n = len(corpus)

    def score(w: str) -> float:
        df = sum(1 for c in corpus if w in c)
        return tf[w] * (math.log((1 + n) / (1 + df)) + 1.0)

    return [w for w, _ in sorted(tf.items(), key=lambda kv: (-score(kv[0]), kv[0]))[:k]]


def overlap(a: str | set[str], b: str | set[str]) -> float:
    """Jaccard overlap of the content words of two texts (or term sets)."""
    sa = a if isinstance(a, set) else term_set(a)
    sb = b if isinstance(b, set) else term_set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


# ------------------------------------------------------------------ rewriting
_FIRST_PERSON = [
    (r"\bI am\b", "{s} is"), (r"\bI'm\b", "{s} is"), (r"\bI was\b", "{s} was"), (r"\bI have\b", "{s} has"),
    (r"\bI've\b", "{s} has"), (r"\bI'll\b", "{s} will"), (r"\bI'd\b", "{s} would"), (r"\bI\b", "{s}"),
    (r"\bmyself\b", "{o}self"), (r"\bmy\b", "{p}"), (r"\bMy\b", "{p}"), (r"\bme\b", "{s}"), (r"\bmine\b", "{p}s"),
]


def third_person(text: str, speaker: str) -> str:
    """Rewrite a first-person utterance about the speaker in the third person (by name)."""
    out = text
    for pat, rep in _FIRST_PERSON:
        out = re.sub(pat, rep.format(s=speaker, p=f"{speaker}'s", o=speaker), out)
    out = re.sub(rf"\b{re.escape(speaker)} (do|go|love|like|want|need|think|feel|hope|plan|know|see|get|make|"
                 rf"take|try|run|work|live|enjoy|have)\b", lambda m: f"{speaker} {_s3(m.group(1))}", out)
    return out


def _s3(verb: str) -> str:
    irregular = {"do": "does", "go": "goes", "have": "has", "try": "tries"}
    return irregular.get(verb, verb + "s")


# ---------------------------------------------------------------------- dates
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


def fmt_month(d: date) -> str:
    """"May 2023"."""
    return f"{MONTHS[d.month - 1].capitalize()} {d.year}"


_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3, "couple of": 2}

RELATIVE = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last night|this morning|"
    r"(?:last|this|next) (?:week|weekend|month|year|summer|winter|spring|fall|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:a|an|one|two|three|four|five|six|a few|a couple of) (?:days?|weeks?|months?|years?) ago|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b", re.I)


def normalize_time(expr: str, anchor: date | str | None) -> str:
    """Absolute time for a relative expression, at the granularity it names.

    "yesterday" on 8 May 2023 -> "7 May 2023"; "last year" -> "2022"; "next month" ->
    "June 2023"; "last week" -> "the week before 8 May 2023"; "" when not understood.
    """
    a = parse_date(anchor) if isinstance(anchor, str) else anchor
    if a is None:
        return ""
    e = expr.lower().strip()
    if e in ("today", "tonight", "this morning"):
        return fmt_day(a)
    if e in ("yesterday", "last night"):
        return fmt_day(a - timedelta(days=1))
    if e == "tomorrow":
        return fmt_day(a + timedelta(days=1))
    m = re.fullmatch(r"(last|this|next) (\w+)", e)
    if m:
        rel, unit = m.groups()
        shift = {"last": -1, "this": 0, "next": 1}[rel]
        if unit == "year":
            return str(a.year + shift)
        if unit == "month":
            y, mo = divmod(a.month - 1 + shift, 12)
            return fmt_month(date(a.year + y, mo + 1, 1))
        if unit in ("week", "weekend"):
            word = {"last": "before", "this": "of", "next": "after"}[rel]
            return f"the {unit} {word} {fmt_day(a)}"
        if unit in _WEEKDAYS:
            delta = (a.weekday() - _WEEKDAYS.index(unit)) % 7 or 7
            if rel == "last":
                return fmt_day(a - timedelta(days=delta))
            fwd = (_WEEKDAYS.index(unit) - a.weekday()) % 7 or 7
            return fmt_day(a + timedelta(days=fwd if rel == "next" else fwd % 7))
        return f"{rel} {unit} ({a.year})"
    m = re.fullmatch(r"on (\w+)", e)
    if m and m.group(1) in _WEEKDAYS:
        delta = (a.weekday() - _WEEKDAYS.index(m.group(1))) % 7 or 7
        return fmt_day(a - timedelta(days=delta))
    m = re.fullmatch(r"(a|an|one|two|three|four|five|six|a few|a couple of) (day|week|month|year)s? ago", e)
    if m:
        n, unit = _NUM[m.group(1)], m.group(2)
        if unit == "day":
            return fmt_day(a - timedelta(days=n))
        if unit == "week":
            return f"the week of {fmt_day(a - timedelta(weeks=n))}"
        if unit == "month":
            y, mo = divmod(a.month - 1 - n, 12)
            return fmt_month(date(a.year + y, mo + 1, 1))
        return str(a.year - n)
    return ""


def resolve_dates(text: str, anchor: date | str | None) -> str:
    """Annotate relative time expressions with their absolute value: "last year (2022)"."""
    def rep(m: re.Match) -> str:
        val = normalize_time(m.group(0), anchor)
        return f"{m.group(0)} ({val})" if val else m.group(0)

    return RELATIVE.sub(rep, text)


# ---------------------------------------------------------------- questions
def answer_type(question: str) -> str:
    """Expected answer type: date, number, person, place, yesno, reason or thing."""
    q = question.lower().strip()
    if re.match(r"^(when|what (date|day|month|year|time))\b", q) or "how long ago" in q:
        return "date"
    if re.match(r"^how (many|much|long|old|often)\b", q):
        return "number"
    if re.match(r"^(who|whom|whose)\b", q):
        return "person"
    if re.match(r"^where\b", q) or re.search(r"\bwhat (city|country|place|state)\b", q):
        return "place"
    if re.match(r"^(is|are|was|were|do|does|did|has|have|had|can|could|would|will|should)\b", q):
        return "yesno"
    if re.match(r"^why\b", q):
        return "reason"
    return "thing"


def capitalised_spans(text: str, skip: Iterable[str] = ()) -> list[str]:
    """Runs of capitalised words that are not sentence-initial stopwords (rough named entities)."""
    skip_l = {s.lower() for s in skip}
    out: list[str] = []
    for m in re.finditer(r"\b([A-Z][a-zA-Z'\-]+(?:\s+(?:of|de|the|van|von)?\s*[A-Z][a-zA-Z'\-]+)*)", text):
        span = m.group(1).strip()
        first = span.split()[0].lower()
        if first in STOPWORDS or first in skip_l or first.rstrip("'s") in ("i",):
            continue
        if span.lower() in (m_.capitalize().lower() for m_ in MONTHS) or span.lower() in _WEEKDAYS:
            continue
        out.append(span)
    return list(dict.fromkeys(out))
