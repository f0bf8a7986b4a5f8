"""Metrics that cannot be computed: null, with the reason, where a score leaves nlue.

The scoring maths keep NumPy's and SciPy's convention inside (NaN for an undefined value, so that a
bootstrap can leave such resamples out and the numbers agree with SciPy). A results file is read by
other tools, and NaN is not JSON: there such a metric is ``None`` (null) and its reason is said
(``details.null_metrics``). :func:`null_metrics` does that conversion, with a reason given by the
caller where it knows one, else the reason the metric's family implies (:func:`reason_for`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

INTERVAL_SUFFIXES = ("_ci_low", "_ci_high")
CORRELATIONS = ("pearson", "spearman", "pearson_spearman_mean")
NO_PARSE = "no answer could be parsed (every output was invalid), so there are no parseable items to score"
CONSTANT = "a correlation is undefined when the predictions or the references are all the same value"
NO_INTERVAL = "no interval: the metric is undefined on every bootstrap resample"
NOT_FINITE = "not a finite number (NaN or infinite)"


def _base(name: str) -> str:
    for suffix in INTERVAL_SUFFIXES:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def reason_for(name: str) -> str:
    """Why the metric ``name`` can come out undefined, from its family (parseable-only, correlations, intervals)."""
    base = _base(name)
    if base.endswith("_parseable") or "_parseable_" in base:
        return NO_PARSE
    if any(base == c or base.startswith(f"{c}_") for c in CORRELATIONS):
        return CONSTANT
    if base != name:
        return NO_INTERVAL
    return NOT_FINITE


def _undefined(value: Any) -> bool:
    if value is None:
        return True
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError):
        return False  # not a number (a label, a count as text): not this module's to judge


def null_metrics(
    metrics: Mapping[str, Any], reasons: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """(``metrics`` with every undefined value as None, the reason for each such metric).

    ``reasons`` are the caller's own (e.g. "0 of 8 answers parsed"); a metric whose interval bound is
    undefined because the metric itself is keeps the metric's reason.
    """
    given = dict(reasons or {})
    out: dict[str, Any] = {}
    why: dict[str, str] = {}
    for name, value in metrics.items():
        if not _undefined(value):
            out[name] = value
            continue
        out[name] = None
        base = _base(name)
        why[name] = given.get(name) or (given.get(base) if base != name and _undefined(metrics.get(base))
                                        else None) or reason_for(name)  # fmt: skip
    return out, why
