"""Is system A really better than system B on the same test items?

Two paired tests, both vectorised over a matrix of resamples:

* ``"permutation"`` (approximate randomisation): under the null hypothesis the two
  systems are exchangeable on every item, so each item's two outputs are swapped with
  probability 1/2 and the metric difference recomputed. The p-value is the share of
  shuffles whose absolute difference reaches the observed one, with the usual +1
  correction so it is never exactly 0.
* ``"bootstrap"`` (paired bootstrap): items are resampled with replacement, both systems
  scored on the same resample. The p-value compares the resampled differences, shifted
  to mean zero, with the observed difference; the percentile interval of the
  differences is returned as well.

Both are two-sided and work for any metric the problem defines, including macro-F1,
whose value is not an average of per-item scores.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from nlue.errors import NlueError
from nlue.scoring.bootstrap import DEFAULT_CONFIDENCE_LEVEL, block_sizes, percentile_interval, resample_indices
from nlue.scoring.problem import ScoringProblem
from nlue.scoring.validation import check_positive_int

logger = logging.getLogger(__name__)

TestMethod = Literal["permutation", "bootstrap"]
DEFAULT_TEST_RESAMPLES = 10_000
# Differences closer than this are the same difference; without it float noise in a
# metric recomputed on swapped rows could make identical systems look different.
_TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class PairedComparison:
    """The outcome of a paired significance test of system A against system B."""

    metric: str
    score_a: float
    score_b: float
    difference: float  # score_a - score_b
    p_value: float
    method: TestMethod
    resamples: int
    ci_low: float | None = None  # percentile interval of the difference (bootstrap only)
    ci_high: float | None = None

    def as_dict(self) -> dict[str, float | str | int | None]:
        return asdict(self)


def paired_test(
    problem_a: ScoringProblem,
    problem_b: ScoringProblem,
    metric: str,
    *,
    method: TestMethod = "permutation",
    resamples: int = DEFAULT_TEST_RESAMPLES,
    seed: int | None = 0,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> PairedComparison:
    """Compare two systems' outputs on the same items by ``metric``."""
    _check_paired(problem_a, problem_b, metric)
    resamples = check_positive_int(resamples, "resamples")
    score_a = problem_a.point_estimates()[metric]
    score_b = problem_b.point_estimates()[metric]
    observed = score_a - score_b
    rng = np.random.default_rng(seed)
    if method == "permutation":
        differences = _permutation_differences(problem_a, problem_b, metric, resamples, rng)
        extreme = np.abs(differences) >= abs(observed) - _TIE_TOLERANCE
        ci_low = ci_high = None
    elif method == "bootstrap":
        differences = _bootstrap_differences(problem_a, problem_b, metric, resamples, rng)
        ci_low, ci_high = percentile_interval(differences, confidence_level)
    else:
        raise NlueError(f"unknown test method {method!r}; expected 'permutation' or 'bootstrap'")
    valid = ~np.isnan(differences)
    if method == "permutation":
        p_value = (1.0 + float(np.count_nonzero(extreme & valid))) / (1.0 + float(np.count_nonzero(valid)))
    else:
        # The percentile interval's own p-value: twice the smaller share of resampled differences on either side
        # of 0, so that p < 1 - confidence exactly when the interval leaves 0 out. (A p-value from differences
        # shifted onto the null disagreed with the interval on skewed metrics such as macro-F1 on few items.)
        below = float(np.count_nonzero(valid & (differences <= _TIE_TOLERANCE)))
        above = float(np.count_nonzero(valid & (differences >= -_TIE_TOLERANCE)))
        count = max(1.0, float(np.count_nonzero(valid)))
        p_value = min(1.0, max(1.0, 2.0 * min(below, above)) / count)  # never 0: one resample's worth at least
    logger.debug("paired %s test on %s: difference %.6f, p = %.4f", method, metric, observed, p_value)
    return PairedComparison(
        metric, score_a, score_b, float(observed), float(p_value), method, resamples, ci_low, ci_high
    )


def _check_paired(problem_a: ScoringProblem, problem_b: ScoringProblem, metric: str) -> None:
    if metric not in problem_a.metrics:
        raise NlueError(
            f"unknown metric {metric!r} for this comparison; expected one of: {', '.join(problem_a.metrics)}"
        )
    if problem_a.n_items != problem_b.n_items:
        raise NlueError(
            f"lengths differ: system A has {problem_a.n_items} items and system B {problem_b.n_items}; "
            "a paired test needs both systems on the same items"
        )
    same_refs = (problem_a.references is None and problem_b.references is None) or (
        problem_a.references is not None
        and problem_b.references is not None
        and np.array_equal(problem_a.references, problem_b.references)
    )
    same_groups = (problem_a.group_sizes is None and problem_b.group_sizes is None) or (
        problem_a.group_sizes is not None
        and problem_b.group_sizes is not None
        and np.array_equal(problem_a.group_sizes, problem_b.group_sizes)
    )
    if not (same_refs and same_groups):
        raise NlueError(
            "the two systems were scored against different references or categories; pair them item by item"
        )


def _permutation_differences(
    problem_a: ScoringProblem, problem_b: ScoringProblem, metric: str, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    parts = []
    for size in block_sizes(resamples, problem_a.n_items):
        swap = rng.random((size, problem_a.n_items)) < 0.5
        shuffled_a = np.where(swap, problem_b.outputs, problem_a.outputs)
        shuffled_b = np.where(swap, problem_a.outputs, problem_b.outputs)
        references = None if problem_a.references is None else np.broadcast_to(problem_a.references, swap.shape)
        parts.append(
            problem_a.statistic(shuffled_a, references)[metric] - problem_a.statistic(shuffled_b, references)[metric]
        )
    return np.concatenate(parts)


def _bootstrap_differences(
    problem_a: ScoringProblem, problem_b: ScoringProblem, metric: str, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    parts = []
    for size in block_sizes(resamples, problem_a.n_items):
        rows = resample_indices(rng, problem_a.n_items, size, problem_a.group_sizes)
        parts.append(problem_a.evaluate(rows)[metric] - problem_b.evaluate(rows)[metric])
    return np.concatenate(parts)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant items: right only for A, right only for B.

    Under the null hypothesis each discordant item is A's with probability 1/2, so the count is
    Binomial(n, 1/2) (scipy's ``binomtest(only_a, n).pvalue``, without scipy).
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (statsmodels' ``multipletests(method="holm")``)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
