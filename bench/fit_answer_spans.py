"""Fit the offline reader's span ranker (memcore/llm/offline/answer_spans.py) and evaluate it on LoCoMo.

Training set: LoCoMo's tuning conversations only (conv-26, 30, 41, 42), categories 1, 3 and 4,
oracle context (the question's gold evidence turns, split into sentences as the reader splits
them, photo captions included), sentences ordered by their coverage of the question's words.
Every candidate span is an example, labelled positive when its F1 to the gold answer is >= 0.5
(category 1: to its best-matching gold part; category 3: gold up to ';'); each question's
examples weigh 1 in total. A logistic regression (scikit-learn, L2, C chosen by
leave-one-conversation-out among the tuning four) is fitted and its weights written as JSON.

Evaluation on tuning and held-out (conv-43, 44, 47, 48) conversations: LoCoMo's official F1
(memcore.eval.metrics.locomo_f1) per category of `best_span` with the oracle context, against the
current reader's oracle predictions (a dump of bench/offline_answer_quality.py --dump), and a
"combined" policy: the reader's answer for date / number / yes-no questions
(answer_types.question_kind), best_span for the rest. Category 2 keeps the reader's answer in
both overall columns.

    .venv/bin/python bench/fit_answer_spans.py [--dump /tmp/oq_dump.jsonl] [--no-write] [--C 0.3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
from scipy import optimize, sparse
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offline_answer_quality import SHARED, full_inputs, oracle_inputs  # noqa: E402

from memcore.datasets import load_dataset  # noqa: E402
from memcore.eval.metrics import f1_score, locomo_f1  # noqa: E402
from memcore.llm.offline import answer as reader  # noqa: E402
from memcore.llm.offline import answer_spans  # noqa: E402
from memcore.llm.offline.answer import offline_answer  # noqa: E402
from memcore.llm.offline.answer_passages import parse_passages  # noqa: E402
from memcore.llm.offline.answer_types import question_kind  # noqa: E402
from memcore.text.terms import stems  # noqa: E402
from memcore.types import Conversation, Question  # noqa: E402

TUNING = ("conv-26", "conv-30", "conv-41", "conv-42")
HELD_OUT = ("conv-43", "conv-44", "conv-47", "conv-48")
CATS = (1, 3, 4)
READER_KINDS = ("date", "number", "yesno")  # the combined policy keeps the reader's answer for these
ABSTAIN = "No information available"
POSITIVE = 0.5
LISTWISE = False  # a softmax over each question's candidates instead of the pointwise logistic regression
SOFT = False  # soft labels (F1 as the target) instead of F1 >= POSITIVE


def oracle_sentences(conv: Conversation, q: Question) -> list[str]:
    """The gold evidence turns' sentences (captions included), best-covering the question first."""
    qst = set(stems(q.text))
    sents = [s for p in parse_passages(oracle_inputs(conv, q)) for s in p.sents]
    order = sorted(range(len(sents)), key=lambda i: (-len(qst & sents[i].stems), i))
    return [sents[i].text for i in order]


def span_f1(span: str, gold: str, category: int) -> float:
    """A single span's F1 to the gold answer (category 1: its best gold part; 3: gold up to ';')."""
    if category == 1:
        return max(f1_score(span, g.strip()) for g in gold.split(","))
    return locomo_f1(span, gold, category)


def examples(convs: list[Conversation], cats: tuple[int, ...] = CATS) -> list[dict[str, Any]]:
    """One record per question of the categories: its candidates' features and F1s."""
    out = []
    for conv in convs:
        for q in conv.questions:
            if int(q.category) not in cats:
                continue
            cands = answer_spans.candidates(q.text, oracle_sentences(conv, q), conv.speakers)
            out.append({"conv": conv.id, "q": q, "feats": [c[2] for c in cands], "texts": [c[0] for c in cands],
                        "f1": [span_f1(c[0], str(q.answer), int(q.category)) for c in cands]})
    return out


def reader_examples(convs: list[Conversation]) -> list[dict[str, Any]]:
    """Records as the wiring would see them: for every span extraction of the reader (oracle context, categories
    1, 3, 4, not date / number / yes-no), the sentences of the passage it chose, the chosen sentence first."""
    calls: list[tuple[Question, list[str], list[str]]] = []
    current: list[Question] = []

    def record(orig: Any, kind: dict, c: Any, passages: list, weights: dict, question: str, speakers: list[str],
               vocab: Any) -> str:
        if kind["type"] not in READER_KINDS:
            calls.append((current[0], [x.text for x in reader._ordered(c, passages[c.sent.passage], weights)],
                          list(speakers)))
        return orig(kind, c, passages, weights, question, speakers, vocab)

    with mock.patch.object(reader, "_extract", partial(record, reader._extract)):
        for conv in convs:
            for q in conv.questions:
                if int(q.category) in CATS:
                    current[:] = [q]
                    offline_answer(oracle_inputs(conv, q))
    out = []
    for q, sents, speakers in calls:
        cands = answer_spans.candidates(q.text, sents, speakers)
        if cands:
            out.append({"conv": q.conv_id, "q": q, "feats": [c[2] for c in cands], "texts": [c[0] for c in cands],
                        "f1": [span_f1(c[0], str(q.answer), int(q.category)) for c in cands]})
    return out


