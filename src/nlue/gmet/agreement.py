"""Agreement between judges: Cohen's kappa (two judges) and Fleiss' kappa (three or more).

Both compare the observed agreement ``P_o`` with the agreement expected by chance
``P_e``: ``kappa = (P_o - P_e) / (1 - P_e)``. Cohen's ``P_e`` uses each judge's own
label frequencies; Fleiss' uses the pooled frequencies over all judges. When ``P_e`` is
1 (every verdict is the same label) kappa is undefined and these functions return None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError


def cohen_kappa(first: Sequence[Any], second: Sequence[Any]) -> float | None:
    """Cohen's kappa of two judges' labels for the same items (matches sklearn's cohen_kappa_score)."""
    a = np.asarray(first)
    b = np.asarray(second)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise NlueError("Cohen's kappa needs two equally long, non-empty lists of labels")
    labels = np.union1d(a, b)
    pa = (a[:, None] == labels).mean(axis=0)
    pb = (b[:, None] == labels).mean(axis=0)
    observed = float((a == b).mean())
    expected = float((pa * pb).sum())
    if np.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(counts: Any) -> float | None:
    """Fleiss' kappa from an (items x categories) matrix of how many judges chose each category.

    Every item must have the same number of judges, at least two.
    """
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] == 0:
        raise NlueError("Fleiss' kappa needs an (items x categories) count matrix with at least one item")
    raters = table.sum(axis=1)
    if not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise NlueError("Fleiss' kappa needs the same number of judges (at least two) for every item")
    n = raters[0]
    per_item = ((table**2).sum(axis=1) - n) / (n * (n - 1))
    observed = per_item.mean()
    shares = table.sum(axis=0) / table.sum()
    expected = float((shares**2).sum())
    if np.isclose(expected, 1.0):
        return None
    return float((observed - expected) / (1.0 - expected))


def rating_counts(ratings: Any, labels: Sequence[Any] = (0, 1)) -> np.ndarray:
    """(items x labels) counts from an (items x judges) matrix of labels."""
    matrix = np.asarray(ratings)
    return np.stack([(matrix == label).sum(axis=1) for label in labels], axis=1)


def percent_agreement(ratings: Any) -> float:
    """Share of items on which every judge gave the same label."""
    matrix = np.asarray(ratings)
    return float((matrix == matrix[:, :1]).all(axis=1).mean())


def agreement(ratings: Any) -> dict[str, Any]:
    """Kappa suited to the number of judges (columns of ``ratings``) and the unanimity rate."""
    matrix = np.asarray(ratings)
    judges = matrix.shape[1]
    if judges < 2:
        return {"judges": judges, "statistic": None, "kappa": None, "unanimous": 1.0}
    if judges == 2:
        return {
            "judges": 2,
            "statistic": "cohen_kappa",
            "kappa": cohen_kappa(matrix[:, 0], matrix[:, 1]),
            "unanimous": percent_agreement(matrix),
        }
    return {
        "judges": judges,
        "statistic": "fleiss_kappa",
        "kappa": fleiss_kappa(rating_counts(matrix)),
        "unanimous": percent_agreement(matrix),
    }
