"""Intervals and McNemar's test (memcore.eval.stats), against hand-computed cases and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap

from memcore.eval.stats import SEED, interval, intervals, mcnemar, paired_delta, separated


def test_two_questions_hand_computed() -> None:
    # resampling [0, 1]: the mean is 0 (p 1/4), 0.5 (1/2) or 1 (1/4): the 2.5th and 97.5th percentiles are 0 and 1
    got = interval([0, 1])
    assert got == {"mean": 0.5, "lo": 0.0, "hi": 1.0, "n": 2}


def test_constant_scores_have_a_point_interval() -> None:
    assert interval([0.7] * 30) == {"mean": 0.7, "lo": 0.7, "hi": 0.7, "n": 30}


def test_binary_scores_match_the_normal_approximation_and_scipy() -> None:
    values = [1.0] * 200 + [0.0] * 200  # p = 0.5, n = 400: 0.5 +- 1.96 * 0.025 = [0.451, 0.549]
    got = interval(values)
    assert got["lo"] == pytest.approx(0.451, abs=0.006) and got["hi"] == pytest.approx(0.549, abs=0.006)
    ref = bootstrap((np.array(values),), np.mean, method="percentile", rng=np.random.default_rng(SEED))
    assert got["lo"] == pytest.approx(ref.confidence_interval.low, abs=0.006)
    assert got["hi"] == pytest.approx(ref.confidence_interval.high, abs=0.006)


def test_missing_values_and_small_groups() -> None:
    got = intervals({"a": [1, None, 0, 1], "b": [None, None, 1, None], "c": [None] * 4})
    assert got["a"]["n"] == 3 and 0.0 <= got["a"]["lo"] <= got["a"]["hi"] <= 1.0
    assert got["b"] == {"lo": None, "hi": None, "n": 1}  # one question: no interval
    assert got["c"] == {"lo": None, "hi": None, "n": 0}


def test_fixed_seed_reproducible() -> None:
    values = list(np.random.default_rng(1).random(50))
    assert interval(values) == interval(values)
    assert interval(values, seed=SEED + 1) != interval(values)


def test_paired_delta() -> None:
    a = [0, 1, 0, 1, 1, 0, 1, 0] * 10
    assert paired_delta(a, a) == {"delta": 0.0, "lo": 0.0, "hi": 0.0, "n": 80, "separated": False}
    b = [1] * 80  # b right everywhere: +0.5 on average; every resampled difference is positive
    got = paired_delta(a, b)
    assert got["delta"] == 0.5 and got["lo"] > 0 and got["separated"]
    # pairs with a missing side are left out: n counts the complete pairs
    assert paired_delta([1, None, 0], [1, 1, None])["n"] == 1


def test_separated() -> None:
    assert separated(0.01, 0.2) and separated(-0.3, -0.01)
    assert not separated(-0.01, 0.2) and not separated(None, 0.2)


def test_mcnemar_exact_hand_computed() -> None:
    # 8 right->wrong, 2 wrong->right: p = 2 * P(X <= 2 | 10, 1/2) = 2 * (1 + 10 + 45) / 1024 = 0.109375
    a = [True] * 8 + [False] * 2 + [True] * 5 + [False] * 3
    b = [False] * 8 + [True] * 2 + [True] * 5 + [False] * 3
    got = mcnemar(a, b)
    assert got == {"n": 18, "right_to_wrong": 8, "wrong_to_right": 2, "p_value": 0.109375}
    # 6 flips all one way: p = 2 / 2**6 = 0.03125
    assert mcnemar([True] * 6, [False] * 6)["p_value"] == 0.03125
    assert mcnemar([True, False], [True, False])["p_value"] == 1.0  # nothing flipped
    assert mcnemar([True, None], [None, False])["n"] == 0
