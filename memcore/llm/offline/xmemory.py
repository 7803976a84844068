"""Offline engine for xMemory's roles: episode boundaries, theme labels, the probe's answer.

- episode_boundary: session change, time gap, explicit transition phrases, length cap, or a
  cosine drop between the new message and the running episode centroid (the system passes
  the similarity in; the rule cannot judge topic or intent the way the paper's LLM does).
- theme_label: c-TF-IDF keywords of the member facts against the other themes.
- xmemory_probe: the offline answer; it has no token logprobs, so the system measures
  uncertainty with its own proxy (memcore.systems.xmemory.proxy) and says so in the trace.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from memcore.llm.offline.answer import offline_answer
from memcore.text.terms import terms

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
