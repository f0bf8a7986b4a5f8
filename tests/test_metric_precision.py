"""Numbers through ``evaluate.load`` equal the scipy/sklearn references within 1e-9.

The scoring maths is checked against scipy/sklearn elsewhere; these tests go through the
whole evaluate path (features, the Arrow cache, the output format, ``_compute``), which is
where precision was once lost: ``datasets``' NumPy formatter turns every float column into
float32, whatever the declared feature type, so STS-B scores arrived with ~7 digits.
"""

from __future__ import annotations

import math

import evaluate
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, f1_score, r2_score

from nlue.registry.tasks import get_task
from nlue.scores import metric_path

TOLERANCE = 1e-9


def _scores(seed: int, n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Random 0-5 float64 similarity scores with every digit used, and noisy predictions of them."""
    rng = np.random.default_rng(seed)
    references = rng.uniform(0.0, 5.0, n)
    predictions = np.clip(references + rng.normal(0.0, 0.7, n), 0.0, 5.0) + rng.uniform(0, 1e-6, n)
    return predictions, references


def _close(actual: float, expected: float) -> None:
    assert type(actual) is float
    assert abs(actual - expected) <= TOLERANCE, f"{actual!r} vs {expected!r}: off by {abs(actual - expected):.3g}"


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("as_list", [False, True], ids=["numpy", "list"])
def test_stsb_through_evaluate_matches_scipy(seed: int, as_list: bool):
    predictions, references = _scores(seed)
    metric = evaluate.load(metric_path("nlue"), "stsb")
    inputs = (predictions.tolist(), references.tolist()) if as_list else (predictions, references)
    results = metric.compute(predictions=inputs[0], references=inputs[1])
    pearson = float(stats.pearsonr(predictions, references)[0])
    spearman = float(stats.spearmanr(predictions, references)[0])
    _close(results["pearson"], pearson)
    _close(results["spearman"], spearman)
    _close(results["pearson_spearman_mean"], (pearson + spearman) / 2)
    _close(results["r2"], float(r2_score(references, predictions)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_r_squared_through_evaluate_matches_sklearn(seed: int):
    predictions, references = _scores(seed)
    metric = evaluate.load(metric_path("r_squared"))
    _close(metric.compute(predictions=predictions, references=references)["r2"], r2_score(references, predictions))


def test_r_squared_near_perfect_fit_keeps_every_digit():
    # Errors of ~1e-6 on scores near 5 are below float32's resolution there (~4.8e-7 steps), so a
    # float32 round trip changes R²'s distance from 1 by a large fraction.
    rng = np.random.default_rng(7)
    references = rng.uniform(0.0, 5.0, 200)
    predictions = references + rng.normal(0.0, 1e-6, 200)
    metric = evaluate.load(metric_path("r_squared"))
    result = metric.compute(predictions=predictions, references=references)["r2"]
    expected = float(r2_score(references, predictions))
    assert abs((1 - result) - (1 - expected)) <= 1e-9 * (1 - expected) + 1e-15


def test_batches_added_in_steps_keep_float64():
    predictions, references = _scores(3)
    metric = evaluate.load(metric_path("nlue"), "stsb")
    for start in range(0, len(predictions), 64):
        metric.add_batch(predictions=predictions[start : start + 64], references=references[start : start + 64])
    _close(metric.compute()["pearson"], float(stats.pearsonr(predictions, references)[0]))


@pytest.mark.parametrize("task", ["mnli", "qnli"])
def test_classification_through_evaluate_matches_sklearn(task: str):
    rng = np.random.default_rng(11)
    labels = list(range(get_task(task).num_labels))
    references = rng.integers(0, len(labels), 500)
    predictions = np.where(rng.random(500) < 0.6, references, rng.integers(0, len(labels), 500))
    results = evaluate.load(metric_path("nlue"), task).compute(predictions=predictions, references=references)
    _close(results["accuracy"], float(accuracy_score(references, predictions)))
    _close(results["macro_f1"], float(f1_score(references, predictions, labels=labels, average="macro")))

    macro = evaluate.load(metric_path("macro_f1"), task).compute(predictions=predictions, references=references)
    _close(macro["macro_f1"], float(f1_score(references, predictions, labels=labels, average="macro")))


def test_macro_f1_without_config_matches_sklearn():
    rng = np.random.default_rng(12)
    references = rng.integers(0, 5, 400)
    predictions = np.where(rng.random(400) < 0.5, references, rng.integers(0, 5, 400))
    result = evaluate.load(metric_path("macro_f1")).compute(predictions=predictions, references=references)
    _close(result["macro_f1"], float(f1_score(references, predictions, average="macro")))


def _gmet_by_formula(correct: list[int], categories: list[str]) -> dict[str, float]:
    """Appendix F.2 of the NLUE paper, written out plainly: A, A_k, sigma (population), E, C."""
    accuracy = sum(correct) / len(correct)
    per_category = {}
    for category in sorted(set(categories)):
        marks = [c for c, k in zip(correct, categories, strict=True) if k == category]
        per_category[category] = sum(marks) / len(marks)
    mean = sum(per_category.values()) / len(per_category)
    sigma = math.sqrt(sum((a - mean) ** 2 for a in per_category.values()) / len(per_category))
    return {"accuracy": accuracy, "sigma": sigma, "equality": math.exp(-sigma), "combined": accuracy * math.exp(-sigma)}


@pytest.mark.parametrize(("module", "config"), [("gmet_combined", None), ("nlue", "gmet")])
def test_gmet_through_evaluate_matches_appendix_formulas(module: str, config: str | None):
    rng = np.random.default_rng(5)
    n = 333
    # Uneven category sizes and accuracies, so that sigma is far from 0.
    categories = [f"cat{int(k)}" for k in rng.integers(0, 17, n)]
    skill = {f"cat{k}": rng.uniform(0.1, 0.9) for k in range(17)}
    correct = [int(rng.random() < skill[k]) for k in categories]
    predictions = ["शब्द"] * n
    expected = _gmet_by_formula(correct, categories)
    metric = evaluate.load(metric_path(module), config)

    judged = metric.compute(predictions=predictions, references=correct, categories=categories)
    answers = [["शब्द"] if c else ["अर्को"] for c in correct]
    matched = metric.compute(predictions=predictions, references=answers, categories=categories)
    for results in (judged, matched):
        for key, value in expected.items():
            _close(results[key], value)


@pytest.mark.parametrize(("module", "config"), [("nlue", "stsb"), ("r_squared", None)])
def test_compute_receives_the_scores_bit_for_bit(module: str, config: str | None):
    """The root of the old drift: what ``_compute`` gets must be the float64 values passed in."""
    predictions, references = _scores(4, n=50)
    metric = evaluate.load(metric_path(module), config)
    received: dict[str, np.ndarray] = {}
    compute = metric._compute

    def spy(predictions, references, **kwargs):
        received["predictions"] = np.asarray(predictions)
        received["references"] = np.asarray(references)
        return compute(predictions, references, **kwargs)

    metric._compute = spy
    metric.compute(predictions=predictions, references=references)
    assert received["predictions"].dtype == np.float64
    assert np.array_equal(received["predictions"], predictions)
    assert np.array_equal(received["references"], references)
