"""Sentences: splitting, names (capitalised spans), first -> third person, a question's answer type.

Everything here is deterministic (no randomness, no dict-order or clock dependence).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from memcore.text.dates import MONTHS, RELATIVE, WEEKDAY_ABBR, WEEKDAYS
from memcore.text.terms import STOPWORDS


def sentences(text: str) -> list[str]:
    """Split text into sentences on ., !, ? and line breaks."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text.strip())
    return [p.strip() for p in parts if p and p.strip()]


# ------------------------------------------------------------------ rewriting
_FIRST_PERSON = [
    (r"\bI am\b", "{s} is"), (r"\bI'm\b", "{s} is"), (r"\bI was\b", "{s} was"), (r"\bI have\b", "{s} has"),
    (r"\bI've\b", "{s} has"), (r"\bI'll\b", "{s} will"), (r"\bI'd\b", "{s} would"), (r"\bI\b", "{s}"),
    (r"\b[Mm]yself\b", "themself"), (r"\bmy\b", "{p}"), (r"\bMy\b", "{p}"), (r"\bme\b", "{s}"),
    (r"\bmine\b", "{p}"),
]


def third_person(text: str, speaker: str) -> str:
    """Rewrite a first-person utterance about the speaker in the third person (by name)."""
    out = text
    for pat, rep in _FIRST_PERSON:
        out = re.sub(pat, rep.format(s=speaker, p=f"{speaker}'s", o=speaker), out)
    out = re.sub(rf"\b{re.escape(speaker)} (don't|haven't|do not|have not)\b",
                 lambda m: f"{speaker} {_NEG3[m.group(1)]}", out)
    out = re.sub(rf"\b{re.escape(speaker)} (do|go|love|like|want|need|think|feel|hope|plan|know|see|get|make|"
                 rf"take|try|run|work|live|enjoy|have)\b", lambda m: f"{speaker} {_s3(m.group(1))}", out)
    return out


_NEG3 = {"don't": "doesn't", "haven't": "hasn't", "do not": "does not", "have not": "has not"}


def _s3(verb: str) -> str:
    irregular = {"do": "does", "go": "goes", "have": "has", "try": "tries"}
    return irregular.get(verb, verb + "s")


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


# Words that start sentences capitalised without naming anything: relative times,
# interjections, discourse markers.
SENTENCE_STARTERS = frozenset("""yesterday today tonight tomorrow last next this earlier lately recently later
now soon sometimes wow congrats congratulations awesome cool great sounds glad sorry nice haha lol omg aw aww
btw anyway anyways definitely totally absolutely exactly yup yep nope true love loved wish hope guess maybe
right sweet amazing wonderful woohoo yay ugh hmm um ah ooh whoa honestly actually seriously plus besides
speaking wait look check gonna thinking guess seeing being having making getting taking here there almost
never always perhaps let lets let's appreciate started start finally luckily unfortunately hopefully thankfully
sadly especially looks seems nothing something anything everything someone everyone please keep take make made
went had did tell told happy excited proud""".split())


def capitalised_spans(text: str, skip: Iterable[str] = (), *, common: Collection[str] = ()) -> list[str]:
    """Runs of capitalised words that look like names (rough named entities), in order, unique.

    Leading stopwords, interjections and relative-time words are dropped ("Hey Mel" -> "Mel",
    "Last Friday" and "Yesterday" -> nothing), as are months, weekdays, "I" / "I'm" and the
    possessive "'s" ("Caroline's" -> "Caroline"). Spans starting with a `skip` word are left out.
    A sentence-initial word that also occurs in lower case (in the text or in `common`, a
    vocabulary of lower-case words) is an ordinary word, not a name.
    """
    skip_l = {s.lower() for s in skip}
    here = set(re.findall(r"\b[a-z][a-z'\-]*", text))
    # `common` is looked into, never copied: the offline reader passes its whole context's vocabulary with
    # every sentence (a copy per call made a long context's answer quadratic: 62 of 160 s on a BEAM 100K chat)
    vocab = common if isinstance(common, (set, frozenset)) else set(common)
    out: list[str] = []
    for m in re.finditer(r"\b([A-Z][a-zA-Z'\u2019\-]*(?:\s+(?:of|de|the|van|von)?\s*[A-Z][a-zA-Z'\u2019\-]*)*)",
                         text):
        words = m.group(1).replace("\u2019", "'").split()
        initial = re.search(r"(^|[.!?:\"\u201c(\-]\s*)$", text[: m.start()]) is not None
        after = text[m.end():m.end() + 8].split()
        verb_like = initial and len(words) == 1 and bool(after) and after[0].lower().strip(",.!?") in _OBJECTS
        while words and (_not_a_name(words[0]) or initial and _lower_word(words[0], here, vocab)):
            words, initial = words[1:], False
        if verb_like:  # "Reminds me of ..." starts with a verb, not a name
            continue
        while words and words[-1].lower() in ("of", "de", "the", "van", "von"):
            words = words[:-1]
        if not words or words[0].lower() in skip_l or words[0].lower().removesuffix("'s") in skip_l:
            continue
        span = " ".join(words)
        span = span[:-2] if span.endswith("'s") else span.rstrip("'")
        low = span.lower()
        if low in MONTHS or low in WEEKDAYS or low in WEEKDAY_ABBR or len(span) < 2 or RELATIVE.fullmatch(span):
            continue
        out.append(span)
    return list(dict.fromkeys(out))


_OBJECTS = frozenset("me you us him them it my your our his their".split())


def _lower_word(word: str, here: set[str], vocab: Collection[str]) -> bool:
    """Whether a capitalised word also occurs in lower case: in the text itself or in the given vocabulary."""
    low = word.lower().removesuffix("'s")
    return low in here or low in vocab


def _not_a_name(word: str) -> bool:
    low = word.lower().rstrip("'").removesuffix("'s")
    return (low in STOPWORDS or low in SENTENCE_STARTERS or low == "i" or bool(re.match(r"i'", low))
            or low in MONTHS or low in WEEKDAYS or low in WEEKDAY_ABBR or bool(re.search(r"n't$|'(re|ve|ll|d|m)$", low)))
