"""The common shape every scorer reduces its input to.

A :class:`ScoringProblem` holds one system's per-item outputs on one test set, the
per-item references, and a *batched* statistic: a function that scores many rows of
items at once. The point estimate is that statistic on the one original row; the
bootstrap and the paired tests call the same function on matrices of resampled or
swapped rows. Writing each metric once, over rows, is what keeps the point estimate,
the confidence interval and the significance test from drifting apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

# (outputs of shape (rows, items), references of shape (rows, items) or None) -> {metric: (rows,)}
BatchedStatistic = Callable[[np.ndarray, np.ndarray | None], dict[str, np.ndarray]]
IntervalMethod = Literal["percentile", "bias_shifted"]


@dataclass(frozen=True)
class ScoringProblem:
    """One system's outputs on one test set, ready to score, resample and compare.

    Attributes:
        outputs: per-item system output: label codes, predicted scores, or 0/1 correctness.
        references: per-item references aligned with ``outputs`` (None when the outputs
            already say whether each item is right, as for GMET).
        statistic: the metrics, computed row-wise over 2-D arrays of items.
        metrics: names of the scalar metrics ``statistic`` returns, in reporting order.
        group_sizes: for stratified data (GMET categories), the size of each stratum; items
            are stored sorted so that stratum ``k`` is one contiguous block. None otherwise.
        interval_method: how a bootstrap distribution becomes an interval, see
            :mod:`nlue.scoring.bootstrap`: ``"percentile"``, or ``"bias_shifted"`` for
            statistics whose resampled values are biased away from the point estimate.
        value_range: the range every metric lives in (interval ends are clipped to it),
            or None when unbounded.
    """

    outputs: np.ndarray
    references: np.ndarray | None
    statistic: BatchedStatistic
    metrics: tuple[str, ...]
    group_sizes: np.ndarray | None = None
    interval_method: IntervalMethod = "percentile"
    value_range: tuple[float, float] | None = None

    @property
    def n_items(self) -> int:
        return int(self.outputs.shape[0])

    def evaluate(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Score the rows of items picked by the index matrix ``rows`` (shape (r, n_items))."""
        references = None if self.references is None else self.references[rows]
        return self.statistic(self.outputs[rows], references)

    def point_estimates(self) -> dict[str, float]:
        """The metrics on the items as given, as plain Python floats."""
        values = self.statistic(self.outputs[None, :], None if self.references is None else self.references[None, :])
        return {name: float(values[name][0]) for name in self.metrics}
