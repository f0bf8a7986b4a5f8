"""The GMET scores of the NLUE paper (appendix F.2).

With per-item correctness s_i in {0, 1} and a category for every item:

* accuracy   A   = mean of s_i over all items (not the mean of the category accuracies);
* per-category accuracy A_k, one per category present;
* sigma      σ   = population standard deviation of the A_k (0 with one category);
* equality   E   = exp(-σ), hence E = 1 when there is a single category;
* combined   C   = A · E, which rewards a model whose accuracy is even across categories.

Correctness comes either from predicted words checked against each item's acceptable
answers (both sides passed through :func:`nlue.text.normalize.normalize_answer`, the rule the
dataset builder also uses), or directly from 0/1 human judgments, as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.scoring.problem import BatchedStatistic, ScoringProblem
from nlue.scoring.validation import as_vector, check_not_empty, check_same_length
from nlue.text.normalize import normalize_answer

GMET_METRICS: tuple[str, ...] = ("accuracy", "equality", "combined", "sigma")


def judge_predictions(predictions: Sequence[str], answers: Sequence[Sequence[str]]) -> np.ndarray:
    """1 where the normalised prediction equals one of the item's normalised answers, else 0."""
    check_same_length(predictions=predictions, answers=answers)
    correct = np.zeros(len(predictions), dtype=np.int64)
    for position, (prediction, acceptable) in enumerate(zip(predictions, answers, strict=True)):
        if isinstance(acceptable, str) or not isinstance(acceptable, Sequence | np.ndarray):
            raise NlueError(f"answers for item {position} must be a list of acceptable words, got {acceptable!r}")
        if len(acceptable) == 0:
            raise NlueError(f"answers for item {position} are an empty list; every item needs at least one answer")
        if not isinstance(prediction, str):
            raise NlueError(f"predictions must be words (strings); item {position} holds {prediction!r}")
        wanted = {normalize_answer(str(word)) for word in acceptable}
        correct[position] = int(normalize_answer(prediction) in wanted)
    return correct


def judgment_array(judgments: Any) -> np.ndarray:
    """Human judgments as a 0/1 integer array; anything else is refused."""
    array = as_vector(judgments, "judgments")
    if array.dtype == bool:
        return array.astype(np.int64)
    if array.dtype.kind not in "iuf" or not np.all(np.isin(array, (0, 1))):
        values = array.tolist()
        bad = next((i for i, v in enumerate(values) if v not in (0, 1)), 0)
        raise NlueError(f"judgments must be 0 (wrong) or 1 (right); item {bad} holds {values[bad]!r}")
    return array.astype(np.int64)


def gmet_statistic(group_sizes: np.ndarray) -> BatchedStatistic:
    """The batched GMET statistic for items stored in contiguous category blocks of ``group_sizes``."""
    starts = np.concatenate(([0], np.cumsum(group_sizes)[:-1]))

    def statistic(outputs: np.ndarray, references: np.ndarray | None) -> dict[str, np.ndarray]:
        accuracy = outputs.mean(axis=1)
        per_category = np.add.reduceat(outputs, starts, axis=1) / group_sizes
        sigma = per_category.std(axis=1)  # ddof=0: the population standard deviation of appendix F.2
        equality = np.exp(-sigma)
        return {"accuracy": accuracy, "equality": equality, "combined": accuracy * equality, "sigma": sigma}

    return statistic


def gmet_problem(categories: Any, correct: np.ndarray) -> tuple[ScoringProblem, tuple[str, ...]]:
    """Group 0/1 correctness by category; return the problem and the category names in block order."""
    if categories is None:
        raise NlueError("missing categories: GMET needs the category of every item to compute the combined score")
    check_same_length(items=correct, categories=categories)
    check_not_empty(len(correct), "the GMET inputs")
    names = [category for category in categories]
    for position, category in enumerate(names):
        if not isinstance(category, str) or not category.strip():
            raise NlueError(f"missing categories: item {position} has category {category!r}; give a category name")
    names_sorted, codes, sizes = np.unique(np.asarray(names, dtype=object), return_inverse=True, return_counts=True)
    # Sorting items into one block per category lets reduceat compute all A_k in a single pass.
    order = np.argsort(codes, kind="stable")
    problem = ScoringProblem(
        outputs=np.asarray(correct, dtype=np.float64)[order],
        references=None,
        statistic=gmet_statistic(sizes),
        metrics=GMET_METRICS,
        group_sizes=sizes,
        # Within-category resampling inflates sigma (see nlue.scoring.bootstrap); every metric lies in [0, 1].
        interval_method="bias_shifted",
        value_range=(0.0, 1.0),
    )
    return problem, tuple(str(name) for name in names_sorted)


def category_accuracy(problem: ScoringProblem, names: Sequence[str]) -> dict[str, float]:
    """A_k for every category, as plain floats keyed by category name."""
    assert problem.group_sizes is not None  # built by gmet_problem
    starts = np.concatenate(([0], np.cumsum(problem.group_sizes)[:-1]))
    values = np.add.reduceat(problem.outputs, starts) / problem.group_sizes
    return {name: float(value) for name, value in zip(names, values, strict=True)}


def gmet_scores(
    categories: Sequence[str],
    *,
    predictions: Sequence[str] | None = None,
    answers: Sequence[Sequence[str]] | None = None,
    judgments: Any = None,
) -> dict[str, Any]:
    """Accuracy, equality, combined score, sigma and per-category accuracy of one model on GMET.

    Give either ``predictions`` with ``answers`` (compared after normalisation) or
    ``judgments`` (1 = a person accepted the model's word).
    """
    problem, names = gmet_problem(categories, gmet_correctness(predictions, answers, judgments))
    return {**problem.point_estimates(), "category_accuracy": category_accuracy(problem, names)}


def gmet_correctness(
    predictions: Sequence[str] | None, answers: Sequence[Sequence[str]] | None, judgments: Any
) -> np.ndarray:
    """Per-item 0/1 correctness from exactly one of the two accepted input forms."""
    if judgments is not None:
        if answers is not None:
            raise NlueError("give either answers or judgments for GMET, not both")
        if predictions is not None:
            check_same_length(predictions=predictions, judgments=judgments)
        return judgment_array(judgments)
    if predictions is None or answers is None:
        raise NlueError("GMET needs predictions with answers, or 0/1 judgments")
    return judge_predictions(predictions, answers)
