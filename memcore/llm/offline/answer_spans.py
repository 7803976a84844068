"""A learned span ranker for the offline reader: the best short answer span inside evidence sentences.

Candidates are contiguous word spans (1..`MAX_WORDS` words) of each sentence that neither start
nor end with a stopword or punctuation, do not cross a sentence end, and are not made only of
question words. Each candidate gets cheap lexical features (no tagger): its length, how much of
it repeats the question, how far it sits from the question's words, whether the question's main
verb or another question word directly precedes it, the sentence's rank and coverage of the
question, capitals / digits / month words, the word before it (a preposition, copula, "my", an
article), its position, and whether the type-specific extractor (answer_types.extract_typed)
found it. Every feature is also crossed with the question's wh-word ("what", "who", "where",
"how many", "kind", ...), so the linear model learns e.g. that "where" answers follow "in"/"at".
The weights are a logistic regression fitted by bench/fit_answer_spans.py on LoCoMo's tuning
conversations and stored as readable JSON (answer_spans_model.json: feature name -> weight).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from memcore.llm.offline.answer_fragments import lexicon
from memcore.llm.offline.answer_types import extract_typed, question_kind
from memcore.text.dates import MONTHS, RELATIVE, WEEKDAY_ABBR, WEEKDAYS
from memcore.text.terms import STOPWORDS, stem, stems

MODEL_PATH = Path(__file__).with_name("answer_spans_model.json")
MAX_WORDS = 10  # longest candidate span, in words
_TOKEN = re.compile(r"[A-Za-z0-9][\w'\u2019\-]*|[^\w\s]")
_SENT_END = frozenset(".!?")
_PREP = frozenset("in at on to from with by for of about into near around through across during like".split())
_COPULA = frozenset("is was are were be been being am 's 're".split())
_POSS = frozenset("my our his her their your its".split())
_DET = frozenset("a an the some this that these those".split())
_SKIP_BEFORE = _POSS | _DET  # the word before a span looks past one determiner ("made [a] vegan cake")
_PLACE = frozenset("""beach park lake mountain mountains forest museum city town country island coast river hill
hills trail cafe restaurant library school church center centre studio gym shelter market festival camp home
house village state canyon ocean sea""".split())
_AUX = re.compile(r"\b(?:did|does|do|has|have|had|is|was|are|were|will|would|can|could)\s+[A-Z]\w*(?:'s)?"
                  r"(?:\s+(?:and|&)\s+\w+(?:'s)?(?:\s+\w+)?)?\s+(\w+)")
_TIME_WORDS = frozenset("""yesterday today tonight tomorrow last next ago lately recently week weekend month year
morning night evening afternoon summer winter spring fall""".split()) | frozenset(WEEKDAYS) | frozenset(WEEKDAY_ABBR)
_PRONOUNS = frozenset("i i'm i've i'd i'll me my we our us you your it it's they them he she his her".split())
# closed-class words whose presence right before a span is its own feature ("painting *of* X", "called X")
_PREV_WORDS = _PREP | _COPULA | _POSS | _DET | frozenset("and or called named , - : made make love like".split())
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|we|our|us)\b")
WH = ("what", "who", "where", "when", "which", "why", "how", "howmany", "kind", "yesno", "other")


def wh_of(question: str) -> str:
    """The question's wh-class: what/who/where/when/which/why/how/howmany/kind/yesno/other."""
    q = " ".join(question.lower().split())
    if re.match(r"^how (many|much|long|often|old|far)\b", q):
        return "howmany"
    if re.search(r"\bwhat (kinds?|types?|sorts?) of\b", q):
        return "kind"
    for w in ("what", "who", "where", "when", "which", "why", "how"):
        if re.match(rf"^{w}\b", q) or (w == "who" and re.match(r"^whom?|^whose\b", q)):
            return w
    if question_kind(question)["type"] == "yesno":
        return "yesno"
    m = re.search(r"\b(what|who|where|when|which|why|how)\b", q)
    return m.group(1) if m else "other"


def _wstem(word: str) -> str:
    w = word.lower().replace("\u2019", "'")
    w = re.sub(r"'(s|re|ve|ll|d|m)$", "", w)
    return stem(w) if w and w not in STOPWORDS else ""


def _focus(question: str) -> str:
    """The main verb after the question's auxiliary and named subject ("What did Nate *make*?")."""
    m = _AUX.search(question)
    return _wstem(m.group(1)) if m else ""


class _Question:
    """What the features need from a question, computed once."""

    def __init__(self, question: str, speakers: Sequence[str]) -> None:
        self.text = question
        self.stems = frozenset(stems(question))
        self.focus = _focus(question)
        self.wh = wh_of(question)
        self.kind = question_kind(question)
        self.names = frozenset(w.lower() for s in speakers for w in s.split())

    def is_name(self, word: str) -> bool:
        """A speaker's name or its short form of >= 3 letters ("Mel" for Melanie)."""
        w = word.lower().removesuffix("'s")
        return len(w) >= 3 and any(n.startswith(w) for n in self.names)


