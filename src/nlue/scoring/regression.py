"""Pearson, Spearman and R² for STS-B-style similarity scores.

The numbers agree with ``scipy.stats.pearsonr``, ``scipy.stats.spearmanr`` (average
ranks for ties) and ``sklearn.metrics.r2_score`` on raw scores: a correlation with a
constant side is undefined and comes out as NaN, as it does in SciPy, and R² uses
scikit-learn's finite convention when the references do not vary.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.scoring.problem import BatchedStatistic, ScoringProblem
from nlue.scoring.validation import check_same_length, finite_scores

logger = logging.getLogger(__name__)

REGRESSION_METRICS: tuple[str, ...] = ("pearson", "spearman", "pearson_spearman_mean", "r2")


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation; NaN for a row where either side is constant.

    Mirrors SciPy's recipe (centre, scale each side to unit length, then a dot product,
    clipped to [-1, 1]) so that results match it to rounding error.
    """
    x, y = np.broadcast_arrays(x, y)
    constant = np.all(x == x[:, :1], axis=1) | np.all(y == y[:, :1], axis=1)
    x_centred = x - x.mean(axis=1, keepdims=True)
    y_centred = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # Scaled by the largest magnitude first (as SciPy does): squares of tiny spreads such
        # as 1e-294 would underflow to 0 in the norm.
        x_centred = x_centred / np.abs(x_centred).max(axis=1, keepdims=True)
        y_centred = y_centred / np.abs(y_centred).max(axis=1, keepdims=True)
        x_unit = x_centred / np.linalg.norm(x_centred, axis=1, keepdims=True)
        y_unit = y_centred / np.linalg.norm(y_centred, axis=1, keepdims=True)
        r = np.clip(np.einsum("ij,ij->i", x_unit, y_unit), -1.0, 1.0)
    r[constant] = np.nan
    return r


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Spearman correlation: Pearson on ranks, ties sharing their average rank."""
    # scipy only here: the registry imports this module, and must import with the base dependencies.
    from scipy.stats import rankdata

    x, y = np.broadcast_arrays(x, y)
    return pearson_rows(rankdata(x, method="average", axis=1), rankdata(y, method="average", axis=1))


def r2_rows(predictions: np.ndarray, references: np.ndarray) -> np.ndarray:
    """Row-wise coefficient of determination of ``predictions`` for ``references``.

    When the references of a row do not vary, R² is undefined; like scikit-learn's
    default (``force_finite=True``) we report 1.0 for a perfect fit and 0.0 otherwise.
    """
    predictions, references = np.broadcast_arrays(predictions, references)
    residual = np.sum((references - predictions) ** 2, axis=1)
    spread = np.sum((references - references.mean(axis=1, keepdims=True)) ** 2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = 1.0 - residual / spread
    return np.where(spread == 0, np.where(residual == 0, 1.0, 0.0), r2)


def regression_statistic(metrics: tuple[str, ...] = REGRESSION_METRICS) -> BatchedStatistic:
    """The batched statistic for similarity scores, computing only ``metrics``.

    Ranking every resample for Spearman is the costly part of a bootstrap (seconds for
    1,000 x 10,000), so a caller that wants R² alone should not pay for it.
    """
    unknown = set(metrics) - set(REGRESSION_METRICS)
    if unknown:
        raise NlueError(f"unknown regression metric(s): {', '.join(sorted(unknown))}")
    need_pearson = bool({"pearson", "pearson_spearman_mean"} & set(metrics))
    need_spearman = bool({"spearman", "pearson_spearman_mean"} & set(metrics))

    def statistic(outputs: np.ndarray, references: np.ndarray | None) -> dict[str, np.ndarray]:
        assert references is not None  # regression problems always carry references
        values: dict[str, np.ndarray] = {}
        if need_pearson:
            values["pearson"] = pearson_rows(outputs, references)
        if need_spearman:
            values["spearman"] = spearman_rows(outputs, references)
        if "pearson_spearman_mean" in metrics:  # STS-B's primary metric
            values["pearson_spearman_mean"] = (values["pearson"] + values["spearman"]) / 2.0
        if "r2" in metrics:
            values["r2"] = r2_rows(outputs, references)
        return values

    return statistic


def regression_problem(
    predictions: Any, references: Any, metrics: tuple[str, ...] = REGRESSION_METRICS
) -> ScoringProblem:
    """Validate real-valued scores and package them for scoring by ``metrics``."""
    n_items = check_same_length(predictions=predictions, references=references)
    outputs = finite_scores(predictions, "predictions")
    gold = finite_scores(references, "references")
    if n_items < 2:
        # Correlations and R² need a spread of values; one item (or none) has none.
        raise NlueError(
            f"empty input: regression metrics need at least 2 items, got {n_items}"
            if n_items == 0
            else f"too few items: regression metrics need at least 2 items, got {n_items}"
        )
    if {"pearson", "spearman", "pearson_spearman_mean"} & set(metrics):
        for name, values in (("predictions", outputs), ("references", gold)):
            if np.all(values == values[0]):
                logger.warning("%s are constant (all %s): Pearson and Spearman are undefined (NaN)", name, values[0])
    return ScoringProblem(outputs=outputs, references=gold, statistic=regression_statistic(metrics), metrics=metrics)


def pearson(predictions: Any, references: Any) -> float:
    """Pearson correlation of predicted and reference scores."""
    return regression_problem(predictions, references, ("pearson",)).point_estimates()["pearson"]


def spearman(predictions: Any, references: Any) -> float:
    """Spearman rank correlation of predicted and reference scores (average ranks for ties)."""
    return regression_problem(predictions, references, ("spearman",)).point_estimates()["spearman"]


def r_squared(predictions: Any, references: Any) -> float:
    """Coefficient of determination (scikit-learn's ``r2_score``) on raw scores."""
    return regression_problem(predictions, references, ("r2",)).point_estimates()["r2"]