def fit_listwise(records: list[dict[str, Any]], c: float) -> dict[str, float]:
    """Weights of a conditional logit (softmax over each question's candidates; target: the F1-weighted
    candidates), L2-regularised with strength 1/c; scipy's L-BFGS."""
    vec = DictVectorizer(sparse=True, sort=True)
    x = vec.fit_transform([f for r in records for f in r["feats"]]).tocsr()
    groups = np.repeat(np.arange(len(records)), [len(r["feats"]) for r in records])
    starts = np.concatenate([[0], np.cumsum([len(r["feats"]) for r in records])[:-1]])
    f1 = np.array([v for r in records for v in r["f1"]])
    tot = np.add.reduceat(f1, starts)
    keep = tot[groups] > 0  # questions without any overlapping candidate teach nothing
    target = np.where(keep, f1 / np.where(tot[groups] > 0, tot[groups], 1.0), 0.0)
    nq = max(1, int((tot > 0).sum()))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = x @ w
        mx = np.maximum.reduceat(s, starts)
        e = np.exp(s - mx[groups])
        z = np.add.reduceat(e, starts)
        logp = s - mx[groups] - np.log(z[groups])
        val = -(target * logp).sum() / nq + 0.5 / c * (w @ w) / nq
        grad = x.T @ ((np.where(keep, e / z[groups], 0.0) - target) / nq) + w / c / nq
        return float(val), grad

    res = optimize.minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    weights = {name: float(v) for name, v in zip(vec.get_feature_names_out(), res.x, strict=True)}
    weights["intercept"] = 0.0
    return weights


def fit(records: list[dict[str, Any]], c: float) -> dict[str, float]:
    """Weights (feature -> weight, plus "intercept") of a logistic regression on the records' candidates."""
    if LISTWISE:
        return fit_listwise(records, c)
    feats = [f for r in records for f in r["feats"]]
    vec = DictVectorizer(sparse=True, sort=True)
    x = vec.fit_transform(feats)
    per_q = np.array([1.0 / len(r["feats"]) for r in records for _ in r["feats"]]) * len(records)
    if SOFT:  # each candidate twice: positive weighted by its F1, negative by 1 - F1
        f1 = np.array([v for r in records for v in r["f1"]])
        x = sparse.vstack([x, x]).tocsr()
        y = np.concatenate([np.ones(len(f1), dtype=int), np.zeros(len(f1), dtype=int)])
        w = np.concatenate([per_q * f1, per_q * (1 - f1)])
    else:
        y = np.array([f1 >= POSITIVE for r in records for f1 in r["f1"]], dtype=int)
        w = per_q
    model = LogisticRegression(C=c, max_iter=3000, solver="lbfgs")
    model.fit(x, y, sample_weight=w)
    weights = {name: float(v) for name, v in zip(vec.get_feature_names_out(), model.coef_[0], strict=True)}
    unknown = set(weights) - set(answer_spans.feature_names())
    if unknown:
        raise RuntimeError(f"features missing from answer_spans.feature_names(): {sorted(unknown)[:5]}")
    weights["intercept"] = float(model.intercept_[0])
    return weights


def predict(record: dict[str, Any], weights: dict[str, float]) -> str:
    """The top-scored candidate's text (the abstention phrase when there is none)."""
    return predict_scored(record, weights)[0]


def predict_scored(record: dict[str, Any], weights: dict[str, float]) -> tuple[str, float]:
    """The top-scored candidate's text and score (the abstention phrase and -inf when there is none)."""
    best, top = ABSTAIN, float("-inf")
    for text, f in zip(record["texts"], record["feats"], strict=True):
        s = answer_spans.score(f, weights)
        if s > top:
            best, top = text, s
    return best, top


def mean_f1(records: list[dict[str, Any]], weights: dict[str, float]) -> float:
    """Mean official F1 of best_span's choice over the records."""
    vals = [locomo_f1(predict(r, weights), r["q"].answer, r["q"].category) for r in records]
    return sum(vals) / max(1, len(vals))


def choose_c(records: list[dict[str, Any]], grid: tuple[float, ...]) -> float:
    """The C with the best leave-one-conversation-out F1 over the tuning records."""
    scores = {}
    for c in grid:
        vals = []
        for conv in TUNING:
            train = [r for r in records if r["conv"] != conv]
            test = [r for r in records if r["conv"] == conv]
            vals.append(mean_f1(test, fit(train, c)) * len(test))
        scores[c] = sum(vals) / len(records)
        print(f"  C={c:g}: leave-one-conversation-out F1 (1,3,4) {scores[c]:.3f}", flush=True)
    return max(grid, key=lambda c: (scores[c], -c))


