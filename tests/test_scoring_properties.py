"""Property tests: our metrics agree with scikit-learn and SciPy to 1e-9 on random inputs."""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, r2_score

from nlue.registry.tasks import TASKS
from nlue.scores import score_macro_f1, score_task
from nlue.scoring.classification import accuracy, macro_f1
from nlue.scoring.regression import pearson, r_squared, spearman

TOLERANCE = 1e-9
CLASSIFICATION_TASKS = sorted(name for name, spec in TASKS.items() if spec.is_classification)


def close(ours: float, reference: float) -> bool:
    if math.isnan(reference):
        return math.isnan(ours)
    return math.isclose(ours, reference, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


@st.composite
def labelled_batch(draw):
    """A task's label count, then predictions and references that often leave a class out."""
    num_labels = draw(st.integers(2, 5))
    # Draw from a random subset of classes so batches regularly lack one or more classes.
    present = draw(st.lists(st.integers(0, num_labels - 1), min_size=1, max_size=num_labels, unique=True))
    n = draw(st.integers(1, 60))
    predictions = draw(st.lists(st.sampled_from(present), min_size=n, max_size=n))
    references = draw(st.lists(st.sampled_from(present), min_size=n, max_size=n))
    return num_labels, predictions, references


@settings(max_examples=200, deadline=None)
@given(labelled_batch())
def test_classification_matches_sklearn(batch):
    num_labels, predictions, references = batch
    labels = list(range(num_labels))
    expected_f1 = f1_score(references, predictions, average="macro", labels=labels, zero_division=0)
    assert close(macro_f1(predictions, references, labels), expected_f1)
    assert close(accuracy(predictions, references, labels), accuracy_score(references, predictions))
    assert close(score_macro_f1(predictions, references, labels=labels)["macro_f1"], expected_f1)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CLASSIFICATION_TASKS), st.data())
def test_registry_tasks_average_over_all_their_labels(task, data):
    num_labels = TASKS[task].num_labels
    n = data.draw(st.integers(1, 40))
    # Only class 0 appears: every other class of the task must still count.
    predictions = data.draw(st.lists(st.integers(0, num_labels - 1), min_size=n, max_size=n))
    references = [0] * n
    ours = score_task(task, predictions, references)
    expected = f1_score(references, predictions, average="macro", labels=list(range(num_labels)), zero_division=0)
    assert close(ours["macro_f1"], expected)
    assert type(ours["macro_f1"]) is float and type(ours["accuracy"]) is float


# Scores on STS-B's 0-5 scale. Quarter steps are exact in binary and produce many ties (and
# the occasional constant side); free floats exercise the general case.
_quarter_steps = st.integers(0, 20).map(lambda k: k / 4)
_free_scores = st.floats(0.0, 5.0, allow_nan=False, allow_infinity=False)


@st.composite
def scored_batch(draw):
    values = draw(st.sampled_from([_quarter_steps, _free_scores]))
    n = draw(st.integers(2, 60))
    predictions = draw(st.lists(values, min_size=n, max_size=n))
    references = draw(st.lists(values, min_size=n, max_size=n))
    return predictions, references


@settings(max_examples=200, deadline=None)
@given(scored_batch())
def test_regression_matches_scipy_and_sklearn(batch):
    predictions, references = batch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns on constant input; NaN is the expected answer there
        expected_pearson = float(pearsonr(predictions, references)[0])
        expected_spearman = float(spearmanr(predictions, references)[0])
    assert close(pearson(predictions, references), expected_pearson)
    assert close(spearman(predictions, references), expected_spearman)
    assert close(r_squared(predictions, references), float(r2_score(references, predictions)))


@settings(max_examples=200, deadline=None)
@given(scored_batch())
def test_stsb_primary_is_the_mean_of_the_correlations(batch):
    predictions, references = batch
    scores = score_task("stsb", predictions, references)
    expected = (scores["pearson"] + scores["spearman"]) / 2
    assert close(scores["pearson_spearman_mean"], expected)
    assert all(type(v) is float for v in scores.values())


def test_ties_use_average_ranks():
    predictions = [1.0, 1.0, 2.0, 3.0, 3.0, 3.0]
    references = [0.5, 1.5, 1.5, 2.0, 4.0, 4.0]
    assert close(spearman(predictions, references), float(spearmanr(predictions, references)[0]))


def test_correlation_of_a_constant_side_is_nan():
    assert math.isnan(pearson([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]))
    assert math.isnan(spearman([1.0, 2.0, 3.0], [4.0, 4.0, 4.0]))
    # R² follows scikit-learn here: constant references, imperfect fit -> 0.0; perfect fit -> 1.0.
    assert r_squared([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) == 0.0
    assert r_squared([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]) == 1.0


def test_rows_agree_with_one_at_a_time():
    """The batched statistic on many rows equals the scalar metric of each row."""
    rng = np.random.default_rng(3)
    from nlue.scoring.classification import macro_f1_rows
    from nlue.scoring.regression import pearson_rows, spearman_rows

    predictions = rng.integers(0, 3, size=(7, 25))
    references = rng.integers(0, 3, size=(7, 25))
    rows = macro_f1_rows(predictions, references, 3)
    for row, p, r in zip(rows, predictions, references, strict=True):
        assert close(float(row), f1_score(r, p, average="macro", labels=[0, 1, 2], zero_division=0))
    x, y = rng.random((5, 30)), rng.random((5, 30))
    for row, a, b in zip(pearson_rows(x, y), x, y, strict=True):
        assert close(float(row), float(pearsonr(a, b)[0]))
    for row, a, b in zip(spearman_rows(x, y), x, y, strict=True):
        assert close(float(row), float(spearmanr(a, b)[0]))
