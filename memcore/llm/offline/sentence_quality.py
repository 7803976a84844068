"""Sentence quality for offline memory writing: interjection cleanup, informativeness, salience.

Greetings, thanks, questions and content-free emotions are not informative; a sentence's
information score counts content words, named entities, numbers, dates and first person.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memcore.text.dates import MONTHS, RELATIVE
from memcore.text.sentences import capitalised_spans
from memcore.text.terms import STOPWORDS, terms

_LEAD = re.compile(r"^(?:(?:oh|wow|yeah|yes|yep|haha+|ha|hah|lol|well|so|hey|hi|aw+|omg|ok|okay|thanks|thank you|"
                   r"awesome|cool|great|nice|totally|absolutely|definitely|sure|true|hmm+|um+|ah+|ooh|whoa|"
                   r"honestly|actually|anyway|also|and|but)\b[\s,!.\-]*)+", re.I)
_GREETING = re.compile(r"^(hi|hey|hello|hiya|good (morning|afternoon|evening|night)|(it'?s |it was )?(so |really )?"
                       r"(good|great|nice|lovely) (to|talking|chatting|catching)|long time|bye|goodbye|see (you|ya)|"
                       r"talk (to you )?(soon|later)|take care|catch you|have a (good|great|nice|lovely))\b", re.I)
_THANKS = re.compile(r"\b(thanks|thank you|thx|appreciate (it|that|you))\b", re.I)
EMOTION = frozenset("""wow cool awesome great amazing love loved loving lovely glad happy sad sorry proud excited exciting
fun nice good sounds sound super totally absolutely definitely incredible wonderful fantastic beautiful cute sweet
inspiring powerful hear heard hope thrilled feel feeling felt stuff tough hard awful terrible bad best better
congrats congratulations glad blast keep keeping cheers luck wish hug hugs care wonderful gorgeous stunning
interesting cool neat rad kind thoughtful supportive appreciate awesome pretty special means mean
something anything everything always never totally true agree happen happens happened yay woohoo couldn't can't
don't won't wouldn't didn't done without lucky thankful grateful wanna gonna kinda really lot glad""".split())
FIRST_PERSON = re.compile(r"^(I|I'm|I've|I'd|I'll|My|We|We're|We've|Our|Me and|Myself)\b")


def clean(sentence: str, names: Sequence[str] = ()) -> str:
    """A sentence without leading interjections and addressee names ("Wow, Mel! I ..." -> "I ...")."""
    s = sentence.strip()
    for _ in range(3):
        s2 = _LEAD.sub("", s).strip()
        for n in names:
            s2 = re.sub(rf"^{re.escape(n.split()[0])}\b[\s,!.]*", "", s2).strip()
        if s2 == s:
            break
        s = s2
    return s[:1].upper() + s[1:] if s else s


def informative(sentence: str, names: Sequence[str] = ()) -> bool:
    """False for greetings, thanks, questions, fragments and content-free emotions."""
    s = sentence.strip()
    if not s or s.endswith("?") or _GREETING.match(s):
        return False
    if _THANKS.search(s) and len(content_terms(s, names)) < 3:
        return False
    return len(content_terms(s, names)) >= 2


def fact_worthy(sentence: str, names: Sequence[str] = ()) -> bool:
    """An informative sentence that says something concrete (3+ content words, or a name/number)."""
    concrete = len(set(content_terms(sentence, names))) >= 3 or re.search(r"\d", sentence)
    return informative(sentence, names) and bool(concrete or entities(sentence, names))


def entities(sentence: str, names: Sequence[str] = ()) -> list[str]:
    """Capitalised spans other than the speakers' names and "I'm", "I've", ..."""
    return [e for e in capitalised_spans(sentence, skip=names) if not re.match(r"I'|I\b", e)]


def content_terms(text: str, names: Sequence[str] = ()) -> list[str]:
    """Content words that are neither emotion/filler words nor the speakers' names."""
    skip = {p.lower() for n in names for p in n.split()}
    return [t for t in terms(text) if t not in EMOTION and t not in skip and len(t) > 1 and not _filler_contraction(t)]


def _filler_contraction(term: str) -> bool:
    """"that's", "i'm", "don't": contractions of function words."""
    head = term.split("'")[0]
    return "'" in term and (head in STOPWORDS or term.endswith("n't") or head in ("i", "you", "we", "they"))


def info_score(sentence: str, names: Sequence[str] = ()) -> float:
    """How much a sentence says: content words, named entities, numbers, dates, first person."""
    ct = content_terms(sentence, names)
    ents = entities(sentence, names)
    score = min(len(set(ct)), 8) + 2.0 * len(ents) + (1.0 if re.search(r"\d", sentence) else 0.0)
    score += 1.0 if RELATIVE.search(sentence) or has_date(sentence) else 0.0
    return score + (1.0 if FIRST_PERSON.match(sentence) else 0.0)


def has_date(text: str) -> bool:
    """Whether a text names a month or a year."""
    low = text.lower()
    return bool(re.search(r"\b(19|20)\d\d\b", low)) or any(re.search(rf"\b{m}\b", low) for m in MONTHS[:4] + MONTHS[5:])