POLICIES = {  # name -> whether the reader's answer is kept (else best_span's), given kind, reader's answer, span score
    "reader": lambda kind, ans, score: True,
    "ranker": lambda kind, ans, score: False,
    "combined": lambda kind, ans, score: kind["type"] in READER_KINDS,
    "comb+list": lambda kind, ans, score: kind["type"] in READER_KINDS or kind["list"],
    "abstain": lambda kind, ans, score: kind["type"] in READER_KINDS or ans != ABSTAIN,
    **{f"abst>{t:g}": partial(lambda kind, ans, score, t: kind["type"] in READER_KINDS or ans != ABSTAIN or score < t,
                              t=t) for t in (-1.0, -0.5)},
    # best_span replaces the reader's span only where the reader answers (its abstentions, so category 5, stay)
    "answered": lambda kind, ans, score: kind["type"] in READER_KINDS or ans == ABSTAIN,
    "answ-list": lambda kind, ans, score: kind["type"] in READER_KINDS or ans == ABSTAIN or kind["list"] or "," in ans,
}


def table(records: list[dict[str, Any]], weights: dict[str, float], reader: dict[str, dict]) -> None:
    """Per split and category: reader vs ranker vs the combined policies (oracle context); category 2 is
    always the reader's. "abstain": best_span only where the reader abstained."""
    print(f"{'split':9} {'policy':9} " + " ".join(f"{'c' + str(c):>6}" for c in (1, 3, 4)) + f" {'1-4':>6}"
          + f" {'c5':>6}  n")
    for split, convs in (("tuning", TUNING), ("held-out", HELD_OUT)):
        recs = [r for r in records if r["conv"] in convs]
        c2 = [x["f1"] for x in reader.values() if x["conv"] in convs and x["category"] == 2]
        rows: dict[str, dict[int, list[float]]] = {k: defaultdict(list) for k in POLICIES}
        for r in recs:
            q = r["q"]
            rd = reader.get(q.id, {"f1": 0.0, "prediction": ABSTAIN})
            span, sc = predict_scored(r, weights)
            mine = locomo_f1(span, q.answer, q.category)
            kind = question_kind(q.text)
            for name, keep in POLICIES.items():
                rows[name][int(q.category)].append(rd["f1"] if keep(kind, rd["prediction"], sc) else mine)
        for name, by in rows.items():
            allv = [v for c in CATS for v in by[c]] + c2
            cells = " ".join(f"{sum(by[c]) / max(1, len(by[c])):6.3f}" for c in CATS)
            c5 = sum(by[5]) / max(1, len(by[5]))
            print(f"{split:9} {name:9} {cells} {sum(allv) / max(1, len(allv)):6.3f} {c5:6.3f}  {len(allv)}")


def live_reader(convs: list[Conversation], wiring: str = "", mode: str = "oracle") -> dict[str, dict]:
    """The current offline reader's answers (its `answer` role implementation) with the oracle or full context.

    wiring "fill": where the reader's span extraction (answer._extract, after every abstention rule has
    passed) finds nothing for a question that is not a date / number / yes-no one, best_span over the
    sentences of the passage the reader chose (the chosen sentence first); "replace": best_span instead of
    the reader's span for those questions; "thing": only for open questions (type "thing", no sub-type, not a
    list). Simulated by patching answer._extract here, not in the library."""
    inputs = oracle_inputs if mode == "oracle" else full_inputs
    out = {}
    with contextlib.ExitStack() as stack:
        if wiring:
            stack.enter_context(mock.patch.object(reader, "_extract", partial(_wired_extract, reader._extract, wiring)))
        for conv in convs:
            for q in conv.questions:
                pred = offline_answer(inputs(conv, q)).text
                out[q.id] = {"conv": conv.id, "category": int(q.category), "prediction": pred,
                             "f1": locomo_f1(pred, q.answer, q.category)}
    return out


def _wired_extract(orig: Any, wiring: str, kind: dict, c: Any, passages: list, weights: dict, question: str,
                   speakers: list[str], vocab: Any) -> str:
    ans = orig(kind, c, passages, weights, question, speakers, vocab)
    if kind["type"] in READER_KINDS or (ans and wiring == "fill"):
        return ans
    if wiring == "thing" and (kind["type"] != "thing" or kind["sub"] or kind["list"]):
        return ans  # only open "what" questions: the reader keeps names, places, titles and lists
    sents = [x.text for x in reader._ordered(c, passages[c.sent.passage], weights)]
    return answer_spans.best_span(question, sents, speakers)[0] or ans


