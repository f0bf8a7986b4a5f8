"""Accuracy and macro-F1 for the NLUE classification tasks.

Macro-F1 follows scikit-learn's ``f1_score(average="macro", labels=..., zero_division=0)``:
the mean of the per-class F1 over *every* class the task defines, so a class that a
batch never mentions still counts (with F1 = 0), instead of quietly shrinking the average.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.scoring.problem import BatchedStatistic, ScoringProblem
from nlue.scoring.validation import check_not_empty, check_same_length, label_codes

CLASSIFICATION_METRICS: tuple[str, ...] = ("accuracy", "macro_f1")


def accuracy_rows(predictions: np.ndarray, references: np.ndarray) -> np.ndarray:
    """Row-wise share of items whose predicted code equals the reference code."""
    return np.mean(predictions == references, axis=-1)


def macro_f1_rows(predictions: np.ndarray, references: np.ndarray, num_labels: int) -> np.ndarray:
    """Row-wise macro-F1 over label codes ``0..num_labels-1``.

    One ``bincount`` over (row, reference, prediction) triples builds every row's
    confusion matrix at once, which is what makes a 1,000-row bootstrap cheap.
    """
    predictions, references = np.broadcast_arrays(predictions, references)
    n_rows = predictions.shape[0]
    row_ids = np.arange(n_rows, dtype=np.int64)[:, None]
    cells = (row_ids * num_labels + references) * num_labels + predictions
    confusion = np.bincount(cells.ravel(), minlength=n_rows * num_labels * num_labels)
    confusion = confusion.reshape(n_rows, num_labels, num_labels)  # [row, reference, prediction]
    true_positives = np.diagonal(confusion, axis1=1, axis2=2)
    # F1 = 2TP / (2TP + FP + FN) = 2TP / (predicted count + reference count).
    denominator = confusion.sum(axis=1) + confusion.sum(axis=2)
    per_class = np.divide(
        2.0 * true_positives, denominator, out=np.zeros(true_positives.shape), where=denominator > 0
    )  # zero_division=0: a class absent from both sides scores 0
    return per_class.mean(axis=1)


def classification_statistic(num_labels: int) -> BatchedStatistic:
    """The batched statistic for one classification problem with ``num_labels`` classes."""

    def statistic(outputs: np.ndarray, references: np.ndarray | None) -> dict[str, np.ndarray]:
        assert references is not None  # classification problems always carry references
        return {
            "accuracy": accuracy_rows(outputs, references),
            "macro_f1": macro_f1_rows(outputs, references, num_labels),
        }

    return statistic


def classification_problem(
    predictions: Any, references: Any, labels: Sequence[int], owner: str = "this metric"
) -> ScoringProblem:
    """Validate label ids against ``labels`` and package them for scoring.

    ``owner`` names where the labels come from (e.g. "task 'mnli'") in error messages.
    """
    check_same_length(predictions=predictions, references=references)
    check_not_empty(len(predictions))
    if len(labels) == 0:
        raise NlueError(f"{owner} defines no labels to score against")
    if len(set(labels)) != len(labels):
        raise NlueError(f"labels of {owner} repeat an id: {list(labels)}; give each class once")
    return ScoringProblem(
        outputs=label_codes(predictions, labels, "predictions", owner),
        references=label_codes(references, labels, "references", owner),
        statistic=classification_statistic(len(labels)),
        metrics=CLASSIFICATION_METRICS,
    )


def accuracy(predictions: Any, references: Any, labels: Sequence[int]) -> float:
    """Share of items predicted correctly."""
    return classification_problem(predictions, references, labels).point_estimates()["accuracy"]


def macro_f1(predictions: Any, references: Any, labels: Sequence[int]) -> float:
    """Unweighted mean of per-class F1 over all ``labels`` (absent classes count as 0)."""
    return classification_problem(predictions, references, labels).point_estimates()["macro_f1"]


def observed_labels(predictions: Any, references: Any) -> list[int]:
    """The sorted label ids seen in either list: scikit-learn's default when no label set is given."""
    seen = np.concatenate([np.asarray(predictions).ravel(), np.asarray(references).ravel()])
    if seen.dtype.kind not in "biuf":
        raise NlueError(f"predictions and references must be integer label ids, got values of type {seen.dtype}")
    # Ids that are not whole finite numbers are left out here; label_codes then reports them properly.
    return [int(v) for v in np.unique(seen) if np.isfinite(v) and v == np.round(v)]
