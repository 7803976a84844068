"""Answer spans by expected type for the offline `answer` role: dates, numbers, names, places, titles.

`question_kind` refines text.answer_type ("how long ago", "what year", titles, lists, hedged
yes/no); `extract_typed` finds a span of that type in evidence sentences, ordered best first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from memcore.llm.offline.answer_dates import MON, NUMWORD, date_span
from memcore.llm.offline.answer_fragments import trim, word_stem
from memcore.text.dates import NUMBER_WORDS, fmt_day, fmt_month, parse_date
from memcore.text.sentences import answer_type, capitalised_spans

_DURATION = re.compile(r"\b((?:about |around |nearly |almost |over )?" + NUMWORD +
                       r"\+? (?:years?|months?|weeks?|days?|hours?|decades?))\b", re.I)
_SINCE = re.compile(r"\b(since (?:I was )?(?:\d+|" + MON + r"|(?:19|20)\d{2})(?: \d{4})?)", re.I)
_FREQ = re.compile(r"\b((?:once|twice|" + NUMWORD + r" times?)(?: or (?:once|twice|\w+ times?))? "
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
_SO = re.compile(r"^(.+?),? so (?!that\b)(.+)$", re.I)
_PURPOSE = re.compile(r"\b(?:wanted|want|hoping|hope|hoped|decided|trying) to (.+)", re.I)
_NEG = re.compile(r"\b(not|no|never|n't|nothing|nobody|neither|nor)\b|n't\b", re.I)
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201d]{2,60})[\"\u201d]")
_NAME_Q = re.compile(r"^what(?: is|'s| was|'s)? (?:the )?name of\b|^what(?: is|'s| was) \w+(?:'s)? (?:\w+ )?(?:\w+'s )?name\b"
                     r"|^what (?:is|was|did \w+ name) (?:\w+'s|her|his|their) \w+(?: \w+)? (?:called|named)\b")
NAME_WORDS = frozenset({"name", "named", "called"})  # a name question's meta words: not looked for in the evidence
_NOT_MOD = frozenset("""love loved like liked enjoy enjoyed got get bought buy made make have had has want need
really very new some lot lots great good nice fav fave favorite favourite top best""".split())
_WHICH_NOUN = re.compile(r"^(?:which|what) (?:\w+ )?(\w+) (?:did|does|do|is|was|has|have|are|were|will)\b")
_DIST = re.compile(r"\b((?:\d+(?:\.\d+)?|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) +
                   r")(?:\s|-)?(?:km|kilomet(?:er|re)s?|miles?|met(?:er|re)s?|k)\b)", re.I)
_WEEKDAY = re.compile(r"\b((?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?)\b")
_KIND_OF = re.compile(r"\bwhat (?:kinds?|types?|sorts?) of (\w+)")
_FAVORITE = re.compile(r"\bfavou?rite (?:\w+ of )?(?:\w+ )?(\w+)\W*$")  # "favorite style of dance?" -> dance
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
    elif re.match(r"^how far\b", q):
        kind.update(type="number", sub="distance")
    elif re.search(r"\b(?:which|what) day of the week\b", q):
        kind.update(type="date", sub="weekday")
    elif re.match(r"^(which|what) (city|country|state|town|place|park|beach|island|location)\b", q):
        kind["type"] = "place"
    elif kind["type"] == "thing" and _NAME_Q.search(q):
        kind.update(type="person", sub="name")
    elif kind["type"] in ("thing", "person") and _TITLE_NOUN.search(q):
        kind["sub"] = "title"
    kind_of = _KIND_OF.search(q) or _FAVORITE.search(q)
    if kind["type"] == "thing" and kind_of and not kind["sub"]:
        kind.update(sub="kind", noun=kind_of.group(1))
    which = _WHICH_NOUN.match(q)
    if kind["type"] == "thing" and which and not kind["sub"]:  # "Which running club ...?": a name ending in "Club"
        kind.update(sub="named", noun=which.group(1))
    if kind["type"] == "yesno":
        kind["hedge"] = bool(re.match(r"^(would|could|might|will|is it likely|does it seem)\b", q)) or "likely" in q
    m = re.match(r"^(?:what|which)(?: (?:kind|kinds|type|types) of)? (\w+)", q)
    plural_noun = bool(m and m.group(1).endswith("s") and not m.group(1).endswith("ss")
                       and m.group(1) not in ("is", "was", "does", "has", "this", "its", "his", "plans", "yes"))
    kind["list"] = plural_noun or bool(re.match(r"^(in what ways|what are some|what \w+ has \w+|where has)\b", q))
    return kind


def extract_typed(kind: dict, texts: Sequence[str], date: str, qstems: set[str], question: str,
                  strict: bool = False, common: Collection[str] = ()) -> str:
    """A span of the expected type from the first text that has one ("" when none; strict: no fallbacks)."""
    t, sub = kind["type"], kind["sub"]
    for text in texts:
        ans = ""
        if sub == "weekday":
            m = _WEEKDAY.search(text)
            ans = m.group(1) if m else ""
        elif t == "date":
            ans = date_span(text, date, sub)
        elif t == "number":
            ans = _number_span(text, sub, date)
        elif sub == "title":
            ans = _title_span(text, question, qstems, common)
        elif t == "person":
            ans = _person_span(text, question, qstems, common)
        elif t == "place":
            ans = _place_span(text, question, qstems, common)
        elif sub == "kind":
            ans = _kind_span(text, kind["noun"])
        elif sub == "named":
            ans = _named_span(text, kind["noun"], question, qstems, common)
        elif t == "reason" and not strict:
            ans = _reason_span(text, qstems)
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


def _reason_span(text: str, qstems: set[str]) -> str:
    """ "because X" -> X; "X, so Y" -> X when Y is what the question asks about; "I wanted to X" -> X."""
    m = _REASON.search(text)
    if m:
        return trim(m.group(1))
    m = _SO.search(text)
    if m and _hits(m.group(2), qstems) > _hits(m.group(1), qstems):
        return trim(m.group(1))
    m = _PURPOSE.search(text)
    return trim(m.group(1)) if m else ""


def _hits(text: str, qstems: set[str]) -> int:
    return sum(1 for w in re.findall(r"[A-Za-z][\w'\-]*", text) if word_stem(w) in qstems)


def _kind_span(text: str, noun: str) -> str:
    """ "What kind of beer ...?" over "I don't like dark beer" -> "dark beer" (the noun's modifiers and the noun)."""
    target = word_stem(noun)
    toks = list(re.finditer(r"[A-Za-z](?:[\w'\-]*\w)?", text))
    for i, m in enumerate(toks):
        if word_stem(m.group(0)) != target:
            continue
        j = i
        while j > 0 and i - j < 3 and word_stem(toks[j - 1].group(0)) and toks[j - 1].group(0).lower() not in _NOT_MOD \
                and text[toks[j - 1].end():toks[j].start()].strip() in ("", "-"):
            j -= 1
        if j < i:
            return text[toks[j].start():m.end()]
    return ""


def _named_span(text: str, noun: str, question: str, qstems: set[str], common: Collection[str]) -> str:
    """A name for "which NOUN" questions: "the Northside Running Club" for "Which running club ...?"."""
    for name in _names(text, question, qstems, common):
        if name.lower().endswith(noun):
            return name
        nxt = re.match(r"\s+(" + re.escape(noun.capitalize()) + r")\b", text[text.find(name) + len(name):])
        if nxt:
            return f"{name} {nxt.group(1)}"
    return ""


def _number_span(text: str, sub: str, date: str) -> str:
    if sub == "distance":
        m = _DIST.search(text)
        return m.group(1) if m else ""
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


@lru_cache(maxsize=256)
def _qwords(question: str) -> frozenset[str]:  # asked once per sentence of the context: one question, many times
    return frozenset(w.lower().removesuffix("'s") for w in re.findall(r"[A-Za-z']+", question))


def _by_proximity(text: str, spans: list[str], qstems: set[str]) -> list[str]:
    """Spans ordered by distance to the nearest matched question word (then by position)."""
    if not spans:  # most sentences of a long context: no need to stem their words
        return []
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


_INITIAL_WORD = re.compile(r"[A-Z][a-z]{3,}(?:ly|ing)")  # "Highly recommend it", "Gaming has been ...": not names


def _initial_word(text: str, span: str) -> bool:
    """A sentence-initial adverb or gerund ("Highly", "Gaming") that capitalisation alone made look like a name."""
    i = text.find(span)
    return bool(_INITIAL_WORD.fullmatch(span)) and re.search(r"(^|[.!?:\"\u201c]\s*)$", text[:i]) is not None


def _names(text: str, question: str, qstems: set[str], common: Collection[str]) -> list[str]:
    qw = _qwords(question)
    spans = [_widen(text, sp) for sp in capitalised_spans(text, common=common)]
    spans = [sp for sp in dict.fromkeys(spans) if sp.lower() not in qw and not _vocative(text, sp)
             and not all(w.lower() in qw for w in sp.split()) and not _initial_word(text, sp)]
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
