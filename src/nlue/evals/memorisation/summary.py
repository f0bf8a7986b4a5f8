"""A task's numbers from its per-item scores: how far the test items stand above their controls.

* ``auc``: the chance that a test item scores above a control, ties counting half, over every pair of an
  item and a control (the area under the ROC curve of "item or control?" by score, as sklearn's
  ``roc_auc_score`` computes it). 0.5: the model tells the items from shuffled text no better than a coin;
  1: every item above every control.
* ``auc_ci_low``/``auc_ci_high``: a percentile bootstrap interval (items drawn again with their own
  controls, ``resamples`` times, from ``seed``).
* ``above_p95``: the share of items scoring above the 95th percentile of the controls' scores; about 0.05
  when items and controls come from one distribution, more when some items stand out.
* ``item_mean``/``control_mean``: the mean scores, for the size of the gap.

Completion (exams): ``exact`` the share of questions whose second half the model wrote word for word,
``overlap`` the mean character similarity of what it wrote and the second half, and the same two against
another question's second half (``control_exact``, ``control_overlap``): what chance gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlue.evals.memorisation.minkpp import MEASURES

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0


def auc(items: np.ndarray, controls: np.ndarray) -> float:
    """P(item > control) + P(item = control) / 2 over all pairs (nan when either side is empty)."""
    items, controls = np.asarray(items, float), np.sort(np.asarray(controls, float))
    if not len(items) or not len(controls):
        return float("nan")
    below = np.searchsorted(controls, items, side="left")
    equal = np.searchsorted(controls, items, side="right") - below
    return float((below + equal / 2).sum() / (len(items) * len(controls)))


def bootstrap_auc(
    items: np.ndarray, controls: np.ndarray, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> tuple[float | None, float | None]:
    """The 95% percentile interval of :func:`auc`, each item drawn with its own control (``None``: no resampling
    asked, or too few items)."""
    if resamples < 1 or len(items) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    for r in range(resamples):
        drawn = rng.integers(0, len(items), len(items))
        values[r] = auc(items[drawn], controls[drawn])
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def measure_summary(
    items: np.ndarray, controls: np.ndarray, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, float | None]:
    """The numbers of one measure (module docstring) for paired item and control scores."""
    if not len(items):
        return {"auc": None, "auc_ci_low": None, "auc_ci_high": None, "above_p95": None, "item_mean": None,
                "control_mean": None}  # fmt: skip
    low, high = bootstrap_auc(items, controls, resamples, seed)
    threshold = float(np.quantile(controls, 0.95))
    return {
        "auc": auc(items, controls),
        "auc_ci_low": low,
        "auc_ci_high": high,
        "above_p95": float(np.mean(items > threshold)),
        "item_mean": float(np.mean(items)),
        "control_mean": float(np.mean(controls)),
    }


def scored_pairs(records: Sequence[Mapping[str, Any]], measure: str) -> tuple[np.ndarray, np.ndarray]:
    """The item and control scores of ``measure`` of the records that have both."""
    pairs = [(r[measure], r[f"{measure}_control"]) for r in records if r.get(measure) is not None
             and r.get(f"{measure}_control") is not None]  # fmt: skip
    if not pairs:
        return np.empty(0), np.empty(0)
    both = np.asarray(pairs, float)
    return both[:, 0], both[:, 1]


def task_summary(
    records: Sequence[Mapping[str, Any]], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """Per measure (Min-K%++, Min-K%, mean log p), its numbers over the task's items that have a control."""
    compared = sum(r.get("minkpp_control") is not None for r in records)
    out: dict[str, Any] = {"items": len(records), "compared": compared, "no_control": len(records) - compared}
    for measure in MEASURES:
        out[measure] = measure_summary(*scored_pairs(records, measure), resamples, seed)
    return out


def completion_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The exam completion numbers (module docstring) over the questions long enough to be split."""
    done = [r for r in records if r.get("exact") is not None]
    mean = lambda key: float(np.mean([float(r[key]) for r in done])) if done else None  # noqa: E731
    return {"questions": len(records), "split": len(done), "exact": mean("exact"), "overlap": mean("overlap"),
            "control_exact": mean("control_exact"), "control_overlap": mean("control_overlap")}  # fmt: skip
