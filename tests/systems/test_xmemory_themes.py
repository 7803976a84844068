"""xMemory's theme objective (SparsityScore, SemScore) and split / merge candidates."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.systems.xmemory import themes as xt


def _at(deg: float) -> np.ndarray:
    r = np.deg2rad(deg)
    return np.array([np.cos(r), np.sin(r)])


def _cluster(rng: np.random.Generator, axis: int, n: int, noise: float, dim: int = 8) -> np.ndarray:
    c = np.zeros(dim)
    c[axis] = 1.0
    X = c + noise * rng.standard_normal((n, dim))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_sparsity_and_sem_score_on_a_hand_computed_partition() -> None:
    # Five 2-D unit vectors at angles -30, 30 | 60 | 90 | 180 degrees, four themes:
    #   A = {-30, 30}: centroid at 0 deg, cohesion = cos 30 = 0.866025; B = {60}, C = {90}, D = {180}: cohesion 1.
    # SparsityScore = N^2 / (K * sum n_k^2) = 25 / (4 * (4 + 1 + 1 + 1)) = 25 / 28 = 0.892857.
    # Nearest-centroid similarities s_k: A (0) -> B (60): cos 60 = 0.5; B (60) -> C (90): cos 30 = 0.866025;
    #   C (90) -> B: 0.866025; D (180) -> C (90): cos 90 = 0.
    # m = median(0.5, 0.866025, 0.866025, 0) = (0.5 + 0.866025) / 2 = 0.683013;
    # |s - m| = 0.183013, 0.183013, 0.183013, 0.683013 -> MAD = 0.183013; sigma = 0.183013 + eps (1e-3) = 0.184013.
    # g(A) = g(B) = g(C) = exp(-0.183013^2 / (2 * 0.184013^2)) = exp(-0.494577) = 0.609827;
    # g(D) = exp(-0.683013^2 / (2 * 0.184013^2)) = exp(-6.888604) = 0.001019.
    # SemScore = (0.866025 * 0.609827 + 0.609827 + 0.609827 + 1 * 0.001019) / 4 = 1.748800 / 4 = 0.437200.
    # f = 0.892857 + 0.437200 = 1.330057.
    X = np.stack([_at(-30), _at(30), _at(60), _at(90), _at(180)])
    parts = [np.array([0, 1]), np.array([2]), np.array([3]), np.array([4])]
    assert xt.sparsity_score([2, 1, 1, 1]) == pytest.approx(25 / 28)
    coh, s, g = xt.sem_terms(X, parts, eps=1e-3)
    assert coh == pytest.approx([0.866025, 1, 1, 1], abs=1e-6)
    assert s == pytest.approx([0.5, 0.866025, 0.866025, 0.0], abs=1e-6)
    assert g == pytest.approx([0.609827, 0.609827, 0.609827, 0.001019], abs=1e-6)
    assert xt.sem_score(X, parts, eps=1e-3) == pytest.approx(0.437200, abs=1e-5)
    assert xt.objective(X, parts, eps=1e-3) == pytest.approx(1.330057, abs=1e-5)


def test_sparsity_rewards_balanced_themes() -> None:
    assert xt.sparsity_score([4, 4, 4]) == pytest.approx(1.0)
    assert xt.sparsity_score([10, 1, 1]) < xt.sparsity_score([4, 4, 4])
    assert xt.sparsity_score([]) == 0.0


def test_single_theme_has_no_neighbour_penalty() -> None:
    X = np.stack([_at(0), _at(60)])
    assert xt.sem_score(X, [np.array([0, 1])]) == pytest.approx(np.cos(np.deg2rad(30)))


def test_split_trigger_by_size_and_by_incoherence() -> None:
    rng = np.random.default_rng(0)
    assert "13 > 12" in xt.split_trigger(_cluster(rng, 0, 13, 0.05))
    assert xt.split_trigger(_cluster(rng, 0, 9, 0.05)) == ""  # coherent, <= 12
    mixed = np.concatenate([_cluster(rng, 0, 5, 0.05), _cluster(rng, 1, 4, 0.05)])
    assert "mean pairwise cos" in xt.split_trigger(mixed)
    assert xt.split_trigger(mixed[:7]) == ""  # fewer than 8 members: never split for coherence


def test_split_candidates_are_components_and_projection_chunks() -> None:
    rng = np.random.default_rng(0)
    X = np.concatenate([_cluster(rng, 0, 7, 0.1), _cluster(rng, 1, 6, 0.1)])
    cands = dict(xt.candidate_splits(X, edge_cos=0.66, max_size=12))
    assert sorted(len(p) for p in cands["components cos>=0.66"]) == [6, 7]
    assert all(len(p) <= 12 for k in ("projection k=2", "projection k=3") for p in cands[k])
    for parts in cands.values():  # every candidate is a partition of the theme
        assert sorted(np.concatenate(parts).tolist()) == list(range(13))


def test_a_split_that_raises_f_is_taken() -> None:
    rng = np.random.default_rng(0)
    mixed = np.concatenate([_cluster(rng, 0, 7, 0.1), _cluster(rng, 1, 6, 0.1)])  # two topics in one theme
    local = xt.Local.build(["t", "n1", "n2"], [mixed, _cluster(rng, 2, 5, 0.1), _cluster(rng, 3, 5, 0.1)])
    cands = xt.candidate_splits(mixed)
    f0, recs, best = xt.best_split(local, 0, cands)
    assert best is not None and recs[best]["f"] > f0
    assert recs[best]["f"] == max(r["f"] for r in recs)
    assert sorted(recs[best]["sizes"]) == [6, 7]


def test_a_split_that_lowers_f_is_not_taken() -> None:
    rng = np.random.default_rng(0)
    tight = _cluster(rng, 0, 8, 0.05)  # one topic: splitting only fragments it
    local = xt.Local.build(["t", "n1", "n2"], [tight, _cluster(rng, 2, 8, 0.05), _cluster(rng, 3, 8, 0.05)])
    cands = xt.candidate_splits(tight)
    f0, recs, best = xt.best_split(local, 0, cands)
    assert best is None
    assert recs and all(r["f"] < f0 for r in recs)


def test_a_theme_above_the_size_cap_splits_even_when_f_falls() -> None:
    rng = np.random.default_rng(0)
    tight = _cluster(rng, 0, 13, 0.05)  # one topic, 13 members: over the cap of 12
    local = xt.Local.build(["t", "n1", "n2"], [tight, _cluster(rng, 2, 8, 0.05), _cluster(rng, 3, 8, 0.05)])
    cands = xt.candidate_splits(tight)
    f0, recs, best = xt.best_split(local, 0, cands)
    assert best is None and all(r["f"] < f0 for r in recs)  # no candidate raises f ...
    _, recs, forced = xt.best_split(local, 0, cands, force=True)
    assert forced is not None and recs[forced]["f"] == max(r["f"] for r in recs)  # ... the best one is taken
    assert all(n <= 12 for n in recs[forced]["sizes"])


def test_merge_respects_the_size_cap_and_similarity() -> None:
    M = np.stack([_at(0), _at(10), _at(80), _at(85), _at(170)])
    sizes = [6, 6, 7, 6, 1]
    pairs = xt.merge_pairs(M, sizes, merge_cos=0.78, max_size=12)
    got = {(i, j) for i, j, _ in pairs}
    assert (0, 1) in got  # cos 10 deg = 0.98, 6 + 6 = 12 <= 12
    assert (2, 3) not in got  # cos 5 deg but 7 + 6 = 13 > 12
    assert (1, 2) not in got  # cos 70 deg = 0.34 < 0.78
    assert all(sizes[i] + sizes[j] <= 12 for i, j, _ in pairs)
    assert xt.merge_pairs(M, sizes, only={4}) == []  # restricted to pairs touching theme 4


def test_merging_near_duplicate_themes_raises_f() -> None:
    rng = np.random.default_rng(1)
    local = xt.Local.build(["a", "b", "c", "d"], [_cluster(rng, 0, 3, 0.05), _cluster(rng, 0, 3, 0.05),
                                                  _cluster(rng, 2, 6, 0.05), _cluster(rng, 3, 6, 0.05)])
    assert local.f_merge(0, 1) > local.f()


def test_greedy_merges_take_largest_positive_gain_each_theme_once() -> None:
    chosen = xt.greedy_merges([(0, 1, 0.05), (1, 2, 0.2), (3, 4, -0.1), (0, 3, 0.01)])
    assert chosen == [(1, 2, 0.2), (0, 3, 0.01)]
