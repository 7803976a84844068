"""Short answer fragments for open ("what ...") questions in the offline `answer` role.

Sentences are cut into clauses; each clause gives candidates (the words after the question's
matched words, the words before them, or the whole clause), and candidates are scored by how
well their sentence matches the question, how much new information they carry (content words
not in the question), their length, and whether they are small talk or a bare time expression.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memcore.text.dates import RELATIVE
from memcore.text.terms import STOPWORDS, stem

_SYNONYM_GROUPS = ("symbolize represent mean stand", "realize learn understand", "like love enjoy fan favorite fave",
                   "recommend suggest", "motivate inspire", "kid child", "job work career", "buy purchase",
                   "make create build", "photo picture pic", "trip travel vacation", "excited thrilled",
                   "destress relax unwind", "attend visit", "gift present", "hobby enjoy", "feel felt",
                   "watch see", "favorite best", "remind reminder",
                   "dog puppy pup pooch doggy beagle labrador poodle terrier retriever spaniel corgi husky",
                   "cat kitten kitty", "pet dog puppy cat kitten", "teach instructor teacher")
_JUNK_WORDS = """great awesome amazing cool thanks congrats wow glad nice super sound sounds fun
totally absolutely definitely cute sweet lovely happy proud hear heard stunning gorgeous beautiful incredible
wonderful fantastic best talk chat catch good bad feel tough hard stuff wish luck hug hugs course agree
yay woohoo exciting special hope means long along right want wanted lot lots way time day guy kind sort bet
pretty check glad miss love loved thank sure wait can't yeah hey blast crazy insane wild yep yup nope haha lol
oh ok okay hmm trust sometime someday forget"""
_FEELING_WORDS = """happy proud glad excited exciting amazing awesome great good bad tough hard
beautiful incredible wonderful fantastic lovely special stunning gorgeous love loved crazy insane wild cool nice
super fun sweet cute"""


@lru_cache(maxsize=1)
def lexicon() -> tuple[dict[str, frozenset[str]], frozenset[str], frozenset[str]]:
    """(synonyms, junk, feelings) as stems; built on first use (stemming imports nltk)."""
    synonyms: dict[str, frozenset[str]] = {}
    for g in _SYNONYM_GROUPS:
        st = [stem(w) for w in g.split()]
        for w in st:
            synonyms[w] = synonyms.get(w, frozenset()) | frozenset(x for x in st if x != w)
    return (synonyms, frozenset(stem(w) for w in _JUNK_WORDS.split()),
            frozenset(stem(w) for w in _FEELING_WORDS.split()))


_FEELING_Q = re.compile(r"\b(feel|felt|feeling|describe|attitude|react|reaction|sentiment|think of|opinion|mood|"
                        r"doing|going)\b|^how (is|was|are|were)\b", re.I)
_PRONOUN_ONLY = frozenset("it this that these those them they he she him her one something anything everything".split())
_CLAUSE_BREAK = re.compile(
    r"\s*(?:[;:!?()]|\.(?:\s|$)|\s[-\u2013\u2014]+\s?|[\u2013\u2014]|--|"
    r",(?=\s+(?:I|I'm|I've|we|you|he|she|they|it|it's|that|which|who|but|so|because|and (?:I|we|it|she|he|they))\b)|"
    r"\b(?:but|because|although|though|while|whereas|so that|when|whenever|where|if|unless|until)\b)")
_LEAD = frozenset("""that is was are were be been of for about it so really just to the a an some with on in at by
as like my our me up out and or i we you he she they am have has had this these those there here did do does
go went got get from into very also even still then i'm i've we're it's that's what which who when finally
actually recently lately always usually btw yep yup yeah nope haha lol oh ok okay hmm well""".split())
_TRAIL = frozenset("""the a an and or to of for with my our that is was it in on at so really too though lately
recently now together yesterday today ago last this week weekend year month as very once always again anymore""".split())
MAX_WORDS = 9
CAPTION_PENALTY = 0.2
HEAD = 0.35
VERB = 0.55  # bonus of the words right after the question's main verb
AFTER = 0.35  # bonus of the words after the question's last matched word in a clause
BETWEEN = 0.35  # ... between the first and last matched words
BEFORE = 0.15  # ... before the first matched word
NOVEL = 0.1  # per new content word (up to three)
LONG = 0.04  # per word beyond FREE_WORDS
FREE_WORDS = 5
_HEAD_CUT = re.compile(r"(?<=\w\w)\s+(?=(?:for|to|with|in|on|at|from|because|and|but|so|since|which|that|when|"
                       r"while|after|before|by|as|than|if)\b)", re.I)
_PHOTO_Q = re.compile(r"\b(photo|picture|pic|image|shar\w*|show\w*|look\w* like|paint\w*|drew|draw\w*|made|make)\b", re.I)


def matches(stem_set: frozenset[str] | set[str], term: str) -> bool:
    """Whether a set of stems holds a question term or one of its synonyms."""
    return term in stem_set or not lexicon()[0].get(term, _NO_SYNONYMS).isdisjoint(stem_set)  # no set built per call


_NO_SYNONYMS: frozenset[str] = frozenset()


def word_stem(word: str) -> str:
    """The stem of one token ("" for stopwords)."""
    w = re.sub(r"'(s|re|ve|ll|d|m)$", "", word.lower().replace("\u2019", "'"))
    return stem(w) if w and w not in STOPWORDS else ""


@dataclass(frozen=True)
class FragmentSource:
    """A sentence offered to fragment extraction with its question-coverage score."""

    text: str
    cover: float
    caption: bool = False
    question: bool = False


def trim(span: str) -> str:
    """Drop leading/trailing function words, time expressions and punctuation; keep at most MAX_WORDS words."""
    span = RELATIVE.sub(" ", span)
    words = span.split()
    while words and words[0].lower().strip(",.!?'\"") in _LEAD:
        words = words[1:]
    while words and words[-1].lower().strip(",.!?'\"") in _TRAIL:
        words = words[:-1]
    return " ".join(words[:MAX_WORDS]).strip(" ,.!?;:-\"'")


def _clauses(sentence: str) -> list[str]:
    parts, last = [], 0
    for m in _CLAUSE_BREAK.finditer(sentence):
        parts.append(sentence[last:m.start()])
        last = m.end()
    parts.append(sentence[last:])
    return [p.strip() for p in parts if p.strip()]


def _novel(piece: str, qstems: set[str], names: set[str]) -> list[str]:
    out = []
    for w in re.findall(r"[A-Za-z0-9][\w'\-]*", piece):
        st = word_stem(w)
        if st and len(st) > 1 and not matches(qstems, st) and st not in qstems and w.lower() not in names:
            out.append(st)
    return out


def _candidates(clause: str, qstems: set[str], focus: str = "") -> list[tuple[str, str]]:
    toks = list(re.finditer(r"[A-Za-z0-9][\w'\-]*", clause))
    hits = [i for i, m in enumerate(toks) if (st := word_stem(m.group(0))) and (st in qstems or any(
        matches(frozenset([st]), q) for q in qstems))]
    if not hits:
        return [("clause", clause)]
    after = clause[toks[hits[-1]].end():]
    out = [("after", after), ("before", clause[: toks[hits[0]].start()])]
    verb = [i for i in hits if focus and matches(frozenset([word_stem(toks[i].group(0))]), focus)]
    if verb and verb[0] != hits[-1]:  # "What did Nate make?": the object after the question's verb
        obj = clause[toks[verb[0]].end():]
        out.append(("verb", _HEAD_CUT.split(obj, maxsplit=1)[0]))
    head = _HEAD_CUT.split(after, maxsplit=1)[0]
    if head.strip() and len(head) < len(after.rstrip()):  # "bought [this candle] for the atmosphere"
        out.append(("head", head))
    if len(hits) > 1:
        out.append(("between", clause[toks[hits[0]].end(): toks[hits[-1]].start()]))
    return out


def best_fragment(sources: Sequence[FragmentSource], qstems: set[str], names: Sequence[str] = (),
                  question: str = "", focus: str = "") -> str:
    """The best-scoring short fragment over the sources ("" when none carries new information).

    Small talk ("sounds great") is no answer, except to questions about feelings or opinions. `focus`
    is the stem of the question's main verb: the words right after it in a sentence are a candidate too.
    """
    lower_names = {n.lower() for n in names}
    _, junk, feelings = lexicon()
    junk_words = junk - feelings if _FEELING_Q.search(question) else junk
    photo_q = bool(_PHOTO_Q.search(question))
    best, best_score = "", float("-inf")
    for rank, src in enumerate(sources):
        for ci, clause in enumerate(_clauses(src.text)):
            for where, raw in _candidates(clause, qstems, focus):
                piece = trim(raw)
                novel = _novel(piece, qstems, lower_names)
                if not piece or not novel or all(w.lower() in _PRONOUN_ONLY for w in piece.split()):
                    continue
                junk = sum(1 for w in novel if w in junk_words) / len(novel)
                if junk > 0.5:  # small talk ("sounds great", "so awesome") is no answer
                    continue
                n = len(piece.split())
                score = src.cover + {"after": AFTER, "head": HEAD, "verb": VERB, "between": BETWEEN, "before": BEFORE,
                                     "clause": 0.0}[where]
                score += NOVEL * min(len(novel), 3) - LONG * max(0, n - FREE_WORDS) - 0.02 * rank - 0.01 * ci
                score -= 0.5 * junk
                if RELATIVE.search(piece) and len(novel) <= 2:
                    score -= 0.4
                if src.question:
                    score -= 0.4
                if src.caption and not photo_q:  # a photo's caption answers questions about the photo
                    score -= CAPTION_PENALTY
                if score > best_score:
                    best, best_score = piece, score
    return best
