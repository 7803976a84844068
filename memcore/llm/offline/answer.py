"""Offline answering: pick the best-supported evidence line and extract a short answer."""

from __future__ import annotations

import re
from typing import Any

from memcore.llm.roles import TextOutput

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("""a an the and or of to in on at for with is are was were be been did do does what when
where who whom which why how many much i you he she it we they his her their my your our me him them
that this these those has have had about from by as into than then there here not no yes can could would
should will shall may might just so if but also any some""".split())


def _terms(s: str) -> set[str]:
    return {w for w in _WORD.findall(s.lower()) if w not in _STOP}


def offline_answer(inputs: dict[str, Any]) -> TextOutput:
    """The evidence line sharing most content words with the question, or an abstention."""
    q = _terms(inputs.get("question", ""))
    passages = inputs.get("passages") or [{"text": line} for line in str(inputs.get("context", "")).splitlines()]
    best, best_score = "", 0.0
    for p in passages:
        text = p.get("text", "")
        overlap = len(q & _terms(text))
        score = overlap + 0.01 * float(p.get("score", 0.0) or 0.0)
        if overlap and score > best_score:
            best, best_score = text, score
    if not best:
        return TextOutput(text="No information available")
    return TextOutput(text=best.split(": ", 1)[-1].strip())