def _sentence_tokens(sentence: str) -> list[re.Match]:
    return list(_TOKEN.finditer(sentence))


def _spans(toks: list[re.Match]) -> list[tuple[int, int]]:
    """(first, last) token indices of the candidate spans of one sentence."""
    words = [t.group(0)[0].isalnum() for t in toks]
    ok_edge = [words[i] and toks[i].group(0).lower().replace("\u2019", "'") not in STOPWORDS for i in range(len(toks))]
    out = []
    for i in range(len(toks)):
        if not ok_edge[i]:
            continue
        n = 0
        for j in range(i, len(toks)):
            if toks[j].group(0) in _SENT_END:
                break
            n += words[j]
            if n > MAX_WORDS:
                break
            if ok_edge[j]:
                out.append((i, j))
    return out


def _bin(prefix: str, value: int | None, edges: Sequence[int]) -> str:
    if value is None:
        return f"{prefix}_none"
    for e in edges:
        if value <= e:
            return f"{prefix}_le{e}"
    return f"{prefix}_gt{edges[-1]}"


def _sentence_features(q: _Question, sentence: str, rank: int, cov: float,
                       best_cov: float) -> tuple[list[re.Match], list[str], dict]:
    toks = _sentence_tokens(sentence)
    st = [_wstem(t.group(0)) if t.group(0)[0].isalnum() else "" for t in toks]
    typed = extract_typed(q.kind, [sentence], "", set(q.stems), q.text, strict=True) \
        if q.kind["type"] not in ("yesno", "reason") else ""
    base = {_bin("srank", rank, (0, 1, 2)): 1.0, "scov": cov, "scov_best": float(cov >= best_cov > 0),
            "sent_question": float(sentence.rstrip().endswith("?")),
            "sent_first_person": float(bool(_FIRST_PERSON.search(sentence)))}
    return toks, st, {"base": base, "typed": typed}


def span_features(q: _Question, sentence: str, toks: list[re.Match], st: list[str], i: int, j: int,
                  shared: dict) -> dict[str, float]:
    """Features of the span toks[i..j] of a sentence (base features plus their crosses with the wh-class)."""
    _, junk, _ = lexicon()
    span_words = [k for k in range(i, j + 1) if toks[k].group(0)[0].isalnum()]
    n = len(span_words)
    content = [st[k] for k in span_words if st[k]]
    qhits = [k for k in range(len(toks)) if st[k] and st[k] in q.stems]
    left = [i - k for k in qhits if k < i]
    right = [k - j for k in qhits if k > j]
    prev = i - 1
    if prev >= 0 and toks[prev].group(0).lower() in _SKIP_BEFORE:
        prev -= 1
    before = toks[i - 1].group(0).lower() if i > 0 else ""
    after = toks[j + 1].group(0) if j + 1 < len(toks) else ""
    words = [toks[k].group(0) for k in span_words]
    low = [w.lower() for w in words]
    text = sentence[toks[i].start():toks[j].end()]
    typed = shared["typed"]
    f: dict[str, float] = dict(shared["base"])
    f["bias"] = 1.0
    f[_bin("len", n, (1, 2, 3, 5, 8))] = 1.0
    f["n_content"] = min(len(content), 6) / 6
    f["qshare"] = sum(c in q.stems for c in content) / (len(content) or 1)
    f["new_content"] = min(sum(c not in q.stems for c in content), 5) / 5
    f[_bin("left", min(left) if left else None, (1, 3, 6))] = 1.0
    f[_bin("right", min(right) if right else None, (1, 3, 6))] = 1.0
    f["prev_focus"] = float(prev >= 0 and bool(q.focus) and st[prev] == q.focus)
    f["prev_q"] = float(prev >= 0 and bool(st[prev]) and st[prev] in q.stems)
    f["next_q"] = float(j + 1 < len(toks) and bool(st[j + 1]) and st[j + 1] in q.stems)
    f["cap_share"] = sum(toks[k].group(0)[0].isupper() for k in span_words if k > 0) / n
    f["digit"] = float(any(c.isdigit() for c in text))
    f["month"] = float(any(w in MONTHS for w in low))
    f["weekday"] = float(any(w.rstrip("s") in WEEKDAYS for w in low))
    f["place_word"] = float(any(w in _PLACE for w in low))
    f["speaker_name"] = float(any(q.is_name(w) for w in words))
    f["junk_share"] = sum(c in junk for c in content) / (len(content) or 1)
    f["prev_prep"] = float(before in _PREP)
    f["prev_copula"] = float(before in _COPULA)
    f["prev_poss"] = float(before in _POSS)
    f["prev_det"] = float(before in _DET)
    f["prev_start"] = float(i == 0 or before in ("\"", "\u201c", ":"))
    f["next_punct"] = float(not after or not after[0].isalnum())
    f["pos_start"] = i / max(1, len(toks))
    f["has_comma"] = float(any(toks[k].group(0) == "," for k in range(i, j + 1)))
    f["has_and"] = float("and" in low[1:-1])
    f["time_word"] = float(any(w in _TIME_WORDS for w in low) or bool(RELATIVE.search(text)))
    f["pronoun"] = float(any(w.replace("\u2019", "'") in _PRONOUNS for w in low))
    f["inner_stop"] = sum(w in STOPWORDS for w in low) / n
    f["ing_share"] = sum(w.endswith("ing") for w in low) / n
    f["ed_share"] = sum(w.endswith("ed") for w in low) / n
    f["ly_share"] = sum(w.endswith("ly") for w in low) / n
    f["prev_punct"] = float(bool(before) and not before[0].isalnum())
    f["whole_sentence"] = float(i == 0 and (j + 1 >= len(toks) or toks[j + 1].group(0) in _SENT_END))
    f["sent_lower_start"] = float(sentence[:1].islower())
    if before in _PREV_WORDS:
        f[f"prev={before}"] = 1.0
    near = max((k for k in qhits if k < i), default=None)
    f["left_clause"] = float(near is not None and all(toks[k].group(0)[0].isalnum() for k in range(near, i)))
    f["in_quotes"] = float(before in ("\"", "\u201c") and after in ("\"", "\u201d"))
    f["first_q_dist"] = min(left) / 10 if left and min(left) <= 10 else 1.0
    if typed:
        f["typed_eq"] = float(text == typed)
        f["typed_in"] = float(text != typed and text in typed)
        f["typed_cover"] = float(text != typed and typed in text)
    out = {k: v for k, v in f.items() if v}
    out.update({f"{q.wh}:{k}": v for k, v in list(out.items())})
    return out


