"""Offline RecMem merge decision: merge when the exchange shares enough salient words with the episode."""

from __future__ import annotations

import re
from typing import Any

from memcore.llm.offline.memory_writing import clean, content_terms, entities, informative, narrative
from memcore.text.sentences import sentences
from memcore.text.terms import stems

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
