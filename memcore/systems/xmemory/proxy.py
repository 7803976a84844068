"""xMemory's uncertainty proxy: the stand-in for the reader's predictive entropy when a model gives no logprobs.

Stage II of xMemory's retrieval keeps an episode when it lowers the reader's uncertainty about the
answer. The offline engine (and any model without token logprobs) cannot report that, so the system
measures it with `support_uncertainty` (see PROXY_DOC) and says so in the trace. The proxy is
continuous: sentences that match the question's rarer terms and hold the expected answer type lower
H; text that supports nothing raises H slightly (a reader is distracted by it), so an unrelated
episode gets a small negative gain, never exactly 0.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from memcore.text.dates import MONTHS
from memcore.text.sentences import answer_type, capitalised_spans, sentences
from memcore.text.terms import stems

PROXY_SCALE = 2.0  # H = SCALE * (1 - P) + dilution: about the range of a reader's mean token NLL (nats)
PROXY_CAP = 0.85  # no single sentence makes the reader certain
PROXY_OFF_TYPE = 0.5  # support factor of a sentence without the expected answer type
PROXY_DILUTION = 0.05  # distractor cost: 0.05 * ln(1 + words / 200)
PROXY_DOC = ("offline uncertainty proxy H = 2 (1 - P) + 0.05 ln(1 + words/200): P = noisy-OR over the "
             "context's distinct sentences of p = 0.85 m^2 t, m = idf-weighted soft match of the question's "
             "terms (same stem 1, shared 5-letter stem prefix 0.5; idf over the conversation's turns; a sentence "
             "matching only the speakers' names supports nothing), t = 1 when the sentence holds the expected "
             "answer type (date, number, person, place; a date only in the memory's timestamp 0.75), else 0.5. "
             "Supporting sentences lower H; text that supports nothing raises it slightly")
_STAMP = re.compile(r"^\s*\[([^\]]*)\]\s*")
_DATE = re.compile(r"\b(\d{4}|" + "|".join(MONTHS) + r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
                   r"yesterday|today|tonight|tomorrow|ago|last|next|week|weekend|month|year|since)\b", re.I)
_NUMBER = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several|few|"
                     r"once|twice|dozen|hundred|thousand)\b", re.I)


@dataclass
class TermIndex:
    """Document frequencies of stems over a conversation's turns (the proxy's idf), and the speakers' stems."""

    df: Counter[str] = field(default_factory=Counter)
    n: int = 0
    speakers: frozenset[str] = frozenset()

    @classmethod
    def build(cls, texts: Iterable[str], speakers: Iterable[str] = ()) -> TermIndex:
        """From texts such as "Speaker: content" (speaker names then weigh little) and the speakers' names."""
        idx = cls(speakers=frozenset(x for sp in speakers for x in stems(sp)))
        for t in texts:
            idx.df.update(set(stems(t)))
            idx.n += 1
        return idx

    def idf(self, term: str) -> float:
        """ln(1 + N / df), df >= 1 (1.0 for every term without an index)."""
        return math.log(1 + self.n / max(self.df.get(term, 0), 1)) if self.n else 1.0


@lru_cache(maxsize=65536)
def _sentence_stems(text: str) -> frozenset[str]:
    return frozenset(stems(text))


def _match(term: str, sent: frozenset[str]) -> float:
    if term in sent:
        return 1.0
    if len(term) >= 5 and any(len(s) >= 5 and s[:5] == term[:5] for s in sent):
        return 0.5
    return 0.0


def _type_factor(kind: str, body: str, stamp: str, names: set[str]) -> float:
    if kind == "date":
        return 1.0 if _DATE.search(body) else (0.75 if _DATE.search(stamp) else PROXY_OFF_TYPE)
    if kind == "number":
        return 1.0 if _NUMBER.search(body) else PROXY_OFF_TYPE
    if kind in ("person", "place"):
        return 1.0 if [s for s in capitalised_spans(body) if s.lower() not in names] else PROXY_OFF_TYPE
    return 1.0


def sentence_supports(question: str, context: str, index: TermIndex | None = None) -> list[tuple[float, str]]:
    """(support p, sentence) for the context's sentences that support the answer (lines may start "[timestamp]")."""
    index = index or TermIndex()
    q = {t: index.idf(t) for t in dict.fromkeys(stems(question))}
    total = sum(q.values())
    if not total:
        return []
    kind = answer_type(question)
    names = {w.lower() for w in capitalised_spans(question)}
    out = []
    for line in context.splitlines():
        m = _STAMP.match(line)
        stamp, body = (m.group(1), line[m.end():]) if m else ("", line)
        for sent in sentences(body):
            hits = {t: _match(t, _sentence_stems(sent)) for t in q}
            if any(v > 0 and t not in index.speakers for t, v in hits.items()):
                share = sum(q[t] * v for t, v in hits.items()) / total
                out.append((PROXY_CAP * share * share * _type_factor(kind, sent, stamp, names), sent))
    return out


def support_uncertainty(question: str, context: str, index: TermIndex | None = None) -> float:
    """The offline stand-in for the reader's uncertainty (see PROXY_DOC); lower = better supported."""
    best: dict[frozenset[str], float] = {}
    for p, sent in sentence_supports(question, context, index):  # a repeated sentence counts once
        key = _sentence_stems(sent)
        best[key] = max(best.get(key, 0.0), p)
    doubt = math.prod(1.0 - p for p in best.values())
    words = len(context.split())
    return round(PROXY_SCALE * doubt + PROXY_DILUTION * math.log(1 + words / 200), 6)
