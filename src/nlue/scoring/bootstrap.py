"""Bootstrap confidence intervals over test items.

Resampling is fully vectorised: a block of resamples is one integer matrix of item
indices, and the problem's batched statistic scores every row of it in one call. Blocks
keep memory flat (a few million indices at a time) however many resamples are asked for.
For stratified problems (GMET) every category keeps its size in every resample, because
the combined score is defined over a fixed set of categories.

Two ways to turn the resampled values into an interval (``ScoringProblem.interval_method``):

* ``"percentile"``: the central quantiles of the resampled values. Right when the
  resampled values centre on the point estimate (accuracy, macro-F1, correlations).
* ``"bias_shifted"``: the same quantiles moved by the bootstrap's own bias estimate,
  ``mean(resampled) - point``. GMET needs it: sigma is the spread of per-category
  accuracies, and drawing items again within a category adds binomial noise to every
  A_k, so resampled sigmas sit above the observed one (with 20 items per category,
  often every one of them does, and the percentile interval of sigma, E and C then
  excludes the point estimate). The observed sigma is inflated in the same way relative
  to the categories' true accuracies, so shifting the quantiles back by the bootstrap
  bias centres the interval on the point estimate. What it covers is the value the
  statistic has on average over test sets of the same design (the same categories with
  the same numbers of items, items drawn afresh): tests/test_scoring_gmet.py measures
  its coverage at 75 x 20 items. (Efron's bias-corrected percentile method, which reads
  the bias from the share of resamples below the point, breaks down here: that share
  is often 0.) Ends are clipped to the metric's range.

The same seed, resample count and data always give the same interval.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import numpy as np

from nlue.errors import NlueError
from nlue.scoring.problem import ScoringProblem
from nlue.scoring.validation import check_positive_int, check_probability

logger = logging.getLogger(__name__)

DEFAULT_RESAMPLES = 1_000
DEFAULT_CONFIDENCE_LEVEL = 0.95
DEFAULT_SEED = 0
# Indices held at once per block; about 16 MB of int64, small next to the data it gathers.
_BLOCK_CELLS = 2_000_000


def rows_per_block(n_items: int) -> int:
    """How many resamples of ``n_items`` fit in one block."""
    return max(1, _BLOCK_CELLS // max(n_items, 1))


def block_sizes(resamples: int, n_items: int) -> Iterator[int]:
    """The number of resamples in each block: the one loop behind the bootstrap and the paired tests."""
    block = rows_per_block(n_items)
    for first in range(0, resamples, block):
        yield min(block, resamples - first)


def resample_indices(
    rng: np.random.Generator, n_items: int, n_rows: int, group_sizes: np.ndarray | None = None
) -> np.ndarray:
    """An (n_rows, n_items) matrix of item indices drawn with replacement.

    With ``group_sizes`` the items form contiguous blocks and each index is drawn from
    its own block, so a resample has exactly as many items of each group as the data.
    """
    if group_sizes is None:
        return rng.integers(0, n_items, size=(n_rows, n_items))
    starts = np.repeat(np.concatenate(([0], np.cumsum(group_sizes)[:-1])), group_sizes)
    sizes = np.repeat(group_sizes, group_sizes)
    return starts + rng.integers(0, sizes, size=(n_rows, n_items))


def bootstrap_distribution(
    problem: ScoringProblem, resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED
) -> dict[str, np.ndarray]:
    """Every metric of ``problem`` on ``resamples`` bootstrap resamples of its items."""
    resamples = check_positive_int(resamples, "bootstrap_resamples")
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    parts: dict[str, list[np.ndarray]] = {name: [] for name in problem.metrics}
    for size in block_sizes(resamples, problem.n_items):
        rows = resample_indices(rng, problem.n_items, size, problem.group_sizes)
        values = problem.evaluate(rows)
        for name in problem.metrics:
            parts[name].append(values[name])
    logger.debug(
        "bootstrap: %d resamples of %d items in %.3f s", resamples, problem.n_items, time.perf_counter() - started
    )
    return {name: np.concatenate(chunks) for name, chunks in parts.items()}


def percentile_interval(values: np.ndarray, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL) -> tuple[float, float]:
    """The central ``confidence_level`` interval of a bootstrap distribution.

    Resamples where a metric is undefined (NaN, e.g. a correlation on a constant
    resample) are left out; if every resample is undefined, so is the interval.
    """
    tail = (1.0 - check_probability(confidence_level, "confidence_level")) / 2.0
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)


def bias_shifted_interval(
    values: np.ndarray, point: float, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL
) -> tuple[float, float]:
    """The percentile interval moved by the bootstrap bias estimate ``mean(values) - point``."""
    low, high = percentile_interval(values, confidence_level)
    finite = values[~np.isnan(values)]
    if finite.size == 0 or not np.isfinite(point):
        return low, high
    bias = float(finite.mean()) - point
    return low - bias, high - bias


def bootstrap_intervals(
    problem: ScoringProblem,
    resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    seed: int | None = DEFAULT_SEED,
) -> dict[str, tuple[float, float]]:
    """Bootstrap interval of every metric of ``problem``, by its ``interval_method``."""
    check_probability(confidence_level, "confidence_level")
    distribution = bootstrap_distribution(problem, resamples, seed)
    if problem.interval_method == "percentile":
        intervals = {name: percentile_interval(values, confidence_level) for name, values in distribution.items()}
    elif problem.interval_method == "bias_shifted":
        points = problem.point_estimates()
        intervals = {
            name: bias_shifted_interval(values, points[name], confidence_level) for name, values in distribution.items()
        }
    else:
        raise NlueError(f"unknown interval method {problem.interval_method!r}; expected percentile or bias_shifted")
    if problem.value_range is not None:
        floor, ceiling = problem.value_range
        intervals = {
            name: (_clip(low, floor, ceiling), _clip(high, floor, ceiling)) for name, (low, high) in intervals.items()
        }
    return intervals


def _clip(value: float, floor: float, ceiling: float) -> float:
    return value if np.isnan(value) else float(min(max(value, floor), ceiling))


def scores_with_intervals(
    problem: ScoringProblem,
    metrics: tuple[str, ...] | None = None,
    bootstrap_resamples: int | None = None,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    seed: int | None = DEFAULT_SEED,
) -> dict[str, float]:
    """Point estimates of ``metrics`` (default: all), each followed by its CI when resampling is asked for.

    This is the one output shape of every NLUE metric module: ``{"macro_f1": ...,
    "macro_f1_ci_low": ..., "macro_f1_ci_high": ...}`` with plain Python floats.
    """
    names = problem.metrics if metrics is None else metrics
    points = problem.point_estimates()
    if bootstrap_resamples is None:
        return {name: points[name] for name in names}
    intervals = bootstrap_intervals(problem, bootstrap_resamples, confidence_level, seed)
    out: dict[str, float] = {}
    for name in names:
        out[name] = points[name]
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = intervals[name]
    return out
