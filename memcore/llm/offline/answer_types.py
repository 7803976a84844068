"""Answer spans by expected type for the offline `answer` role: dates, numbers, names, places, titles.

`question_kind` refines text.answer_type ("how long ago", "what year", titles, lists, hedged
yes/no); `extract_typed` finds a span of that type in evidence sentences, ordered best first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import date, timedelta

from memcore.llm.offline.answer_fragments import trim, word_stem
from memcore.text.dates import MONTHS, NUMBER_WORDS, RELATIVE, fmt_day, fmt_month, normalize_time, parse_date
from memcore.text.sentences import answer_type, capitalised_spans

_MON = r"(?:" + "|".join(m.capitalize() for m in MONTHS) + r"|" + "|".join(m[:3].capitalize() for m in MONTHS) + r")"
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?: of)? (" + _MON + r")\.?,?(?: (\d{4}))?\b")
_MONTH_DAY = re.compile(r"\b(" + _MON + r")\.? (\d{1,2})(?:st|nd|rd|th)?\b,?(?: (\d{4}))?")
_MONTH_YEAR = re.compile(r"\b(?:in |of |during |since |by )?(" + _MON + r"),? (\d{4})\b")
_YEAR = re.compile(r"\b(in|since|during|of|back in|from|by)? ?((?:19|20)\d{2})\b")
_IN_MONTH = re.compile(r"\b(in|since|during|by|until|this|next|last) (" + _MON + r")\b")
_NUMWORD = r"(?:\d+(?:\.\d+)?|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r"|a few|a couple of|several|a)"
_DURATION = re.compile(r"\b((?:about |around |nearly |almost |over )?" + _NUMWORD +
                       r"\+? (?:years?|months?|weeks?|days?|hours?|decades?))\b", re.I)
_SINCE = re.compile(r"\b(since (?:I was )?(?:\d+|" + _MON + r"|(?:19|20)\d{2})(?: \d{4})?)", re.I)
_AGO = re.compile(r"\b(" + _NUMWORD + r" (?:years?|months?|weeks?|days?) ago)\b", re.I)
_FREQ = re.compile(r"\b((?:once|twice|" + _NUMWORD + r" times?)(?: or (?:once|twice|\w+ times?))? "
                   r"(?:a|per|every) (?:day|week|month|year|weekend)|every (?:day|week|month|year|weekend|\w+day|"
                   r"other \w+|morning|night)|daily|weekly|monthly|yearly|annually)\b", re.I)
_COUNT = re.compile(r"\b(\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")\b(?!:)", re.I)
_PLACE_PREP = re.compile(r"\b(?:in|at|to|from|near|around|visit(?:ed|ing)?|across|through|into) (?:the )?$")
_PLACE_NOUN = re.compile(r"\b(?:to|at|in|from|near|by) ((?:the|a|my|our) )?((?:\w+ ){0,2}(?:beach|park|lake|mountains?|"
                         r"forest|museum|city|town|country|island|coast|river|hills?|trail|cafe|café|restaurant|"
                         r"library|school|church|center|centre|studio|gym|shelter|market|festival|camp|"
                         r"home|house|village|state|national park|canyon|ocean|sea))\b", re.I)
_PLACE_TAIL = re.compile(r"(?:\s+(?:[Ss]helter|[Pp]ark|[Cc]lub|[Cc]afe|[Cc]afé|[Rr]estaurant|[Mm]useum|[Ll]ibrary|[Ss]chool|"
                         r"[Cc]enter|[Cc]entre|[Ss]tudio|[Gg]ym|[Mm]arket|[Ff]estival|[Cc]amp|[Bb]each|[Ll]ake|"
                         r"[Ii]sland|[Mm]ountains?|[Tt]rail|[Ss]tadium|[Hh]all|[Bb]ar|[Hh]otel|[Ss]tore|[Ss]hop))+(?=\W|$)")
_KIN = re.compile(r"\bmy ((?:\w+ )?(?:mom|mother|dad|father|sister|brother|wife|husband|partner|son|daughter|"
                  r"grandma|grandmother|grandpa|grandfather|friend|friends|cousin|aunt|uncle|boss|kids|"
                  r"children|family|neighbou?r|mentor|teacher|coworker|colleague|roommate|boyfriend|girlfriend))\b",
                  re.I)
_REASON = re.compile(r"\b(?:because|'cause|cause|since|as|so that|in order to)\b (.+)", re.I)
_NEG = re.compile(r"\b(not|no|never|n't|nothing|nobody|neither|nor)\b|n't\b", re.I)
_LEAD_DATE = re.compile(r"^\s*On ([^,]{6,30}\d{4}),\s")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201d]{2,60})[\"\u201d]")
_NAME_Q = re.compile(r"^what(?: is|'s| was|'s)? (?:the )?name of\b|^what(?: is|'s| was) \w+(?:'s)? (?:\w+ )?(?:\w+'s )?name\b"
                     r"|^what (?:is|was|did \w+ name) (?:\w+'s|her|his|their) \w+(?: \w+)? (?:called|named)\b")
NAME_WORDS = frozenset({"name", "named", "called"})  # a name question's meta words: not looked for in the evidence
_TITLE_NOUN = re.compile(r"\b(book|books|novel|novels|song|songs|movie|movies|film|films|series|album|albums|band|"
                         r"bands|poem|podcast|title|called|named|artist|artists|singer|author|musician|musicians|game|games|"
                         r"trilogy|franchise)\b")


def question_kind(question: str) -> dict:
    """Expected answer type plus sub-type and flags: {"type", "sub", "list", "hedge"}."""
    q = " ".join(question.lower().split())
    kind = {"type": answer_type(question), "sub": "", "list": False, "hedge": False}
    if "how long ago" in q:
        kind.update(type="date", sub="ago")
    elif re.match(r"^(what|which) year\b", q) or re.search(r"\bin what year\b", q):
        kind.update(type="date", sub="year")
    elif re.match(r"^(what|which) month\b", q):
        kind.update(type="date", sub="month")
    elif re.match(r"^how (many|much)\b", q):
        kind["sub"] = "count"
    elif re.match(r"^how long\b", q):
        kind["sub"] = "duration"
    elif re.match(r"^how often\b", q):
        kind["sub"] = "frequency"
    elif re.match(r"^how old\b", q):
        kind["sub"] = "age"
    elif re.match(r"^(which|what) (city|country|state|town|place|park|beach|island|location)\b", q):
        kind["type"] = "place"
    elif kind["type"] == "thing" and _NAME_Q.search(q):
        kind.update(type="person", sub="name")
    elif kind["type"] in ("thing", "person") and _TITLE_NOUN.search(q):
        kind["sub"] = "title"
    if kind["type"] == "yesno":
        kind["hedge"] = bool(re.match(r"^(would|could|might|will|is it likely|does it seem)\b", q)) or "likely" in q
    m = re.match(r"^(?:what|which)(?: (?:kind|kinds|type|types) of)? (\w+)", q)
    plural_noun = bool(m and m.group(1).endswith("s") and not m.group(1).endswith("ss")
                       and m.group(1) not in ("is", "was", "does", "has", "this", "its", "his", "plans", "yes"))
    kind["list"] = plural_noun or bool(re.match(r"^(in what ways|what are some|what \w+ has \w+|where has)\b", q))
    return kind


_Q_DAY = re.compile(r"\b(?:on |in )?(?:(\d{1,2})(?:st|nd|rd|th)? (" + _MON + r")|(" + _MON + r") (\d{1,2})(?:st|nd|rd|th)?),? "
                    r"((?:19|20)\d{2})\b")
_Q_MONTH = re.compile(r"\b(?:in |during |of )?(?:the )?(?:(?:beginning|start|end|middle) of )?(" + _MON +
                      r")\b(?:,? ((?:19|20)\d{2}))?")
_Q_YEAR = re.compile(r"\b(?:in|during) ((?:19|20)\d{2})\b")
_NOT_A_PERIOD = re.compile(r"\b(by|before|after|since|until|as of|between)\s*$", re.I)


def question_period(question: str) -> tuple[date | None, date | None, int | None, str]:
    """The time a question restricts itself to: (first day, last day, month-only, matched text).

    "on May 3, 2023" -> 3..11 May 2023 (conversations report events up to a week later);
    "in January 2022" -> January 2022 plus a week; "in May" -> month 5 of any year;
    "in 2023" -> the year. "by/before/after/as of ..." are not restrictions (None, None, None, "").
    """
    for rx in (_Q_DAY, _Q_MONTH, _Q_YEAR):
        for m in rx.finditer(question):
            if _NOT_A_PERIOD.search(question[: m.start()]):
                continue
            g = m.groups()
            if rx is _Q_DAY:
                day, mon = (g[0], g[1]) if g[0] else (g[3], g[2])
                d = date(int(g[4]), MONTHS.index(_month(mon).lower()) + 1, int(day))
                return d, d + timedelta(days=8), None, m.group(0)
            if rx is _Q_MONTH:
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


def extract_typed(kind: dict, texts: Sequence[str], date: str, qstems: set[str], question: str,
                  strict: bool = False, common: Collection[str] = ()) -> str:
    """A span of the expected type from the first text that has one ("" when none; strict: no fallbacks)."""
    t, sub = kind["type"], kind["sub"]
    for text in texts:
        ans = ""
        if t == "date":
            ans = _date_span(text, date, sub)
        elif t == "number":
            ans = _number_span(text, sub, date)
        elif sub == "title":
            ans = _title_span(text, question, qstems, common)
        elif t == "person":
            ans = _person_span(text, question, qstems, common)
        elif t == "place":
            ans = _place_span(text, question, qstems, common)
        elif t == "reason" and not strict:
            m = _REASON.search(text)
            ans = trim(m.group(1)) if m else ""
        if ans:
            return ans
    if t == "person" and sub != "title":  # no person named: a name after "at", "in", "from" ...
        ans = next((a for text in texts if (a := _person_span(text, question, qstems, common, places_ok=True))), "")
        if ans:
            return ans
    if strict or not texts:
        return ""
    if t == "date":
        d = parse_date(date) if date else None
        if d is not None:
            return str(d.year) if sub == "year" else fmt_month(d) if sub == "month" else fmt_day(d)
    if t == "yesno":
        neg = _NEG.search(texts[0]) is not None
        word = "no" if neg else "yes"
        return f"Likely {word}" if kind.get("hedge") else word.capitalize()
    return ""


def _date_span(text: str, date: str, sub: str) -> str:
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
    for m in _DAY_MONTH.finditer(text):
        found.append((m.start(), f"{int(m.group(1))} {_month(m.group(2))} {m.group(3) or _year(anchor)}".strip()))
    for m in _MONTH_DAY.finditer(text):
        found.append((m.start(), f"{int(m.group(2))} {_month(m.group(1))} {m.group(3) or _year(anchor)}".strip()))
    for m in _MONTH_YEAR.finditer(text):
        found.append((m.start(), f"{_month(m.group(1))} {m.group(2)}"))
    for m in _IN_MONTH.finditer(text):
        found.append((m.start(), f"{_month(m.group(2))} {_year(anchor)}".strip()))
    for m in _YEAR.finditer(text):
        found.append((m.start(), f"since {m.group(2)}" if m.group(1) == "since" else m.group(2)))
    if not found:
        return fmt_day(anchor) if lead and anchor and sub not in ("year", "month") else ""
    found.sort(key=lambda f: (f[0], -len(f[1])))
    val = found[0][1]
    if sub == "year":
        y = re.search(r"(?:19|20)\d{2}", val)
        return y.group(0) if y else val
    return val


def _month(name: str) -> str:
    low = name.lower()[:3]
    return next(m.capitalize() for m in MONTHS if m.startswith(low))


def _year(anchor) -> str:  # noqa: ANN001
    return str(anchor.year) if anchor else ""


def _number_span(text: str, sub: str, date: str) -> str:
    if sub == "frequency":
        m = _FREQ.search(text)
        return m.group(1) if m else ""
    if sub in ("duration", "age"):
        m = _SINCE.search(text) if sub == "duration" else None
        d = _DURATION.search(text)
        if m and (not d or m.start() < d.start()):
            return m.group(1)
        if d:
            return re.sub(r"\s*old$", "", d.group(1))
    m = _COUNT.search(text)
    return m.group(1) if m else ""


def _qwords(question: str) -> set[str]:
    return {w.lower().removesuffix("'s") for w in re.findall(r"[A-Za-z']+", question)}


def _by_proximity(text: str, spans: list[str], qstems: set[str]) -> list[str]:
    """Spans ordered by distance to the nearest matched question word (then by position)."""
    hits = [m.start() for m in re.finditer(r"[A-Za-z][\w'\-]*", text) if word_stem(m.group(0)) in qstems]

    def key(span: str) -> tuple[int, int]:
        i = text.find(span)
        return (min((abs(i - h) for h in hits), default=0), i)

    return sorted(spans, key=key)


def _widen(text: str, span: str) -> str:
    """A span with the capitalised words just before it ("Paws" -> "Happy Paws"), not sentence-initial ones."""
    i = text.find(span)
    while i > 0:
        m = re.search(r"(?<=[a-z,;] )([A-Z][a-z]+) $", text[:i])
        if not m or m.group(1) in ("I", "The", "A", "My", "Our"):
            break
        span, i = m.group(1) + " " + span, m.start(1)
    return span


def _names(text: str, question: str, qstems: set[str], common: Collection[str]) -> list[str]:
    qw = _qwords(question)
    spans = [_widen(text, sp) for sp in capitalised_spans(text, common=common)]
    spans = [sp for sp in dict.fromkeys(spans) if sp.lower() not in qw and not _vocative(text, sp)
             and not all(w.lower() in qw for w in sp.split())]
    return _by_proximity(text, spans, qstems)


def _person_span(text: str, question: str, qstems: set[str], common: Collection[str], places_ok: bool = False) -> str:
    names = _names(text, question, qstems, common)
    if names:  # "taught by Ruth Okafor" rather than "a class at Clay Corner"
        people = [n for n in names if not _PLACE_PREP.search(text[max(0, text.find(n) - 14):text.find(n)])]
        if people or places_ok:
            return (people or names)[0]
    m = _KIN.search(text)
    return m.group(1) if m else ""


def _title_span(text: str, question: str, qstems: set[str], common: Collection[str]) -> str:
    qw = _qwords(question)
    quoted = [q.strip(" ,.!?") for q in _QUOTED.findall(text) if q.lower().strip(" ,.!?") not in qw]
    if quoted:
        return _by_proximity(text, quoted, qstems)[0]
    names = [n for n in _names(text, question, qstems, common) if not n.isupper()]
    return names[0] if names else ""


def _vocative(text: str, span: str) -> bool:
    return any(re.match(r"\s*[,!?]", text[m.end():]) for m in re.finditer(re.escape(span), text))


def _place_span(text: str, question: str, qstems: set[str], common: Collection[str]) -> str:
    names = _names(text, question, qstems, common)
    after_prep = [n for n in names if _PLACE_PREP.search(text[max(0, text.find(n) - 14):text.find(n)])]
    if after_prep or names:
        name = (after_prep or names)[0]
        tail = _PLACE_TAIL.match(text[text.find(name) + len(name):])
        return name + tail.group(0).rstrip() if tail else name
    m = _PLACE_NOUN.search(text)
    return m.group(2) if m else ""