def wired_table(convs: dict[str, Conversation], mode: str) -> None:
    """Per split: the reader alone vs the reader wired to best_span (fill / replace), categories 1-4 and 5."""
    print(f"\n{mode} context, best_span wired into the reader (simulated):")
    print(f"{'split':9} {'wiring':9} " + " ".join(f"{'c' + str(c):>6}" for c in (1, 2, 3, 4)) + f" {'1-4':>6} {'c5':>6}")
    for split, names in (("tuning", TUNING), ("held-out", HELD_OUT)):
        for wiring in ("", "fill", "replace", "thing"):
            got = live_reader([convs[n] for n in names], wiring, mode)
            by: dict[int, list[float]] = defaultdict(list)
            for x in got.values():
                by[x["category"]].append(x["f1"])
            main = [v for c in (1, 2, 3, 4) for v in by[c]]
            cells = " ".join(f"{sum(by[c]) / max(1, len(by[c])):6.3f}" for c in (1, 2, 3, 4))
            print(f"{split:9} {wiring or 'reader':9} {cells} {sum(main) / max(1, len(main)):6.3f} "
                  f"{sum(by[5]) / max(1, len(by[5])):6.3f}", flush=True)


def main(argv: list[str] | None = None) -> None:
    """Fit on the tuning conversations, write the model JSON, print the evaluation table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", type=Path, default=None,
                    help="the reader's predictions (bench/offline_answer_quality.py --dump); default: run it now")
    ap.add_argument("--C", type=float, default=None, help="regularisation (default: chosen by cross-validation)")
    ap.add_argument("--no-write", action="store_true", help="evaluate without writing the model JSON")
    ap.add_argument("--soft", action="store_true", help="fit F1 as a soft label instead of F1 >= 0.5")
    ap.add_argument("--listwise", action="store_true", help="softmax over each question's candidates")
    ap.add_argument("--grid", default="0.01,0.03,0.1", help="C values tried by cross-validation")
    ap.add_argument("--wired", default="oracle", help="contexts (oracle,full) for the simulated wiring table")
    ap.add_argument("--train-on", choices=("oracle", "reader"), default="oracle",
                    help="oracle: every gold evidence sentence; reader: the passages the reader chose (as wired)")
    args = ap.parse_args(argv)
    global SOFT, LISTWISE
    SOFT, LISTWISE = args.soft, args.listwise
    convs = {c.id: c for f in sorted(SHARED.glob("conv-*.json")) for c in load_dataset(f)}
    missing = [c for c in TUNING + HELD_OUT if c not in convs]
    if missing:
        sys.exit(f"LoCoMo conversations not found in {SHARED}: {', '.join(missing)}")
    records = examples([convs[c] for c in TUNING + HELD_OUT], CATS + (5,))
    tuning = [r for r in records if r["conv"] in TUNING and int(r["q"].category) in CATS]
    if args.train_on == "reader":
        tuning = reader_examples([convs[c] for c in TUNING])
    n_cand = sum(len(r["feats"]) for r in tuning)
    print(f"training: {len(tuning)} questions, {n_cand} candidate spans; "
          f"oracle ceiling (best candidate) F1 {sum(max(r['f1'], default=0) for r in tuning) / len(tuning):.3f}")
    c = args.C if args.C is not None else choose_c(tuning, tuple(float(v) for v in args.grid.split(",")))
    weights = fit(tuning, c)
    if not args.no_write:
        body = {"about": "offline span ranker weights (bench/fit_answer_spans.py): logistic regression on LoCoMo "
                         f"{', '.join(TUNING)}, categories 1/3/4, oracle context; label "
                         + ("span F1 (soft)" if SOFT else f"span F1 >= {POSITIVE}"),
                "C": c, "weights": {k: round(weights.get(k, 0.0), 5)
                                   for k in ("intercept", *answer_spans.feature_names())}}
        answer_spans.MODEL_PATH.write_text(json.dumps(body, indent=1) + "\n")
        answer_spans.load_model.cache_clear()
        weights = answer_spans.load_model()
        print(f"wrote {answer_spans.MODEL_PATH} ({len(weights)} weights, C={c:g})")
    if args.dump:
        print(f"reader: oracle predictions in {args.dump}")
        reader_rows = {x["id"]: x for x in map(json.loads, args.dump.open()) if x["mode"] == "oracle"}
    else:
        print("reader: the current offline reader (memcore.llm.offline.answer), run now")
        reader_rows = live_reader([convs[c] for c in TUNING + HELD_OUT])
    table(records, weights, reader_rows)
    with mock.patch.object(answer_spans, "load_model", lambda: weights):  # the weights just fitted, written or not
        for mode in args.wired.split(","):
            if mode:
                wired_table(convs, mode)


if __name__ == "__main__":
    main()
