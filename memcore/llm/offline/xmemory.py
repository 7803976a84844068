"""Offline engine for xMemory's roles: episode boundaries, theme labels, and the uncertainty proxy.

- episode_boundary: session change, time gap, explicit transition phrases, length cap, or a
  cosine drop between the new message and the running episode centroid (the system passes
  the similarity in; the rule cannot judge topic or intent the way the paper's LLM does).
- theme_label: c-TF-IDF keywords of the member facts against the other themes.
- xmemory_probe: the offline answer; it has no token logprobs, so the system measures
  uncertainty with `support_uncertainty` (see PROXY_DOC) and says so in the trace. The proxy is
  continuous: sentences that match the question's rarer terms and hold the expected answer type
  lower H; text that supports nothing raises H slightly (a reader is distracted by it), so an
  unrelated episode gets a small negative gain, never exactly 0.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from memcore.llm.offline.answer import offline_answer
from memcore.llm.offline.text import MONTHS, answer_type, capitalised_spans, sentences, stems, terms

TRANSITIONS = ("by the way", "btw", "anyway", "speaking of", "changing topics", "change of topic",
               "on another note", "quick question", "oh right", "oh, right", "that reminds me",
               "unrelated", "switching gears", "on a different note")
_TRANSITION = re.compile(r"\b(" + "|".join(re.escape(t) for t in TRANSITIONS) + r")\b", re.I)

TOPIC_DROP = 0.45  # cosine to the running episode centroid below which a topic change is assumed
MIN_TOPIC_MESSAGES = 4  # no topic split before the episode has this many messages


def offline_boundary(inputs: dict[str, Any]) -> dict[str, Any]:
    """{"should_end", "reason"} by the rules in the module docstring, in that order."""
    n = int(inputs.get("n_messages", len(inputs.get("history") or [])))
    if n == 0:
        return {"should_end": False, "reason": "first message of the episode"}
    if inputs.get("session_change"):
        return {"should_end": True, "reason": "new session"}
    gap, max_gap = inputs.get("minutes_since_last"), float(inputs.get("gap_minutes", 30))
    if gap is not None and float(gap) > max_gap:
        return {"should_end": True, "reason": f"time gap {float(gap):.0f} min > {max_gap:.0f} min"}
    text = " ".join(str(m) for m in inputs.get("new_messages") or [])
    m = _TRANSITION.search(text)
    if m:
        return {"should_end": True, "reason": f"transition phrase {m.group(1).lower()!r}"}
    cap = int(inputs.get("max_messages", 15))
    if n >= cap:
        return {"should_end": True, "reason": f"episode length {n} >= {cap} messages"}
    sim = inputs.get("centroid_similarity")
    if sim is not None and n >= MIN_TOPIC_MESSAGES and float(sim) < TOPIC_DROP:
        return {"should_end": True, "reason": f"topic change: cos to episode centroid {float(sim):.2f} < {TOPIC_DROP}"}
    return {"should_end": False, "reason": "same topic" + (f" (cos {float(sim):.2f})" if sim is not None else "")}


def c_tf_idf(docs: list[str], others: list[str], k: int = 3) -> list[str]:
    """Top-k class-based TF-IDF terms of one class (the joined docs) against other classes.

    weight(t) = tf(t, c) * log(1 + A / f(t)), A = mean words per class, f(t) = frequency of t
    over all classes (BERTopic's c-TF-IDF).
    """
    mine = Counter(w for d in docs for w in terms(d) if len(w) > 2 and not w.isdigit())
    if not mine:
        return []
    classes = [mine] + [Counter(w for w in terms(o) if len(w) > 2 and not w.isdigit()) for o in others]
    total: Counter[str] = Counter()
    for c in classes:
        total.update(c)
    avg = sum(sum(c.values()) for c in classes) / len(classes)

    def weight(w: str) -> float:
        return mine[w] * math.log(1 + avg / total[w])

    return [w for w, _ in sorted(mine.items(), key=lambda kv: (-weight(kv[0]), kv[0]))[:k]]


def offline_theme_label(inputs: dict[str, Any]) -> dict[str, str]:
    """Label = top c-TF-IDF keywords; summary = the count and the member fact sharing most keywords."""
    facts = [str(f) for f in inputs.get("facts") or []]
    kws = c_tf_idf(facts, [str(o) for o in inputs.get("other_themes") or []], k=3)
    if not facts:
        return {"label": "empty theme", "summary": ""}
    label = " / ".join(kws) if kws else " ".join(terms(facts[0])[:3]) or "misc"
    best = max(facts, key=lambda f: (len(set(terms(f)) & set(kws)), -len(f)))
    short = best if len(best) <= 140 else best[:137].rstrip() + "..."
    return {"label": label, "summary": f"{len(facts)} fact(s) about {', '.join(kws) or label}, e.g. {short}"}


def offline_probe(inputs: dict[str, Any]) -> Any:
    """The offline answer over the probe context (no logprobs: see `support_uncertainty`)."""
    ctx = "\n".join(str(inputs.get(k, "")) for k in ("semantic", "episodic"))
    return offline_answer({"question": inputs.get("question", ""), "context": ctx})


# ------------------------------------------------------------ uncertainty proxy
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
