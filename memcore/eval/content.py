"""Content measures: is the gold evidence (and the gold answer) in the context the reader got, whatever
the system cites?

Citation recall (memcore.eval.diagnostics.evidence_recall) counts a gold turn as retrieved when an
item in the context *cites* it; systems cite differently (a semantic fact may cite turns by shared terms, an
episode every turn of its cluster, a passage is the turn itself), so citation recall
compares unlike quantities. These measures read the rendered context text (`Trace.context`) instead:

- **evidence content recall**: a gold evidence turn counts as present when at least
  `CONTENT_THRESHOLD` of its distinct content-word stems (memcore.text.terms.stems: stopwords out,
  irregular verbs mapped, Porter stems) occur *together*, within one window of the context's stem
  sequence `WINDOW` times as long as the turn's stem count (a fact or summary restating the turn
  sits in one place; the same words scattered over ten other turns do not restate it: over a whole
  10-turn context, 44-90% of a turn's stems are found by chance). 0.55 does best on 19 labelled
  cases (18 right; 0.5 counted short, generic turns as present: "thankful for all the support"). The threshold was chosen on
  hand-labelled (turn, context) pairs, LoCoMo turns against verbatim, summarised, neighbouring and
  unrelated contexts, in tests/eval/test_content.py, which also shows why neighbours of 0.5 do worse.
  Turns with fewer than `MIN_STEMS` content stems ("Thanks!") cannot be judged by content and are left
  out; None when no gold turn can be judged.
- **answer in context**: every LoCoMo-normalised, Porter-stemmed token of the gold answer (the units
  LoCoMo's F1 counts; category 3 up to ';') occurs among the context's tokens. `answer_token_recall`
  is the share that do. None for abstention questions (category 5: the answer is not in the conversation).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from memcore.eval.diagnostics import split_evidence
from memcore.eval.metrics import context_token_set, stem_tokens
from memcore.text.terms import stems

CONTENT_THRESHOLD = 0.55
MIN_STEMS = 2
WINDOW = 1.5
CONTENT_FIELDS = ("content_recall", "all_content_hit", "answer_in_context", "answer_token_recall")
CONTENT_LABELS = {
    "content_recall": f"evidence content recall: share of gold evidence turns whose content is in the rendered "
                      f"context (>= {CONTENT_THRESHOLD:.0%} of the turn's distinct content-word stems found within one "
                      f"window of {WINDOW}x their number; turns "
                      f"with < {MIN_STEMS} content stems left out)",
    "answer_in_context": "answer in context: every LoCoMo-normalised, Porter-stemmed gold answer token is in the "
                         "rendered context (not for abstention questions)",
}

__all__ = ["CONTENT_FIELDS", "CONTENT_LABELS", "CONTENT_THRESHOLD", "MIN_STEMS", "answer_in_context", "content_measures",
           "context_stems", "evidence_texts",
           "turn_content_share", "turns_present", "window_size"]


def window_size(n_stems: int) -> int:
    """Context stems a turn's content may spread over: WINDOW x its distinct stems, at least that plus 4."""
    return max(int(WINDOW * n_stems), n_stems + 4)


def turn_content_share(turn_text: str, context_stems: Sequence[str]) -> float | None:
    """Largest share of the turn's distinct content-word stems found together in one window of the context's
    stem sequence (window_size: positions i - w + 1 .. i); None under MIN_STEMS stems. A sliding count over
    the positions holding one of the turn's stems (the best window ends on one): linear in the context."""
    own = set(stems(turn_text))
    if len(own) < MIN_STEMS:
        return None
    w, seen, best = window_size(len(own)), Counter(), 0
    hits = [(i, s) for i, s in enumerate(context_stems) if s in own]
    first = 0
    for i, s in hits:
        seen[s] += 1
        while hits[first][0] <= i - w:  # left the window
            old = hits[first][1]
            seen[old] -= 1
            if not seen[old]:
                del seen[old]
            first += 1
        best = max(best, len(seen))
    return best / len(own)


@lru_cache(maxsize=32768)
def _line_stems(line: str) -> tuple[str, ...]:
    return tuple(stems(line))


def context_stems(context: str) -> list[str]:
    """`stems(context)`, built line by line from a cache: a content word never spans a newline, and context
    lines (turns, facts, summaries) recur across questions and systems (the whole conversation, for full context)."""
    return [s for line in context.split("\n") for s in _line_stems(line)]


def turns_present(evidence: Iterable[str] | str | None, turn_texts: Mapping[str, str], context: str,
                  threshold: float = CONTENT_THRESHOLD) -> dict[str, bool | None]:
    """Per gold evidence turn id: True/False (content present by the rule), None when it cannot be judged
    (unknown turn id, or too few content stems)."""
    ctx = context_stems(context)
    out: dict[str, bool | None] = {}
    for tid in split_evidence(evidence):
        share = turn_content_share(turn_texts[tid], ctx) if tid in turn_texts else None
        out[tid] = None if share is None else share >= threshold
    return out


def answer_in_context(gold: str | int | float, context: str, category: int | str | None = None) -> float | None:
    """Share of the gold answer's stemmed LoCoMo tokens found in the context (1.0 = all); None for category 5
    or an answer without tokens."""
    if str(category) == "5":
        return None
    gold_s = str(gold).split(";")[0] if str(category) == "3" else str(gold)
    need = set(stem_tokens(gold_s))
    if not need:
        return None
    return len(need & context_token_set(context)) / len(need)


def content_measures(gold: str | int | float, evidence: Iterable[str] | str | None, category: int | str | None,
                     context: str, turn_texts: Mapping[str, str], abstain: bool = False) -> dict[str, Any]:
    """The content fields of a result row: content_recall, all_content_hit, content_present (per gold turn),
    answer_in_context (bool), answer_token_recall; None where a measure does not apply."""
    present = turns_present(evidence, turn_texts, context)
    judged = [v for v in present.values() if v is not None]
    recall = sum(judged) / len(judged) if judged else None
    share = None if abstain else answer_in_context(gold, context, category)
    return {"content_recall": None if recall is None else round(recall, 6),
            "all_content_hit": None if recall is None else recall >= 1.0,
            "content_present": present,
            "answer_in_context": None if share is None else share >= 1.0,
            "answer_token_recall": None if share is None else round(share, 6)}


def evidence_texts(conv: Any, evidence: Iterable[str] | str | None) -> dict[str, str]:
    """Turn id -> text of the gold evidence turns found in a conversation (anything with `.turns`)."""
    wanted = set(split_evidence(evidence))
    return {t.turn_id: t.text for t in getattr(conv, "turns", []) if t.turn_id in wanted}
