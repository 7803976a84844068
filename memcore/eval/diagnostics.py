"""Retrieval diagnostics from gold evidence: recall, first hit, evidence coverage, failure attribution.

Everything here is pure: it reads a `Trace` (or plain lists of turn ids) and a question's gold
evidence turn ids, and says how much of the evidence reached the context, and where the rest was lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memcore.eval.metrics import count_tokens, normalize_answer, stem_token_set, stem_tokens
from memcore.types import Candidate, Trace

__all__ = [
    "FAILURE_KINDS",
    "STOPWORDS",
    "EvidenceHits",
    "all_evidence_hit",
    "attribute_failure",
    "content_words",
    "coverage",
    "evidence_hits",
    "evidence_recall",
    "first_evidence_rank",
    "locate_missed_evidence",
    "split_evidence",
]

FAILURE_KINDS = ("correct", "retrieval_failure", "reasoning_failure", "no_evidence")

# A small English stopword list (function words only) for the "answer content words" of Hu et al.'s coverage.
STOPWORDS = frozenset(
    """a an the and or but nor so yet if then than as of at by for from in into on onto to up down out off
    over under with without about above below after before during between through via per again once
    i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves this that these those who whom whose
    which what when where why how am is are was were be been being have has had having do does did doing
    will would shall should can could may might must not no yes very too also just only own same such
    some any all both each few more most other there here s t don doesn didn isn wasn aren weren""".split()
)

_SPLIT = re.compile(r"[;,\s]+")


def split_evidence(evidence: Iterable[str] | str | None) -> list[str]:
    """Clean gold evidence ids: split malformed entries ("D8:6; D9:17"), strip, de-duplicate in order."""
    if evidence is None:
        return []
    items = [evidence] if isinstance(evidence, str) else list(evidence)
    seen: dict[str, None] = {}
    for item in items:
        for part in _SPLIT.split(str(item)):
            if part:
                seen.setdefault(part, None)
    return list(seen)


def _turn_ids(context: Trace | Iterable[str]) -> list[str]:
    return context.context_turn_ids() if isinstance(context, Trace) else list(context)


@dataclass(frozen=True)
class EvidenceHits:
    """Which gold evidence turns one context holds (evidence_hits): the gold turns (split_evidence order), and
    for each one in the context the first item holding it (1-based context position, item id)."""

    gold: tuple[str, ...]
    first_item: dict[str, tuple[int, str]]

    @property
    def hit(self) -> list[str]:
        """Gold turns in the context, in evidence order."""
        return [t for t in self.gold if t in self.first_item]

    @property
    def missed(self) -> list[str]:
        """Gold turns not in the context, in evidence order."""
        return [t for t in self.gold if t not in self.first_item]

    @property
    def recall(self) -> float | None:
        """Share of gold turns in the context; None without gold evidence."""
        return len(self.hit) / len(self.gold) if self.gold else None


_HITS = "_evidence_hits"  # where a trace keeps its hits per gold (not a field: never stored or exported)


def evidence_hits(trace: Trace, evidence: Iterable[str] | str | None) -> EvidenceHits:
    """The gold evidence turns `trace`'s context holds, worked out once per (trace, gold): every view and
    diagnostic (recall, the hit / miss line, the evidence table, the missed-evidence table, the export) reads
    this one result."""
    gold = tuple(split_evidence(evidence))
    memo: dict = trace.__dict__.setdefault(_HITS, {})
    key = (gold, len(trace.items))  # a trace is final once answered; its length guards one still being filled
    if key not in memo:
        wanted, first = set(gold), {}
        for pos, it in enumerate(trace.items, start=1):
            for t in it.turn_ids:
                if t in wanted and t not in first:
                    first[t] = (pos, it.id)
        memo[key] = EvidenceHits(gold, first)
    return memo[key]


def evidence_recall(
    context_turn_ids: Trace | Iterable[str], evidence: Iterable[str] | str | None, k: int | None = None
) -> float | None:
    """Evidence recall(@k): share of gold evidence turns present in the context (its first k turns).

    None when the question has no gold evidence. `context_turn_ids` may be a Trace (then, without k, its
    evidence_hits).
    """
    if k is None and isinstance(context_turn_ids, Trace):
        return evidence_hits(context_turn_ids, evidence).recall
    gold = split_evidence(evidence)
    if not gold:
        return None
    present = set(_turn_ids(context_turn_ids)[:k] if k is not None else _turn_ids(context_turn_ids))
    return sum(t in present for t in gold) / len(gold)


def all_evidence_hit(
    context_turn_ids: Trace | Iterable[str], evidence: Iterable[str] | str | None, k: int | None = None
) -> bool | None:
    """True when every gold evidence turn is in the context (recall == 1); None without evidence."""
    recall = evidence_recall(context_turn_ids, evidence, k)
    return None if recall is None else recall >= 1.0


def first_evidence_rank(
    ranked_turn_ids: Trace | Iterable[str], evidence: Iterable[str] | str | None
) -> int | None:
    """1-based position of the first gold evidence turn in the ranked turns; None if absent or no evidence."""
    gold = set(split_evidence(evidence))
    for i, tid in enumerate(_turn_ids(ranked_turn_ids), start=1):
        if tid in gold:
            return i
    return None


def content_words(text: str | int | float) -> set[str]:
    """Content words of an answer: LoCoMo-normalised tokens minus STOPWORDS, then Porter-stemmed."""
    return set(stem_tokens(" ".join(w for w in normalize_answer(text).split() if w not in STOPWORDS)))


def coverage(blocks: list[str], gold_answer: str | int | float) -> tuple[int | None, int | None]:
    """Evidence coverage (Hu et al., Table 3): blocks and tokens needed to cover the answer's content words.

    Walks the context `blocks` in ranked order, accumulating the stemmed words they contain, and
    stops at the first prefix that covers every content word of the gold answer (stopwords removed,
    see `content_words`). Returns (number of blocks in that prefix, their `count_tokens` total);
    (0, 0) when the answer has no content words; (None, None) when the blocks never cover it.
    Lower is better: Hu et al. report 5.66 blocks / 975 tokens for their system vs 10.81 / 1979 for naive RAG.
    """
    needed = content_words(gold_answer)
    if not needed:
        return 0, 0
    tokens = 0
    for i, block in enumerate(blocks, start=1):
        tokens += count_tokens(block)
        needed -= stem_token_set(block)
        if not needed:
            return i, tokens
    return None, None


def attribute_failure(correct: bool, evidence_recall: float | None) -> str:
    """Error attribution as in Xu et al. (2025), Sec. 4.6, for one question.

    "correct" if answered correctly; else "no_evidence" when there is no gold evidence to check;
    "retrieval_failure" when any gold evidence turn is missing from the context (recall < 1);
    "reasoning_failure" when all evidence was in the context but the answer is still wrong.
    """
    if correct:
        return "correct"
    if evidence_recall is None:
        return "no_evidence"
    return "retrieval_failure" if evidence_recall < 1.0 else "reasoning_failure"


def _stage_order(trace: Trace) -> list[str]:
    order = list(dict.fromkeys(trace.stages))
    for c in trace.candidates:
        if c.stage not in order:
            order.append(c.stage)
    return order


def _best(cands: list[Candidate]) -> Candidate:
    return min(cands, key=lambda c: (c.rank, -c.score))


def _lost(turn_id: str, trace: Trace) -> dict:
    holders = [c for c in trace.candidates if turn_id in c.turn_ids]
    row: dict = {
        "turn_id": turn_id,
        "status": "not_in_pool",
        "stage": None,
        "rank": None,
        "score": None,
        "candidate_id": None,
        "reason": "no candidate at any stage contained this turn",
    }
    if not holders:
        return row
    stages = _stage_order(trace)
    kept_at = [i for i, s in enumerate(stages) if any(c.kept and c.stage == s for c in holders)]
    after = kept_at[-1] if kept_at else -1
    for stage in stages[after + 1 :]:
        dropped = [c for c in holders if c.stage == stage and not c.kept]
        if dropped:
            best = _best(dropped)
            row.update(
                status="dropped",
                stage=stage,
                rank=best.rank,
                score=best.score,
                candidate_id=best.id,
                reason=best.reason,
            )
            return row
    best = _best([c for c in holders if c.stage == stages[after]])
    row.update(
        status="not_in_context",
        stage=stages[after],
        rank=best.rank,
        score=best.score,
        candidate_id=best.id,
        reason="kept by its last stage but absent from the final context",
    )
    return row


def locate_missed_evidence(trace: Trace, evidence: Iterable[str] | str | None) -> list[dict]:
    """Where each gold evidence turn missing from the context was lost (the "why was it missed" view).

    One dict per missing turn, in evidence order: {"turn_id", "status", "stage", "rank", "score",
    "candidate_id", "reason"}. status "dropped": the first stage (pipeline order, `trace.stages`)
    after the last stage that kept a candidate containing the turn, where such a candidate was
    rejected; rank / score / reason come from the best-ranked rejected candidate there.
    "not_in_pool": no candidate ever contained the turn (stage, rank, score None).
    "not_in_context": kept by its last stage yet absent from the context (e.g. cut when rendering).
    """
    return [_lost(t, trace) for t in evidence_hits(trace, evidence).missed]
