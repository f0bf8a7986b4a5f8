"""Bootstrap confidence intervals: reproducible, correctly sized, fast, and honest in coverage."""

from __future__ import annotations

import time

import numpy as np
import pytest

from nlue.scores import score_task
from nlue.scoring import bootstrap_intervals, classification_problem
from nlue.scoring.bootstrap import bootstrap_distribution, resample_indices


def _mnli_like(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    references = rng.integers(0, 3, n)
    predictions = np.where(rng.random(n) < 0.7, references, rng.integers(0, 3, n))
    return predictions, references


def test_same_seed_same_interval_and_other_seed_differs():
    predictions, references = _mnli_like(500)
    first = score_task("mnli", predictions, references, bootstrap_resamples=300, seed=7)
    again = score_task("mnli", predictions, references, bootstrap_resamples=300, seed=7)
    other = score_task("mnli", predictions, references, bootstrap_resamples=300, seed=8)
    assert first == again
    assert first != other


def test_interval_keys_follow_each_metric():
    predictions, references = _mnli_like(100)
    scores = score_task("mnli", predictions, references, bootstrap_resamples=50)
    assert list(scores) == [
        "accuracy",
        "accuracy_ci_low",
        "accuracy_ci_high",
        "macro_f1",
        "macro_f1_ci_low",
        "macro_f1_ci_high",
    ]
    assert all(type(v) is float for v in scores.values())
    assert scores["macro_f1_ci_low"] <= scores["macro_f1"] <= scores["macro_f1_ci_high"]


def test_wider_level_gives_wider_interval():
    predictions, references = _mnli_like(300)
    narrow = score_task("mnli", predictions, references, bootstrap_resamples=500, confidence_level=0.5)
    wide = score_task("mnli", predictions, references, bootstrap_resamples=500, confidence_level=0.99)
    assert wide["accuracy_ci_low"] < narrow["accuracy_ci_low"] < narrow["accuracy_ci_high"] < wide["accuracy_ci_high"]


def test_block_size_does_not_change_the_result(monkeypatch):
    """Resamples are drawn in memory-sized blocks from one generator, consumed in order, so the
    numbers do not depend on the block size (and hence not on the machine's memory setting)."""
    import nlue.scoring.bootstrap as bootstrap

    predictions, references = _mnli_like(200)
    problem = classification_problem(predictions, references, [0, 1, 2])
    whole = bootstrap_distribution(problem, 64, seed=3)
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 200 * 5)  # 5 resamples per block
    blocked = bootstrap_distribution(problem, 64, seed=3)
    assert np.array_equal(whole["macro_f1"], blocked["macro_f1"])


def test_stratified_resamples_keep_group_sizes():
    rng = np.random.default_rng(0)
    sizes = np.array([3, 1, 5])
    rows = resample_indices(rng, 9, 200, sizes)
    assert rows.shape == (200, 9)
    assert np.all((rows[:, :3] >= 0) & (rows[:, :3] < 3))
    assert np.all(rows[:, 3] == 3)
    assert np.all((rows[:, 4:] >= 4) & (rows[:, 4:] < 9))


def test_coverage_of_a_known_bernoulli_rate():
    """200 samples of a known rate; the 95% percentile interval should cover it about 95% of the time."""
    true_rate, n_items, repetitions = 0.3, 200, 200
    rng = np.random.default_rng(2024)
    outcomes = (rng.random((repetitions, n_items)) < true_rate).astype(np.int64)
    covered = 0
    for repetition, sample in enumerate(outcomes):
        # accuracy of predictions `sample` against references that are all 1 is the sample's rate
        problem = classification_problem(sample, np.ones(n_items, dtype=np.int64), [0, 1])
        low, high = bootstrap_intervals(problem, resamples=500, confidence_level=0.95, seed=repetition)["accuracy"]
        covered += low <= true_rate <= high
    assert 0.90 <= covered / repetitions <= 0.99


def test_thousand_resamples_of_ten_thousand_items_is_fast():
    predictions, references = _mnli_like(10_000)
    started = time.perf_counter()
    score_task("mnli", predictions, references, bootstrap_resamples=1_000)
    elapsed = time.perf_counter() - started
    # About 0.3 s on the 2-core CI machine; the bound only catches a fall back to Python loops.
    assert elapsed < 3.0, f"bootstrap took {elapsed:.2f} s"


def test_undefined_resamples_are_left_out_of_the_interval():
    # Two distinct values only: many resamples are constant, where Pearson is undefined.
    scores = score_task("stsb", [1.0, 2.0, 1.0], [1.0, 2.0, 2.0], bootstrap_resamples=200)
    assert not np.isnan(scores["pearson_ci_low"]) and not np.isnan(scores["pearson_ci_high"])


@pytest.mark.parametrize(("resamples", "level", "match"), [(0, 0.95, "positive whole number"), (10, 1.5, "between 0")])
def test_bad_settings_are_refused(resamples, level, match):
    predictions, references = _mnli_like(20)
    with pytest.raises(ValueError, match=match):
        score_task("mnli", predictions, references, bootstrap_resamples=resamples, confidence_level=level)
