"""Terms: content words, stopwords, Porter stems, tf-idf keywords, Jaccard overlap.

Everything here is deterministic (no randomness, no dict-order or clock dependence).
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
STOPWORDS = frozenset("""a an the and or but if then so of to in on at for with by from as into onto about over
under after before during between through up down out off again further once is am are was were be been being
have has had having do does did doing i me my myself we our ours you your yours he him his she her hers it its
they them their theirs what which who whom whose this that these those there here when where why how all any
both each few more most other some such no nor not only own same than too very can will just should would could
may might must shall also yeah yes oh ok okay really like get got go going gonna wanna lot lots thing things
one ones much many well sure hey hi hello thanks thank bit way still even though""".split())

@lru_cache(maxsize=1)
def porter_stemmer():
    """nltk's Porter stemmer, imported on first use (importing nltk pulls in scipy: ~2 s)."""
    from nltk.stem import PorterStemmer

    return PorterStemmer()


def terms(text: str) -> list[str]:
    """Lower-cased content words of a text (stopwords removed), in order (a new list per call)."""
    return list(_terms(text) if len(text) <= CACHED_TEXT else _scan_terms(text))


# Texts whose terms and stems are remembered: the offline rules and measures read the same turns, items and
# passages again for every question and system (conv-26 with every system: ~97K term scans of a few thousand
# texts). Pure functions of the text; each call returns a new list. Only texts up to CACHED_TEXT characters are
# kept (a turn, an item, a sentence), so the cache stays small (a whole context is scanned each time).
TEXT_CACHE = 16384
CACHED_TEXT = 4096


def _scan_terms(text: str) -> tuple[str, ...]:
    # an ASCII text is lower-cased whole before the scan (the same words: WORD's classes hold both cases; ~40%
    # less CPU than a match object per word); another is scanned as it is, each word lower-cased (lower-casing can
    # turn a non-ASCII letter into an ASCII one, the Kelvin sign into "k", which WORD would then match)
    words = WORD.findall(text.lower()) if text.isascii() else [w.lower() for w in WORD.findall(text)]
    return tuple(w for w in (x.strip("'-") for x in words) if w and w not in STOPWORDS)


_terms = lru_cache(maxsize=TEXT_CACHE)(_scan_terms)


IRREGULAR = dict(pair.split(":") for pair in """made:make went:go gone:go saw:see seen:see took:take taken:take
gave:give given:give found:find met:meet ran:run bought:buy brought:bring taught:teach thought:think felt:feel
kept:keep left:leave lost:lose won:win wrote:write written:write drew:draw drawn:draw sang:sing sung:sing
began:begin begun:begin swam:swim told:tell said:say heard:hear built:build sent:send spent:spend held:hold
chose:choose chosen:choose grew:grow grown:grow knew:know known:know flew:fly drove:drive driven:drive rode:ride
ate:eat eaten:eat fell:fall broke:break broken:break spoke:speak stood:stand caught:catch fought:fight sold:sell
led:lead hid:hide hidden:hide threw:throw wore:wear became:become came:come got:get did:do done:do paid:pay
learnt:learn read:read kids:kid children:child mom:mother mum:mother dad:father""".split())


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of a lower-cased word, irregular verb forms first mapped to their base ("made" -> "make")."""
    return porter_stemmer().stem(IRREGULAR.get(word, word))


_CLITIC = re.compile(r"'(s|re|ve|ll|d|m)$")
_PARTS = re.compile(r"[-']")


@lru_cache(maxsize=65536)
def _word_stems(w: str) -> tuple[str, ...]:
    """The stems one content word contributes (none for "n't" forms; "well-known" -> two)."""
    if w.endswith("n't"):
        return ()
    return tuple(stem(part) for part in _PARTS.split(_CLITIC.sub("", w)) if len(part) > 1 and part not in STOPWORDS)


def stems(text: str) -> list[str]:
    """Stems of the content words of a text, in order ("painted pots" -> ["paint", "pot"]; a new list per call)."""
    return list(_stems(text) if len(text) <= CACHED_TEXT else _scan_stems(text))


def _scan_stems(text: str) -> tuple[str, ...]:
    return tuple(chain.from_iterable(map(_word_stems, terms(text.replace("\u2019", "'")))))


_stems = lru_cache(maxsize=TEXT_CACHE)(_scan_stems)


def term_set(text: str) -> set[str]:
    """The set of content words of a text."""
    return set(terms(text))


# A doc's keyword terms and term set, remembered whatever its length: a group of turns is labelled again each time
# it is re-clustered with a few more (MemWeaver's pending turns: hundreds of ~2,300-character turns, each scanned
# twice per label). Words are interned, so a remembered doc holds pointers, not copies of its words.
KEYWORD_DOCS = 2048


@lru_cache(maxsize=KEYWORD_DOCS)
def _keyword_terms(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    ts = [sys.intern(w) for w in terms(text)]
    return tuple(w for w in ts if len(w) > 2 and not w.isdigit()), frozenset(ts)


def keywords(docs: Sequence[str], k: int = 5, background: Sequence[str] = ()) -> list[str]:
    """Top-k keywords of the joined docs by tf-idf against the docs plus a background corpus.

    A doc's terms are remembered (`_keyword_terms`) and document frequencies are counted in one pass over the
    corpus (not one pass per word: that cost words x docs, quadratic in a large group's size); the counts, so
    the scores, are the same integers and floats."""
    doc_terms = [_keyword_terms(d) for d in docs]
    tf = Counter(chain.from_iterable(kw for kw, _ in doc_terms))
    if not tf:
        return []
    corpus = [ts for _, ts in doc_terms] + [term_set(d) for d in background]
    n = len(corpus)
    dfs = Counter(chain.from_iterable(corpus))

    def score(w: str) -> float:
        return tf[w] * (math.log((1 + n) / (1 + dfs[w])) + 1.0)

    return [w for w, _ in sorted(tf.items(), key=lambda kv: (-score(kv[0]), kv[0]))[:k]]


def overlap(a: str | set[str], b: str | set[str]) -> float:
    """Jaccard overlap of the content words of two texts (or term sets)."""
    sa = a if isinstance(a, set) else term_set(a)
    sb = b if isinstance(b, set) else term_set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)
