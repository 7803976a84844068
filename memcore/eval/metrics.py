"""Answer-quality metrics: LoCoMo's official token F1, BLEU-1, exact match, ROUGE-L/-2, METEOR,
embedding similarity, and a lexical judge.

The normalisation, F1 and per-category rules follow the LoCoMo benchmark's official evaluation
(Maharana et al., 2024, `task_eval/evaluation.py`), as summarised in ../shared/papers/README.md
("Metrics"). BLEU-1 and ROUGE-L are the surface metrics two of the papers report (files 001 and 004 of
../shared/papers/, Hu et al. and the temporal-knowledge-graph paper); ROUGE-2, METEOR and SBERT similarity are the
ones the latter reports beside them.

METEOR runs without its WordNet synonym stage: nltk's WordNet data is not a PyPI package and
cannot be fetched offline, so `meteor` matches exact words, then Porter stems (nltk's
`meteor_score` with an empty synonym source). `METRIC_LABELS` names every metric as results
record it.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from memcore.text.terms import porter_stemmer
from memcore.text.tokens import count_tokens

__all__ = [
    "ABSTENTION_PHRASES",
    "METRIC_LABELS",
    "bleu1",
    "context_token_set",
    "count_tokens",
    "exact_match",
    "f1_score",
    "is_abstention",
    "lexical_judge",
    "locomo_f1",
    "meteor",
    "normalize_answer",
    "rouge_2",
    "rouge_l",
    "similarity",
    "similarity_texts",
    "stem_token_set",
    "stem_tokens",
]

ABSTENTION_PHRASES = ("not mentioned", "no information available")
METRIC_LABELS = {
    "f1": "LoCoMo official token F1 (Porter-stemmed, per-category rules)",
    "bleu1": "BLEU-1 (nltk sentence_bleu, unigram, smoothing method 1; normalised tokens)",
    "rouge_2": "ROUGE-2 F1 (bigram overlap of normalised tokens, no stemming; 0 when either side has < 2 tokens)",
    "meteor": "METEOR without synonyms: nltk meteor_score with exact and Porter-stem matching only "
              "(WordNet synonym stage off: WordNet data is not installable offline)",
    "similarity": "embedding similarity: cosine of the run's embedder's vectors of answer and gold "
                  "(SBERT similarity when the embedder is all-MiniLM-L6-v2; not computed for abstention questions)",
}
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


@lru_cache(maxsize=32768, typed=True)
def stem_token_set(text: str) -> frozenset[str]:
    """The set of `stem_tokens(text)`, cached: retrieved blocks and context lines recur across questions and
    systems, and the evidence measures ask for the same ones again and again."""
    return frozenset(stem_tokens(text))


def context_token_set(context: str) -> frozenset[str]:
    """`set(stem_tokens(context))`, built line by line from the cached `stem_token_set`: the normalisation
    and the tokens never span a newline, so the union over the lines is the same set."""
    return frozenset().union(*map(stem_token_set, context.split("\n")))


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

    Unigram precision times the brevity penalty, as reported by Hu et al. (paper 001) and the LoCoMo papers.
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


def _bigrams(tokens: list[str]) -> Counter:
    return Counter(zip(tokens, tokens[1:], strict=False))


def rouge_2(prediction: str | int | float, gold: str | int | float) -> float:
    """ROUGE-2 F1 (Lin, 2004): overlap of normalised-token bigrams, repeats counted (no stemming); in [0, 1]."""
    pred, ref = _bigrams(normalize_answer(prediction).split()), _bigrams(normalize_answer(gold).split())
    same = sum((pred & ref).values())
    if same == 0:
        return 0.0
    precision, recall = same / sum(pred.values()), same / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


class _NoSynonyms:
    """A WordNet stand-in with no synsets: METEOR's synonym stage matches nothing."""

    @staticmethod
    def synsets(word: str) -> list:
        return []


def meteor(prediction: str | int | float, gold: str | int | float) -> float:
    """METEOR (Banerjee & Lavie, 2005) without synonyms, on normalised tokens; in [0, 1].

    nltk's meteor_score (alpha 0.9, beta 3, gamma 0.5) with exact, then Porter-stem matches; the
    WordNet synonym stage is off (see the module docstring), so scores can be below published ones.
    """
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return 0.0
    from nltk.translate.meteor_score import meteor_score

    return float(meteor_score([ref], pred, stemmer=porter_stemmer(), wordnet=_NoSynonyms()))  # type: ignore[arg-type]


class Embeds(Protocol):
    """Anything with an `embed(texts) -> array` method (memcore.embed.Embedder)."""

    def embed(self, texts: Sequence[str]) -> Any: ...


def similarity_texts(prediction: str | int | float, gold: str | int | float) -> list[str]:
    """The texts `similarity` embeds for an answer and its gold answer ([] when either is empty)."""
    pred, ref = str(prediction).strip(), str(gold).strip()
    return [pred, ref] if pred and ref else []


def similarity(prediction: str | int | float, gold: str | int | float, embedder: Embeds) -> float:
    """Cosine similarity of the answer's and the gold answer's embeddings (SBERT similarity with MiniLM).

    0.0 when either text is empty or a vector is zero."""
    texts = similarity_texts(prediction, gold)
    if not texts:
        return 0.0
    a, b = np.asarray(embedder.embed(texts), dtype=float)
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm else 0.0