def _bins(prefix: str, edges: Sequence[int], none: bool = False) -> list[str]:
    return [f"{prefix}_le{e}" for e in edges] + [f"{prefix}_gt{edges[-1]}"] + ([f"{prefix}_none"] if none else [])


_BASE = ("bias scov scov_best sent_question sent_first_person n_content qshare new_content prev_focus prev_q next_q "
         "cap_share digit month weekday place_word speaker_name junk_share prev_prep prev_copula prev_poss prev_det "
         "prev_start next_punct pos_start has_comma has_and typed_eq typed_in typed_cover time_word pronoun "
         "inner_stop ing_share ed_share ly_share prev_punct whole_sentence sent_lower_start first_q_dist left_clause "
         "in_quotes").split()


@lru_cache(maxsize=1)
def feature_names() -> tuple[str, ...]:
    """Every feature name span_features can produce (base features, previous words, wh crosses), sorted."""
    base = (_BASE + _bins("srank", (0, 1, 2)) + _bins("len", (1, 2, 3, 5, 8)) + _bins("left", (1, 3, 6), True)
            + _bins("right", (1, 3, 6), True) + [f"prev={w}" for w in _PREV_WORDS])
    return tuple(sorted(base + [f"{wh}:{b}" for wh in WH for b in base]))


def candidates(question: str, sentences: Sequence[str], speakers: Sequence[str] = ()) -> list[tuple[str, int, dict]]:
    """Every candidate span as (text, sentence index, features), sentences in the order given."""
    q = _Question(question, speakers)
    prepared = [_sentence_tokens(s) for s in sentences]
    sets = [{_wstem(t.group(0)) for t in toks} for toks in prepared]
    # question words weighted by their rarity among the given sentences (a word every sentence has tells nothing)
    idf = {t: math.log((len(sets) + 1) / (1 + sum(t in x for x in sets))) + 1.0 for t in q.stems}
    total = sum(idf.values()) or 1.0
    covs = [sum(idf[t] for t in q.stems & x) / total for x in sets]
    best_cov = max(covs, default=0.0)
    out = []
    for r, s in enumerate(sentences):
        toks, st, shared = _sentence_features(q, s, r, covs[r], best_cov)
        for i, j in _spans(toks):
            content = [st[k] for k in range(i, j + 1) if st[k]]
            if content and all(c in q.stems for c in content):
                continue
            text = s[toks[i].start():toks[j].end()]
            out.append((text, r, span_features(q, s, toks, st, i, j, shared)))
    return out


@lru_cache(maxsize=4)
def load_model(path: str = str(MODEL_PATH)) -> dict[str, float]:
    """The fitted weights (feature name -> weight, "intercept" included); {} when the file is missing."""
    p = Path(path)
    if not p.exists():
        return {}
    return {str(k): float(v) for k, v in json.loads(p.read_text())["weights"].items()}


def score(features: dict[str, float], weights: dict[str, float]) -> float:
    """The model's log-odds that a span is the answer."""
    return weights.get("intercept", 0.0) + sum(weights.get(k, 0.0) * v for k, v in features.items())


def best_span(question: str, sentences: Sequence[str], speakers: Sequence[str] = ()) -> tuple[str, float]:
    """The best answer span among the candidate spans of the sentences (given best-supported first) and its
    score (log-odds); ("", -inf) when there is no candidate or no model file."""
    weights = load_model()
    best = ("", float("-inf"))
    if not weights:
        return best
    for text, _, feats in candidates(question, sentences, speakers):
        s = score(feats, weights)
        if s > best[1]:  # ties keep the earlier sentence and position
            best = (text, s)
    return best
