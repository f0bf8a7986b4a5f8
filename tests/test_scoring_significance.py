"""Paired significance tests between two systems on the same items."""

from __future__ import annotations

import numpy as np
import pytest

from nlue.scores import compare_systems
from nlue.scoring import gmet_problem, paired_test


def _two_systems(n: int, accuracy_a: float, accuracy_b: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    references = rng.integers(0, 3, n)
    noise = rng.integers(0, 3, n)
    coin = rng.random(n)
    system_a = np.where(coin < accuracy_a, references, noise)
    system_b = np.where(coin < accuracy_b, references, noise)
    return system_a, system_b, references


@pytest.mark.parametrize("method", ["permutation", "bootstrap"])
def test_identical_systems(method):
    system, _, references = _two_systems(400, 0.7, 0.7)
    result = compare_systems("mnli", system, system.copy(), references, method=method, resamples=2_000)
    assert result.difference == 0.0
    assert result.p_value == pytest.approx(1.0)
    assert result.metric == "macro_f1"  # the task's primary metric by default


@pytest.mark.parametrize("method", ["permutation", "bootstrap"])
def test_clearly_better_system(method):
    better, worse, references = _two_systems(1_000, 0.85, 0.6)
    result = compare_systems("mnli", better, worse, references, method=method, resamples=2_000)
    assert result.difference > 0.1
    assert result.p_value < 0.01
    if method == "bootstrap":
        assert 0 < result.ci_low < result.difference < result.ci_high


def test_small_difference_is_not_significant():
    rng = np.random.default_rng(5)
    references = rng.integers(0, 2, 200)
    system_a = np.where(rng.random(200) < 0.75, references, 1 - references)
    system_b = system_a.copy()
    system_b[:2] = 1 - system_b[:2]  # two items flipped
    result = compare_systems("qnli", system_a, system_b, references, metric="accuracy", resamples=2_000)
    assert abs(result.difference) < 0.011
    assert result.p_value > 0.2


def test_regression_and_gmet_comparisons():
    rng = np.random.default_rng(1)
    gold = rng.uniform(0, 5, 300)
    good, poor = gold + rng.normal(0, 0.5, 300), gold + rng.normal(0, 2.5, 300)
    result = compare_systems("stsb", good, poor, gold, resamples=1_000)
    assert result.metric == "pearson_spearman_mean" and result.p_value < 0.01

    categories = ["Family"] * 50 + ["House"] * 50
    strong = gmet_problem(categories, (rng.random(100) < 0.8).astype(int))[0]
    weak = gmet_problem(categories, (rng.random(100) < 0.3).astype(int))[0]
    assert paired_test(strong, weak, "combined", resamples=1_000).p_value < 0.01


def test_same_seed_same_p_value():
    a, b, references = _two_systems(300, 0.7, 0.65)
    first = compare_systems("mnli", a, b, references, resamples=500, seed=4)
    assert first == compare_systems("mnli", a, b, references, resamples=500, seed=4)
    assert set(first.as_dict()) >= {"metric", "difference", "p_value", "method", "resamples"}


def test_refuses_unpaired_inputs():
    a, b, references = _two_systems(50, 0.7, 0.6)
    problem_a = gmet_problem(["Family"] * 50, (a == references).astype(int))[0]
    problem_b = gmet_problem(["Family"] * 25 + ["House"] * 25, (b == references).astype(int))[0]
    with pytest.raises(ValueError, match="different references or categories"):
        paired_test(problem_a, problem_b, "combined")
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        compare_systems("mnli", a, b, references, metric="f1")
    with pytest.raises(ValueError, match="unknown test method 'ttest'"):
        compare_systems("mnli", a, b, references, method="ttest")
    with pytest.raises(ValueError, match="lengths differ"):
        compare_systems("mnli", a, b[:40], references)


def test_bootstrap_p_value_agrees_with_its_interval_on_small_skewed_runs():
    """p < 0.05 exactly when the 95% interval leaves 0 out, as `nlue compare` prints both side by side.

    Macro-F1 on a dozen items has a skewed bootstrap distribution; a p-value from differences shifted
    onto the null once said "differ" (p = 0.044) beside an interval of [-0.023, +0.667].
    """
    disagreements = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(8, 20))
        references = rng.integers(0, 2, n)
        system_a = np.where(rng.random(n) < 0.8, references, 1 - references)
        system_b = np.where(rng.random(n) < 0.5, references, 1 - references)
        result = compare_systems("rte", system_a, system_b, references, method="bootstrap", resamples=999, seed=seed)
        excludes_zero = result.ci_low > 0 or result.ci_high < 0
        disagreements += (result.p_value < 0.05) != excludes_zero
    assert disagreements == 0
