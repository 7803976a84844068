"""BEAM's answer scores as pure functions: the offline rubric rule and the event-ordering score.

- The authors judge each rubric item with an LLM (0, 0.5 or 1) and score a question by the items' mean; the
  LLM side is the `rubric_judge` role (memcore.eval.rubric_role). Without a model, `rubric_rule` is the
  OFFLINE RUBRIC RULE, named as such wherever it is shown: an item scores 1 when every content word of it
  (stemmed, after the "LLM response should state:" preamble) is in the answer, 0.5 when at least half are,
  else 0; the question's score is the items' mean. It is a stand-in, not the authors' judge.
- Event ordering (the authors' formula): the response is split into items (numbered or bulleted entries, else
  lines, else sentences); each reference item is aligned to at most one response item (their "semantic" mode:
  MiniLM cosine >= 0.65, greedily by highest similarity); the score is the normalised Kendall tau-b ((tau + 1)
  / 2, scipy.stats.kendalltau) between the reference order and the aligned items' order in the response, times
  the F1 of the alignment (precision over response items, recall over reference items). With fewer than two
  aligned items no order can be shown and the score is 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from memcore.text.terms import stems

OFFLINE_RUBRIC_RULE = ("offline rubric rule (not the authors' LLM judge): a rubric item scores 1 when all its "
                       "content words are in the answer, 0.5 when at least half are, else 0; mean over items")
EVENT_ORDER_RULE = ("event ordering as BEAM scores it: normalised Kendall tau-b between reference and response "
                    "order x F1 of the aligned items (alignment: embedding cosine >= 0.65, their semantic mode)")
ALIGN_THRESHOLD = 0.65
DATASET_SCORES = ("rubric_judge", "rubric_rule", "event_order", "plus_judge")  # metrics of BEAM / LoCoMo-Plus only
_PREAMBLE = re.compile(r"^\s*(the\s+)?(llm\s+)?response\s+should\s+(state|mention|include|say)\s*:?\s*", re.I)
_ENTRY = re.compile(r"(?:^|\s)(?:\(?\d{1,2}[.)]|[-*\u2022])\s+")


def rubric_item_text(item: str) -> str:
    """A rubric item without its "LLM response should state:" preamble."""
    return _PREAMBLE.sub("", item).strip()


def rubric_item_score(item: str, answer: str) -> float:
    """The offline rubric rule for one item: 1 (all its content words in the answer), 0.5 (at least half), 0."""
    want = set(stems(rubric_item_text(item)))
    if not want:
        return 0.0
    found = len(want & set(stems(answer))) / len(want)
    return 1.0 if found == 1.0 else 0.5 if found >= 0.5 else 0.0


def rubric_rule(rubric: Sequence[str], answer: str) -> tuple[float | None, list[float]]:
    """(question score = mean over items, per-item scores) by the offline rubric rule; (None, []) without items."""
    scores = [rubric_item_score(r, answer) for r in rubric]
    return (sum(scores) / len(scores) if scores else None), scores


def response_items(answer: str) -> list[str]:
    """The items a response lists: numbered or bulleted entries, else non-empty lines, else sentences."""
    text = answer.strip()
    if not text:
        return []
    parts = [p.strip(" ,;.") for p in _ENTRY.split(text)]
    entries = [p for p in parts[1:] if p] if len(parts) > 2 else []
    if len(entries) >= 2:
        return entries
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 2:
        return lines
    return [s.strip() for s in re.split(r"(?<=[.!?;])\s+", text) if s.strip()]


def align(similarity: np.ndarray, threshold: float = ALIGN_THRESHOLD) -> list[tuple[int, int]]:
    """One-to-one (reference index, response index) pairs, greedily by highest similarity >= threshold."""
    pairs: list[tuple[int, int]] = []
    used_ref: set[int] = set()
    used_resp: set[int] = set()
    order = np.dstack(np.unravel_index(np.argsort(-similarity, axis=None), similarity.shape))[0]
    for i, j in order:
        if similarity[i, j] < threshold:
            break
        if i not in used_ref and j not in used_resp:
            pairs.append((int(i), int(j)))
            used_ref.add(i)
            used_resp.add(j)
    return sorted(pairs)


def event_order_score(reference: Sequence[str], response: Sequence[str],
                      similarity: Callable[[Sequence[str], Sequence[str]], np.ndarray],
                      threshold: float = ALIGN_THRESHOLD) -> dict[str, Any]:
    """{"score", "tau_b", "f1", "aligned"} of a response's items against the reference order (module doc).

    `similarity(reference, response)` returns the len(reference) x len(response) similarity matrix."""
    from scipy.stats import kendalltau

    if not reference or not response:
        return {"score": 0.0, "tau_b": None, "f1": 0.0, "aligned": []}
    pairs = align(np.asarray(similarity(reference, response), dtype=float), threshold)
    precision, recall = len(pairs) / len(response), len(pairs) / len(reference)
    f1 = 2 * precision * recall / (precision + recall) if pairs else 0.0
    tau = None
    if len(pairs) >= 2:
        t = kendalltau([i for i, _ in pairs], [j for _, j in pairs], variant="b").statistic
        tau = None if np.isnan(t) else float(t)
    score = 0.0 if tau is None else (tau + 1) / 2 * f1
    return {"score": score, "tau_b": tau, "f1": f1, "aligned": pairs}


def embedding_similarity(embedder: Any) -> Callable[[Sequence[str], Sequence[str]], np.ndarray]:
    """A similarity matrix function from an embedder (cosine of its vectors)."""
    def sim(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        va = np.asarray(embedder.embed(list(a)), dtype=float)
        vb = np.asarray(embedder.embed(list(b)), dtype=float)
        va /= np.linalg.norm(va, axis=1, keepdims=True) + 1e-12
        vb /= np.linalg.norm(vb, axis=1, keepdims=True) + 1e-12
        return va @ vb.T
    return sim
