"""Feelings for the offline `answer` role: "How did Joanna feel about ...?" -> "surreal".

A question about how someone felt is answered with the words of
feeling in the best-supported sentence ("It was totally surreal" -> "surreal"; "we were awestruck
and humbled" -> "awestruck and humbled"): the run from the first to the last feeling word of one
clause when it is short, else the first feeling word. "" when no sentence has one (the caller
falls back to an ordinary fragment).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

FEELING_Q = re.compile(r"^how (?:did|does|do|is|was|were|has) .*\b(?:feel|felt|feeling|react|reaction)\b", re.I)
FEELINGS = frozenset("""happy glad proud excited thrilled stoked pumped grateful thankful blessed lucky relieved calm
peaceful relaxed content joyful cheerful delighted ecstatic elated amazed awed awestruck humbled humble inspired
motivated determined confident hopeful optimistic touched moved honored honoured overjoyed fulfilled satisfied
accomplished surreal magical emotional
heartwarming bittersweet nostalgic nervous anxious scared afraid frightened terrified worried stressed overwhelmed
exhausted tired drained frustrated angry upset sad heartbroken devastated lonely disappointed discouraged
hurt embarrassed ashamed guilty jealous shocked surprised stunned speechless empowered free energized
refreshed rejuvenated""".split())
MAX_RUN = 5  # words from the first to the last feeling word, at most


def feeling_span(texts: Sequence[str]) -> str:
    """The feeling words of the first text that has any (see the module docstring); "" when none has."""
    for text in texts:
        for clause in re.split(r"[.!?;:]|\s[-\u2013\u2014]\s|,\s(?:but|and|so)\s", text):
            words = re.findall(r"[A-Za-z][\w'\-]*", clause)
            hits = [i for i, w in enumerate(words) if w.lower() in FEELINGS]
            if not hits:
                continue
            if hits[-1] - hits[0] < MAX_RUN and len(hits) > 1:
                return " ".join(words[hits[0]:hits[-1] + 1])
            return words[hits[0]]
    return ""
