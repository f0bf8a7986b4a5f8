"""A task's numbers from its per-item scores: how far the test items stand above their controls.

* ``auc``: the chance that a test item scores above a control, ties counting half, over every pair of an
  item and a control (the area under the ROC curve of "item or control?" by score, as sklearn's
  ``roc_auc_score`` computes it). 0.5: the model tells the items from their controls no better than a coin;
  1: every item above every control.
* ``auc_ci_low``/``auc_ci_high``: a percentile bootstrap interval, ``resamples`` times from ``seed``: the items
  drawn again one by one, the controls by the text each was first made of (a text used for many controls is
  drawn, or not, with all of them), so a few control texts give a wide interval.
* ``above_p95``: the share of items scoring above the 95th percentile of the controls' scores; about 0.05
  when items and controls come from one distribution, more when some items stand out.
* ``item_mean``/``control_mean``: the mean scores, for the size of the gap.
* ``control_texts``: how many distinct texts the controls were made of (``shuffled`` counts as one). Few
  texts widen the interval; they also make it likelier that the controls differ from the items in topic,
  length or style, which moves the AUC whether or not the items were seen.

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
    items: np.ndarray,
    controls: np.ndarray,
    groups: np.ndarray | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float | None, float | None]:
    """The 95% percentile interval of :func:`auc` (``None``: no resampling asked, or too few items).

    Items are drawn again one by one; controls by their ``groups`` (the first text each was made of), whole
    groups at a time, so that controls made of the same few texts count as the few they are.
    """
    if resamples < 1 or len(items) < 2:
        return None, None
    groups = np.arange(len(controls)) if groups is None else np.asarray(groups)
    labels, members = np.unique(groups, return_inverse=True)
    by_group = [np.flatnonzero(members == g) for g in range(len(labels))]
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    for r in range(resamples):
        drawn_items = items[rng.integers(0, len(items), len(items))]
        chosen = rng.integers(0, len(by_group), len(by_group))
        values[r] = auc(drawn_items, controls[np.concatenate([by_group[g] for g in chosen])])
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def measure_summary(
    items: np.ndarray,
    controls: np.ndarray,
    groups: np.ndarray | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, float | None]:
    """The numbers of one measure (module docstring) for item and control scores."""
    if not len(items):
        return {"auc": None, "auc_ci_low": None, "auc_ci_high": None, "above_p95": None, "item_mean": None,
                "control_mean": None}  # fmt: skip
    low, high = bootstrap_auc(items, controls, groups, resamples, seed)
    threshold = float(np.quantile(controls, 0.95))
    return {
        "auc": auc(items, controls),
        "auc_ci_low": low,
        "auc_ci_high": high,
        "above_p95": float(np.mean(items > threshold)),
        "item_mean": float(np.mean(items)),
        "control_mean": float(np.mean(controls)),
    }


def scored_pairs(records: Sequence[Mapping[str, Any]], measure: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The item scores, control scores and control groups (:func:`bootstrap_auc`) of ``measure``, over the
    records that have both scores. A shuffled control is a group of its own."""
    kept = [r for r in records if r.get(measure) is not None and r.get(f"{measure}_control") is not None]
    if not kept:
        return np.empty(0), np.empty(0), np.empty(0, dtype=object)
    items = np.array([r[measure] for r in kept], float)
    controls = np.array([r[f"{measure}_control"] for r in kept], float)
    firsts = [(r.get("control_from") or ["shuffled"])[0] for r in kept]
    groups = [first if first != "shuffled" else f"own:{n}" for n, first in enumerate(firsts)]
    return items, controls, np.array(groups, dtype=object)


def task_summary(
    records: Sequence[Mapping[str, Any]], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """Per measure (Min-K%++, Min-K%, mean log p), its numbers over the task's items that have a control."""
    compared = [r for r in records if r.get("minkpp_control") is not None]
    texts = {source for r in compared for source in r.get("control_from", [])}
    out: dict[str, Any] = {"items": len(records), "compared": len(compared), "no_control": len(records) - len(compared),
                           "control_texts": len(texts)}  # fmt: skip
    for measure in MEASURES:
        out[measure] = measure_summary(*scored_pairs(records, measure), resamples=resamples, seed=seed)
    return out


def completion_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The exam completion numbers (module docstring) over the questions long enough to be split."""
    done = [r for r in records if r.get("exact") is not None]
    mean = lambda key: float(np.mean([float(r[key]) for r in done])) if done else None  # noqa: E731
    return {"questions": len(records), "split": len(done), "exact": mean("exact"), "overlap": mean("overlap"),
            "control_exact": mean("control_exact"), "control_overlap": mean("control_overlap")}  # fmt: skip
