"""Name questions for the offline `answer` role: "What is the name of Maya's dog?".

The answer is the name best supported over the top passages: every name in a well-supported
passage gets a vote weighted by that passage's support (half for names in a neighbouring
sentence of the passage), and names the text labels as something else ("my sister Lena" when
the question asks about a dog) or that belong to the conversation's participants get none.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from memcore.llm.offline.answer_fragments import matches, word_stem
from memcore.text.sentences import capitalised_spans

_LABEL = re.compile(r"\b(?:my|our|his|her|their|a|an|the|new)\s+((?:\w+\s+)?\w+)\s+(?:(?:called|named)\s+)?$", re.I)
_NAMED = re.compile(r"\b(\w+)\s+(?:called|named)\s+$", re.I)
NEIGHBOUR = 0.5  # vote weight of a name in another sentence of a supported passage


def _label(text: str, start: int) -> str:
    """The noun that introduces a name: "my sister Lena" -> "sister", "a puppy called Pixie" -> "puppy"."""
    before = text[max(0, start - 40):start]
    m = _NAMED.search(before) or _LABEL.search(before)
    return m.group(1).split()[-1] if m else ""


def name_votes(supported: Sequence[tuple[float, str, bool]], qstems: set[str], exclude: Collection[str],
               common: Collection[str] = ()) -> str:
    """The best-voted name over (support, sentence text, is-best-sentence) triples ("" when none).

    A name labelled by a noun ("my sister Lena") counts only when the noun matches a question
    term; names in `exclude` (participants, the asked-about person) never count.
    """
    skip = {e.lower() for e in exclude for e in (e, e.split()[0])}
    votes: dict[str, float] = {}
    forms: dict[str, str] = {}
    for support, text, best in supported:
        for span in capitalised_spans(text, common=common):
            key = span.lower()
            if key in skip or key.split()[0] in skip:
                continue
            label = _label(text, text.find(span))
            st = word_stem(label) if label else ""
            if st and st not in qstems and not any(matches(frozenset([st]), q) for q in qstems):
                continue
            votes[key] = votes.get(key, 0.0) + support * (1.0 if best else NEIGHBOUR)
            forms.setdefault(key, span)
    if not votes:
        return ""
    return forms[max(votes, key=lambda k: (votes[k], -list(votes).index(k)))]
