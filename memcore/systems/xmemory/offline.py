"""Offline engine for xMemory's roles: boundaries, episodes, semantics, theme summaries, the probe's answer.

- episode_boundary: session change, time gap, explicit transition phrases, length cap, or a
  cosine drop between the new message and the running episode centroid (the rule embeds the
  history and the new message itself, with the runtime's embedder; it cannot judge topic or
  intent the way the paper's LLM does).
- xmemory_episode: the extractive third-person narrative of memory_writing over every informative
  sentence (the paper asks for all important information), title from keywords, ISO timestamp of
  the first message.
- xmemory_semantic: the paper's tests as rules over the episode's narrative sentences: a sentence
  about a named person passes when it falls in one of the paper's six categories (regular
  expressions per category) or states something dated (still true in 6 months); greetings,
  thanks, shared photos, reactions and emotions are skipped.
- xmemory_theme: "label: summary" from c-TF-IDF keywords of the member facts against other themes (no
  timestamps or numbers); the label is the shortest stretch of a member fact holding two keywords (a short
  phrase in the fact's own words, "mint tea"), else the keywords.
- xmemory_probe: the offline answer; it has no token logprobs, so the system measures
  uncertainty with its own proxy (memcore.systems.xmemory.proxy) and says so in the trace.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np

from memcore.llm.offline.answer import offline_answer
from memcore.llm.offline.memory_writing import narrative, title_of
from memcore.llm.offline.sentence_quality import clean, fact_worthy, has_date
from memcore.systems.xmemory.themes import unit
from memcore.text.dates import day_of
from memcore.text.sentences import sentences
from memcore.text.terms import terms

LABEL_END = re.compile(r":(?:\s|$)")  # ends a theme's label in "label: summary"; a colon inside a word does not
_STAMPED = re.compile(r"\[[^\]]*\] ")  # "[8 May, 2023] " before "Speaker: text" in a rendered turn (Turn.render)

TRANSITIONS = ("by the way", "btw", "anyway", "speaking of", "changing topics", "change of topic",
               "on another note", "quick question", "oh right", "oh, right", "that reminds me",
               "unrelated", "switching gears", "on a different note")
_TRANSITION = re.compile(r"\b(" + "|".join(re.escape(t) for t in TRANSITIONS) + r")\b", re.I)

TOPIC_DROP = 0.45  # cosine to the running episode centroid below which a topic change is assumed
MIN_TOPIC_MESSAGES = 4  # no topic split before the episode has this many messages


def centroid_similarity(history: list[str], new: str, embedder: Any) -> float:
    """Cosine of the new message to the episode's centroid (the mean of the unit history vectors, made
    unit), 4 decimals; each rendered turn is embedded as the system embeds turns ("Speaker: text")."""
    vecs = embedder.embed([_STAMPED.sub("", m, count=1) if _STAMPED.match(m) else m for m in [*history, new]])
    cen = unit(np.mean([unit(v) for v in vecs[:-1]], axis=0))
    return round(float(unit(vecs[-1]) @ cen), 4)


def offline_boundary(inputs: dict[str, Any], embedder: Any = None) -> dict[str, Any]:
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
    history, new = [str(m) for m in inputs.get("history") or []], [str(m) for m in inputs.get("new_messages") or []]
    sim = centroid_similarity(history, new[0], embedder) if embedder is not None and history and len(new) == 1 else None
    if sim is not None and n >= MIN_TOPIC_MESSAGES and float(sim) < TOPIC_DROP:
        return {"should_end": True, "reason": f"topic change: cos to episode centroid {float(sim):.2f} < {TOPIC_DROP}"}
    return {"should_end": False, "reason": "same topic" + (f" (cos {float(sim):.2f})" if sim is not None else "")}


def c_tf_idf(docs: list[str], others: list[str], k: int = 3) -> list[str]:
    """Top-k class-based TF-IDF terms of one class (the joined docs) against other classes.

    weight(t) = tf(t, c) * log(1 + A / f(t)), A = mean words per class, f(t) = frequency of t
    over all classes (BERTopic's c-TF-IDF).
    """
    mine = Counter(w for d in docs for w in _words(d))
    if not mine:
        return []
    classes = [mine] + [Counter(_words(o)) for o in others]
    total: Counter[str] = Counter()
    for c in classes:
        total.update(c)
    avg = sum(sum(c.values()) for c in classes) / len(classes)

    def weight(w: str) -> float:
        return mine[w] * math.log(1 + avg / total[w])

    return [w for w, _ in sorted(mine.items(), key=lambda kv: (-weight(kv[0]), kv[0]))[:k]]


_STAMP = re.compile(r"\[[^\]]*\d{4}-\d\d-\d\d[^\]]*\]")  # "[2023-05-08T10:15:00]" in a fact quoting an episode


def _words(text: str) -> list[str]:
    """Keyword candidates: content words of 3+ letters without digits (no timestamps, years or counts)."""
    return [w for w in terms(_STAMP.sub(" ", text)) if len(w) > 2 and not any(c.isdigit() for c in w)]


PHRASE_WORDS = 6


def theme_phrase(facts: list[str], kws: list[str], max_words: int = PHRASE_WORDS) -> str:
    """The shortest stretch of a fact, at most `max_words` words, that starts and ends with a keyword and holds
    the most keywords (at least two), in the fact's own words ("mint tea", "Pepper, who pulled on the leash");
    '' when no fact has one."""
    want, best, key = set(kws), "", (1, 0)
    for fact in facts:
        toks = _STAMP.sub(" ", fact).split()
        hits = [set(terms(t)) & want for t in toks]
        for i, first in enumerate(hits):
            if not first:
                continue
            for j in range(i + 1, min(len(toks), i + max_words)):
                covered = set().union(*hits[i:j + 1])
                if hits[j] and (len(covered), -(j - i)) > key:
                    key, best = (len(covered), -(j - i)), " ".join(toks[i:j + 1])
    return best.strip(" ,;:.!?()\"'")


def offline_theme_label(inputs: dict[str, Any]) -> dict[str, str]:
    """Label = a short phrase of a member fact holding the top c-TF-IDF keywords (else the keywords); summary =
    the count and the member fact sharing most keywords."""
    facts = [str(f) for f in inputs.get("facts") or []]
    kws = c_tf_idf(facts, [str(o) for o in inputs.get("other_themes") or []], k=3)
    if not facts:
        return {"label": "empty theme", "summary": ""}
    label = (theme_phrase(facts, kws) or ", ".join(kws)) if kws else " ".join(_words(facts[0])[:3]) or "misc"
    # the system reads the label up to a colon ending a word (": " -> ", " as before); a colon inside a word stays
    label = LABEL_END.sub(lambda m: "," + m.group(0)[1:], label)
    best = max(facts, key=lambda f: (len(set(terms(f)) & set(kws)), -len(f)))
    short = best if len(best) <= 140 else best[:137].rstrip() + "..."
    return {"label": label, "summary": f"{len(facts)} fact(s) about {', '.join(kws) or label}, e.g. {short}"}


def offline_theme_summary(inputs: dict[str, Any]) -> str:
    """The theme summary as text, "label: summary" (the system takes the label before a colon ending a word, ": ")."""
    out = offline_theme_label(inputs)
    return f"{out['label']}: {out['summary']}" if out["summary"] else out["label"]


def offline_xepisode(inputs: dict[str, Any]) -> dict[str, str]:
    """{"title", "content", "timestamp"} of one episode from its messages (see the module docstring)."""
    msgs = [m for m in inputs.get("messages") or [] if str(m.get("text", "")).strip()]
    if not msgs:
        return {"title": "", "content": "", "timestamp": ""}
    speakers = list(dict.fromkeys(str(m.get("speaker", "")) for m in msgs))
    content = narrative(msgs, speakers, budget=max(2, len(msgs)))
    if not content:
        m = max(msgs, key=lambda x: len(str(x.get("text", ""))))
        content = f"On {day_of(m.get('date', ''))}, {m.get('speaker', '')} said: {m.get('text', '')}".strip()
    return {"title": title_of(msgs, speakers), "content": content,
            "timestamp": str(msgs[0].get("timestamp") or day_of(msgs[0].get("date", "")))}


CATEGORY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((c, re.compile(p, re.I)) for c, p in (
    ("identity_professional", r"\b(works? (at|for|as|in)|job|career|profession|employ|studies|studying|student|degree|"
                              r"graduat|school|college|university|teacher|engineer|nurse|artist|counsel\w*|writer|"
                              r"musician|is from|grew up|born|lives? in|moved (to|from)|skills?|qualif\w*|certif\w*|"
                              r"transgender|identif\w*|is a \w+ (person|woman|man))\b"),
    ("relationships", r"\b(sister|brother|mom|mother|dad|father|parents?|husband|wife|partner|boyfriend|girlfriend|"
                      r"kids?|children|son|daughter|friends?|family|grandma|grandmother|grandpa|cousin|aunt|uncle|"
                      r"dog|cat|pet|puppy|kitten|married|colleague|boss|neighbou?r|team|mentor|named|called)\b"),
    ("persistent_preferences", r"\b(lov(e|es|ed)|likes?|enjoys?|prefers?|favou?rite|hates?|dislikes?|can't stand|"
                               r"passionate|(is|are) into|fan of|allergic|vegan|vegetarian)\b"),
    ("goals_plans", r"\b(plans?|planning|goals?|dreams? (of|to|is)|wants? to|hopes? to|aims? to|intends?|going to|"
                    r"will|next (week|month|year|summer)|decided to|learning|looking into|considering|saving for)\b"),
    ("patterns_habits", r"\b(every|usually|always|often|regularly|weekly|daily|each (week|day|month|year)|habit|"
                        r"routine|since|for (\d+|a few|many|several|two|three) (years|months)|practi[cs]\w*|"
                        r"volunteer\w*|member of)\b"),
    ("technical_knowledge", r"\b(software|python|java|code|coding|program\w*|technolog\w*|computer|framework|"
                            r"database|machine learning)\b"),
))
TRANSIENT = re.compile(r"\b(thank\w*|appreciat\w*|confus\w*|shared a photo|showed a (photo|picture)|said hi|"
                       r"greeted|let's|was (so )?(happy|glad|excited|sorry|proud)|felt|feels?|feeling|congratulat\w*)\b",
                       re.I)
_ON_DATE = re.compile(r"^On [^,]{3,40}, ")


def semantic_category(sentence: str) -> str:
    """The first of the paper's six categories whose rule matches the sentence, else ""."""
    return next((c for c, rx in CATEGORY_RULES if rx.search(sentence)), "")


def offline_semantics(inputs: dict[str, Any], limit: int = 12) -> list[dict[str, str]]:
    """Semantics {text, category} of the episodes by the paper's tests as rules (module docstring)."""
    speakers = [str(s) for s in inputs.get("speakers") or []]
    eps = inputs.get("episodes") or []
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for ep in eps if isinstance(eps, list) else [eps]:
        text = str(ep.get("content", "")) if isinstance(ep, dict) else str(ep)
        for raw in sentences(text):
            s = _ON_DATE.sub("", raw.strip())
            s = clean(s, ())
            about = not speakers or any(n.split()[0] in s for n in speakers if n.strip())
            if not about or not fact_worthy(s, speakers) or TRANSIENT.search(s):
                continue
            cat = semantic_category(s)
            if not cat and not has_date(s):  # fails the persistence test: no lasting category, nothing dated
                continue
            key = " ".join(terms(s))
            if key in seen:
                continue
            seen.add(key)
            out.append({"text": s if s.endswith((".", "!")) else s + ".", "category": cat})
            if len(out) >= limit:
                return out
    return out


def offline_probe(inputs: dict[str, Any]) -> Any:
    """The offline answer over the probe context (no logprobs: see `support_uncertainty`)."""
    ctx = "\n".join(str(inputs.get(k, "")) for k in ("semantic", "episodic"))
    return offline_answer({"question": inputs.get("question", ""), "context": ctx})
