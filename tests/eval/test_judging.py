"""Honest judging: K judge runs with different seeds (mean and std), the judge's model / prompt / K in
results, and ROUGE-2, METEOR (no synonyms) and embedding similarity beside F1 and BLEU-1."""

from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import numpy as np
import pytest

from memcore.eval.judge import judge_runs, judge_stats, make_judge
from memcore.eval.judge_prompts import judge_prompt, judge_prompt_name
from memcore.eval.metrics import METRIC_LABELS, meteor, rouge_2, similarity
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.types import Question


def test_rouge_2_counts_bigrams():
    assert rouge_2("she went to Lisbon in July", "went to Lisbon") == pytest.approx(2 * (2 / 5) * 1 / (2 / 5 + 1))
    assert rouge_2("Lisbon", "Lisbon") == 0.0  # no bigram on either side
    assert rouge_2("the red bike", "a red bike") == 1.0  # articles normalised away
    assert rouge_2("red bike shop", "red bike shop") == 1.0


def test_meteor_without_synonyms_matches_exact_and_stems_only():
    assert meteor("running shoes", "run shoe") > 0.9  # Porter stems match
    assert meteor("car", "automobile") == 0.0  # a synonym: no WordNet stage
    assert 0 < meteor("Maya adopted a dog named Pepper", "Pepper") < 1
    assert meteor("", "x") == 0.0
    assert "without synonyms" in METRIC_LABELS["meteor"]


class Unit:
    """An embedder giving fixed vectors by text."""

    name = "unit"

    def __init__(self, vecs: dict[str, list[float]]) -> None:
        self.vecs = vecs

    def embed(self, texts):
        return np.array([self.vecs[t] for t in texts], dtype=float)


def test_similarity_is_the_cosine_of_the_embeddings():
    emb = Unit({"a": [1, 0], "b": [1, 1], "z": [0, 0]})
    assert similarity("a", "b", emb) == pytest.approx(2 ** -0.5)
    assert similarity("a", "z", emb) == 0.0 and similarity("", "b", emb) == 0.0


def test_prompt_names_follow_the_prompt_choice():
    assert judge_prompt_name(1) == "locomo-mem0" and judge_prompt_name(4, style="com") == "locomo-com"
    assert judge_prompt_name(5) == judge_prompt_name("x_abs") == "abstention"
    assert judge_prompt_name("temporal-reasoning") == "longmemeval-temporal-reasoning"
    assert judge_prompt_name("multi-session") == "longmemeval-default"
    assert "Gold answer: g" in judge_prompt(2, "q", "g", "p")


class SeededJudge:
    """A stand-in LLM whose verdict depends on the seed: CORRECT for seeds in `yes`."""

    def __init__(self, yes: set[int | None]) -> None:
        self.yes, self.seeds = yes, []

    def run(self, role, inputs, *, stage, seed=None, temperature=None):
        self.seeds.append((seed, temperature))
        label = "CORRECT" if seed in self.yes else "WRONG"
        return SimpleNamespace(output=SimpleNamespace(label=label, reason=f"seed {seed}"), error="")


def wb(provider: str = "openai", model: str = "judge-model") -> SimpleNamespace:
    llm = SimpleNamespace(provider=SimpleNamespace(name=provider, model=model), is_offline=False)
    return SimpleNamespace(llm=llm, provider_label=f"{provider} endpoint")


Q = Question(id="c:q0", conv_id="c", text="What?", answer="red", evidence=[], category=1)


def test_k_judge_runs_use_seeds_and_a_majority():
    judge, info = make_judge(wb(), 3)
    assert (info["runs"], info["seeds"], info["model"], info["kind"]) == (3, [1, 2, 3], "judge-model", "llm")
    assert "3 runs" in info["label"] and "locomo-mem0" in info["prompt"]
    llm = SeededJudge({1, 3})
    v = judge(llm, Q, "red")
    assert [s for s, _ in llm.seeds] == [1, 2, 3] and all(t == 0.0 for _, t in llm.seeds)
    assert v["runs"] == [True, False, True] and v["correct"] is True and v["prompt"] == "locomo-mem0"
    one, info1 = make_judge(wb(), True)
    llm1 = SeededJudge({None})
    assert one(llm1, Q, "red")["runs"] == [True] and llm1.seeds == [(None, None)]  # one run: no seed, as before
    assert info1["runs"] == 1 and make_judge(wb(), False)[1]["runs"] == 0
    assert (judge_runs(False), judge_runs(True), judge_runs(4)) == (0, 1, 4)


def test_judge_stats_mean_and_std_over_runs():
    rows = [{"judge": True, "judge_runs": [True, True, False]}, {"judge": False, "judge_runs": [False, True, False]}]
    st = judge_stats(rows)
    assert st["judge_runs"] == 3 and st["judge"] == pytest.approx(0.5)  # runs: 0.5, 1.0, 0.0
    assert st["judge_std"] == pytest.approx(0.5) and st["judge_majority"] == 0.5
    old = judge_stats([{"judge": True}, {"judge": False}])  # rows stored before judge_runs
    assert old == {"judge": 0.5, "judge_std": None, "judge_runs": 1}


def test_eval_results_record_judge_runs_metrics_and_csv(tmp_path):
    settings = Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing")
    res = run_eval(settings, "demo", systems=["naive_rag"], limit=4, judge=3, out=tmp_path / "r.json")
    j = res["judge"]
    assert (j["runs"], j["seeds"], j["kind"], j["model"]) == (3, [1, 2, 3], "lexical", "offline-engine")
    overall = res["systems"]["naive_rag"]["overall"]
    assert overall["judge_runs"] == 3 and overall["judge_std"] == 0.0  # the lexical judge is deterministic
    assert overall["judge_prompts"] == {"locomo-mem0": 4}  # which prompt judged how many answers
    for key in ("rouge_2", "meteor", "similarity", "f1", "bleu1"):
        assert overall[key] is not None and 0 <= overall[key] <= 1, key
    assert "hashing" in res["metrics"]["similarity"] and "without synonyms" in res["metrics"]["meteor"]
    with (tmp_path / "r.csv").open(encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert {"rouge_2", "meteor", "similarity", "judge_std"} <= set(header)
    saved = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert saved["judge"]["runs"] == 3 and saved["systems"]["naive_rag"]["mechanism"] == {}
    again = run_eval(settings, "demo", systems=["naive_rag"], limit=4, judge=True)
    assert again["run_id"] != res["run_id"]  # K is part of the run's fingerprint
