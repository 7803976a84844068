"""Offline RecMem roles: the merge decision (merge when the exchange shares enough salient words with the
episode), episodes (the shared rule-based writer) and semantic refinement with fact maintenance."""

from __future__ import annotations

import re
from typing import Any

from memcore.llm.offline.memory_writing import (
    clean,
    content_terms,
    entities,
    informative,
    narrative,
    offline_episodes,
    offline_facts,
)
from memcore.text.dates import MONTHS, WEEKDAYS
from memcore.text.sentences import sentences
from memcore.text.terms import overlap, stem, stems

MIN_SHARED = 2  # salient words the exchange must share with the episode
MIN_RATIO = 0.25  # ... and this share of the exchange's salient words
NEW_SENTENCES = 3  # at most this many new sentences are appended to the episode on a merge


def salient(messages: list[dict], names: list[str]) -> set[str]:
    """Stems of the content words and named entities of the informative sentences."""
    out: set[str] = set()
    for m in messages:
        for raw in sentences(str(m.get("text", ""))):
            s = clean(raw, names)
            if informative(s, names):
                out |= set(stems(" ".join(content_terms(s, names))))
                out |= set(stems(" ".join(entities(s, names))))
    return out


def offline_merge(inputs: dict[str, Any]) -> dict[str, Any]:
    """{merge, reason, title, content} for the `recmem_merge` role."""
    messages = list(inputs.get("messages", []))
    names = list(dict.fromkeys([str(s) for s in inputs.get("speakers", [])] + [m.get("speaker", "") for m in messages]))
    title, content = str(inputs.get("title", "")), str(inputs.get("content", ""))
    unit = salient(messages, names)
    if not unit:
        return {"merge": False, "reason": "the exchange is small talk: nothing to add to the episode",
                "title": title, "content": content}
    episode = set(stems(f"{title} {content}"))
    shared = unit & episode
    ratio = len(shared) / len(unit)
    words = ", ".join(sorted(shared)[:8])
    if len(shared) < MIN_SHARED or ratio < MIN_RATIO:
        return {"merge": False, "title": title, "content": content,
                "reason": f"shares {len(shared)} of {len(unit)} salient words ({words or 'none'}); "
                          f"needs >= {MIN_SHARED} and >= {MIN_RATIO:.0%}"}
    addition = narrative(messages, names, NEW_SENTENCES)
    merged = content if not addition or addition in content else f"{content} {addition}".strip()
    return {"merge": True, "title": title, "content": re.sub(r"\s+", " ", merged),
            "reason": f"shares {len(shared)} of {len(unit)} salient words ({words}) with the episode"}


def offline_recmem_episodes(inputs: dict[str, Any]) -> list[dict]:
    """Episodes {title, content, timestamp, turn_ids} for `recmem_episodes` (the shared rule-based writer)."""
    return offline_episodes(inputs)


UPDATE_OVERLAP = 0.15  # a new TIME_ANCHORED_UPDATE fact (it holds a change word) this close to a known fact of the
# same person updates it (Jaccard of topic words: a restated change shares few of them)
# words that say who and when, not what: two facts of one person in one month share them by chance
_TIME_WORDS = set(MONTHS) | set(WEEKDAYS) | {"week", "weekend", "month", "year", "day", "today", "yesterday", "ago",
                                              "last", "next", "this", "recent", "recently", "now", "before", "after"}


def offline_refine(inputs: dict[str, Any]) -> dict[str, Any]:
    """{facts, updates} for `recmem_refine`: new facts from the raw lines (the shared rule-based extractor,
    known facts as context) and, in "update" mode, TIME_ANCHORED_UPDATE facts that restate a known fact of
    the same person as updates of it (its 1-based number in the known list)."""
    known = [str(f) for f in inputs.get("known_facts", [])]
    messages = list(inputs.get("messages", []))
    lines = "\n".join(f"[{m.get('turn_id', '')}] ({m.get('date', '')}) {m.get('speaker', '')}: {m.get('text', '')}"
                      for m in messages)
    facts = offline_facts({"content": f"Summary: {inputs.get('episode', '')}\n{lines}",
                           "date": inputs.get("date", ""), "speakers": inputs.get("speakers", []),
                           "existing_facts": known, "turn_ids": [m.get("turn_id", "") for m in messages]},
                          limit=9)
    updates: list[dict] = []
    if inputs.get("mode", "update") == "update":
        kept = []
        for f in facts:
            target = _updated(f, known, {u["fact"] for u in updates})
            if target is None:
                kept.append(f)
            else:
                updates.append({"fact": target, "text": f["text"], "type": f["type"], "turn_ids": f["turn_ids"]})
        facts = kept
    return {"facts": facts, "updates": updates}


def _topic_words(text: str, subject: str) -> set[str]:
    """A fact's content words without the person, dates and time words (what it is about)."""
    drop = set(stems(subject)) | {stem(w) for w in _TIME_WORDS}
    return {w for w in stems(text) if w not in drop and not w.isdigit()}


def _updated(fact: dict, known: list[str], taken: set[int]) -> int | None:
    """The 1-based number of the known fact a new TIME_ANCHORED_UPDATE fact updates, or None."""
    if fact.get("type") != "TIME_ANCHORED_UPDATE":
        return None
    subject = fact["text"].split()[0] if fact["text"].split() else ""
    best, best_ov = None, UPDATE_OVERLAP
    new = _topic_words(fact["text"], subject)
    for n, k in enumerate(known, start=1):
        if n in taken or not k.split() or k.split()[0] != subject:
            continue
        ov = overlap(new, _topic_words(k, subject))
        if ov >= best_ov:
            best, best_ov = n, ov
    return best
