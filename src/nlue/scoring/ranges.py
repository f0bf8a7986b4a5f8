"""The values each metric can take, so that a stored score outside them is refused instead of shown.

A results file is read from outside; a score of 42, -5 or 1e308 for an accuracy is not a score.
Every metric nlue writes is one of these families (an interval's ends, ``<metric>_ci_low`` and
``<metric>_ci_high``, share their metric's range):

* shares, over [0, 1]: accuracies (``accuracy``, ``accuracy_all_items``, ``acc_norm_chars``, ...),
  F1 scores, ``invalid_rate``, GMET's ``equality``, ``combined`` and ``sigma`` (the spread of accuracies
  in [0, 1] is at most 0.5);
* correlations, over [-1, 1]: ``pearson``, ``spearman`` and their mean;
* R², at most 1 (a model worse than the mean has any negative value);
* spreads over seeds (``<metric>_sd``) and counts (``invalid_count_*``, ``parseable_items``): 0 or more.

Any other metric name is only required to be a finite number.
"""

from __future__ import annotations

import math

INF = math.inf
CORRELATION = (-1.0, 1.0)
SHARE = (0.0, 1.0)
R_SQUARED = (-INF, 1.0)
NON_NEGATIVE = (0.0, INF)
ANY_NUMBER = (-INF, INF)

_CORRELATIONS = ("pearson", "spearman", "pearson_spearman_mean")
_SHARE_PREFIXES = ("accuracy", "acc_norm", "macro_f1", "f1", "invalid_rate")
_SHARES = ("equality", "combined", "sigma")
_COUNT_PREFIXES = ("invalid_count_", "parseable_items", "n_items")


def metric_range(name: str) -> tuple[float, float]:
    """The closed range a metric called ``name`` lives in (see the module docstring)."""
    if name.endswith("_sd"):
        return NON_NEGATIVE
    base = name.removesuffix("_ci_low").removesuffix("_ci_high")
    if base in _CORRELATIONS:
        return CORRELATION
    if base == "r2":
        return R_SQUARED
    if base in _SHARES or base.startswith(_SHARE_PREFIXES):
        return SHARE
    if base.startswith(_COUNT_PREFIXES):
        return NON_NEGATIVE
    return ANY_NUMBER


def _bound(value: float) -> str:
    return "∞" if value == INF else "-∞" if value == -INF else f"{value:g}"


def range_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be metric ``name`` (not a number, not finite, outside its range), or None if it can."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{name} is {value!r:.40}, not a number"
    if not math.isfinite(value):
        return f"{name} is {value}, not a finite number"
    low, high = metric_range(name)
    if not low <= value <= high:
        return f"{name} = {value:g} is outside its range [{_bound(low)}, {_bound(high)}]"
    return None
