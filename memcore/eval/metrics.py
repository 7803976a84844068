"""Answer-quality metrics: LoCoMo's official token F1, BLEU-1, exact match, ROUGE-L, a lexical judge.

The normalisation, F1 and per-category rules follow the LoCoMo benchmark's official evaluation
(Maharana et al., 2024, `task_eval/evaluation.py`), as summarised in ../shared/papers/README.md
("Metrics"). BLEU-1 and ROUGE-L are the surface metrics xMemory and MemWeaver report.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

from memcore.text.terms import porter_stemmer
from memcore.text.tokens import count_tokens

__all__ = [
    "ABSTENTION_PHRASES",
    "bleu1",
    "count_tokens",
    "exact_match",
    "f1_score",
    "is_abstention",
    "lexical_judge",
    "locomo_f1",
    "normalize_answer",
    "rouge_l",
    "stem_tokens",
]

ABSTENTION_PHRASES = ("not mentioned", "no information available")
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(s: str | int | float) -> str:
    """LoCoMo normalisation: drop commas, lowercase, strip punctuation, drop a/an/the/and, squash spaces."""
    text = str(s).replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return porter_stemmer().stem(word)


def stem_tokens(s: str | int | float) -> list[str]:
    """Porter-stemmed tokens of the normalised string (the units LoCoMo's F1 counts)."""
    return [_stem(w) for w in normalize_answer(s).split()]


def f1_score(prediction: str | int | float, gold: str | int | float) -> float:
    """LoCoMo token F1: overlap of stemmed normalised tokens, repeats counted; 0.0 when nothing overlaps."""
    pred, ref = stem_tokens(prediction), stem_tokens(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def is_abstention(prediction: str) -> bool:
    """True when the output says "not mentioned" / "no information available" (LoCoMo category 5 rule)."""
    low = str(prediction).lower()
    return any(p in low for p in ABSTENTION_PHRASES)


def _category(category: int | str | None) -> int:
    try:
        return int(category)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0


def _multi_f1(prediction: str, gold: str) -> float:
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def locomo_f1(prediction: str | int | float, gold: str | int | float, category: int | str | None) -> float:
    """LoCoMo official per-category F1 (Maharana et al., 2024), in [0, 1].

    Category 1 (multi-hop): gold and prediction are split on commas; each gold part takes its best
    F1 over the prediction parts; the parts are averaged. Category 3: gold up to the first ';'.
    Category 5 (adversarial): 1.0 if the output abstains ("not mentioned" / "no information
    available"), else 0.0. Categories 2, 4 and anything else (e.g. LongMemEval types): plain F1.
    """
    cat = _category(category)
    prediction, gold = str(prediction), str(gold)
    if cat == 5:
        return 1.0 if is_abstention(prediction) else 0.0
    if cat == 1:
        return _multi_f1(prediction, gold)
    if cat == 3:
        gold = gold.split(";")[0].strip()
    return f1_score(prediction, gold)


def bleu1(prediction: str | int | float, gold: str | int | float) -> float:
    """Sentence BLEU-1 (Papineni et al., 2002) on normalised tokens, nltk smoothing method 1; in [0, 1].

    Unigram precision times the brevity penalty, as reported by xMemory and the LoCoMo papers.
    """
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return 0.0
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    return float(sentence_bleu([ref], pred, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1))


def exact_match(prediction: str | int | float, gold: str | int | float) -> float:
    """1.0 when the normalised strings are identical, else 0.0."""
    return 1.0 if normalize_answer(prediction) == normalize_answer(gold) else 0.0


def _lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(prediction: str | int | float, gold: str | int | float) -> float:
    """ROUGE-L F1 (Lin, 2004): longest common subsequence of normalised tokens (no stemming); in [0, 1]."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    lcs = _lcs(pred, ref) if pred and ref else 0
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def lexical_judge(prediction: str | int | float, gold: str | int | float, category: int | str | None) -> bool:
    """Offline *lexical* judge (not an LLM): True when the answer counts as correct.

    Correct when the official LoCoMo F1 is >= 0.5, or when every gold part (comma-split for
    category 1; up to ';' for category 3) appears as a contiguous run of normalised tokens in the
    prediction. Category 5 uses the abstention rule. A cheap stand-in for the mem0-style LLM judge.
    """
    cat = _category(category)
    if cat == 5:
        return is_abstention(str(prediction))
    if locomo_f1(prediction, gold, cat) >= 0.5:
        return True
    gold_s = str(gold).split(";")[0] if cat == 3 else str(gold)
    parts = [p for p in (gold_s.split(",") if cat == 1 else [gold_s]) if normalize_answer(p)]
    pred_tokens = normalize_answer(prediction).split()
    return bool(parts) and all(_contains(pred_tokens, normalize_answer(p).split()) for p in parts)
