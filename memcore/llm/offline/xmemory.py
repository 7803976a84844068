"""Offline engine for xMemory's roles: episode boundaries, theme labels, and the uncertainty proxy.

- episode_boundary: session change, time gap, explicit transition phrases, length cap, or a
  cosine drop between the new message and the running episode centroid (the system passes
  the similarity in; the rule cannot judge topic or intent the way the paper's LLM does).
- theme_label: c-TF-IDF keywords of the member facts against the other themes.
- xmemory_probe: the offline answer; it has no token logprobs, so the system measures
  uncertainty with `support_uncertainty` (answer-support proxy) and says so in the trace.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Any

from nltk.stem import PorterStemmer

from memcore.llm.offline.answer import offline_answer
from memcore.llm.offline.text import answer_type, capitalised_spans, terms

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
_STEM = PorterStemmer()
PROXY_SCALE = 2.0  # H ranges over [0, 2], roughly the range of a reader's mean token NLL
PROXY_DOC = ("answer-support proxy H = 2 * (1 - (0.4 coverage + 0.4 focus + 0.2 type)): coverage = share "
             "of the question's content words (stemmed) present in the context, focus = best share in one "
             "line, type = the expected answer type (date/number/person/place) appears in a best line")
_TYPE_PATTERNS = {
    "date": re.compile(r"\b(\d{4}|january|february|march|april|may|june|july|august|september|october|"
                       r"november|december|yesterday|today|last|next|ago|week|weekend|month|year)\b", re.I),
    "number": re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|several|few|once|twice)\b",
                         re.I),
}


@lru_cache(maxsize=65536)
def _stem(w: str) -> str:
    return _STEM.stem(w)


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in terms(text)}


def _type_ok(kind: str, line: str) -> bool:
    if kind in _TYPE_PATTERNS:
        return bool(_TYPE_PATTERNS[kind].search(line))
    if kind in ("person", "place"):
        return bool(capitalised_spans(line))
    return True


def support_uncertainty(question: str, context: str) -> float:
    """The answer-support proxy for the reader's uncertainty (see PROXY_DOC); lower = better supported."""
    q = _stems(question)
    if not q:
        return PROXY_SCALE / 2
    lines = [ln for ln in context.splitlines() if ln.strip()]
    seen: set[str] = set()
    best, best_lines = 0.0, []
    for ln in lines:
        s = _stems(ln) & q
        seen |= s
        share = len(s) / len(q)
        if share > best + 1e-12:
            best, best_lines = share, [ln]
        elif share > 0 and abs(share - best) <= 1e-12:
            best_lines.append(ln)
    kind = answer_type(question)
    type_ok = 1.0 if best_lines and any(_type_ok(kind, ln) for ln in best_lines) else 0.0
    support = 0.4 * len(seen) / len(q) + 0.4 * best + 0.2 * type_ok
    return round(PROXY_SCALE * (1.0 - support), 6)
