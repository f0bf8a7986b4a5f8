"""Consistency checks of the paper's printed results, and the flags they attach to cells.

The paper's numbers stay exactly as printed (:mod:`nlue.registry.paper`). Some combinations of
them cannot all be right, and a reader of our leaderboard or cards should know which.
Each check below is a piece of arithmetic any table of the same shape can be put
through, so a future table (or a corrected one) is checked the same way:

``r2_above_pearson_squared`` (STS-B: columns Spearman, Pearson, R²)
    For raw predictions f, R² = 1 - SSE/SST is at most the R² of the best affine
    recalibration of f, which is Pearson's r². A printed R² above the printed Pearson²
    is impossible; with the first two columns read the other way round (Spearman as
    Pearson) the rows become possible, so the two labels were probably swapped.
``accuracy_macro_f1_impossible`` (binary classification)
    On a test set with the reported class shares, a given accuracy bounds macro-F1: with
    x the share of items that are correct members of class 0, F1_0 = 2x / (2x + 1 - acc)
    and F1_1 = 2(acc - x) / (2(acc - x) + 1 - acc), and x can only range so far. A
    printed macro-F1 outside that range for every class share within ±2 points of the
    reported one cannot come from one confusion matrix.
``gmet_sigma_below_noise`` (GMET: columns accuracy, combined score)
    C = A·exp(-σ), so σ = -ln(C/A). With 20 items in each of 75 categories, even a model
    whose accuracy is the same in every category gets σ from binomial noise: σ² ≈ v·S/K
    with v = A(1-A)/20 and S a chi-square variable with K-1 degrees of freedom. An
    implied σ below the 0.1% quantile of that noise floor is not what scoring 1,500
    items gives.

No scipy here: the registry must import with the package's base dependencies, so the
chi-square quantile uses the Wilson-Hilferty approximation (ample for a 0.1% floor).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nlue.registry.paper import PAPER_MODELS, RESULT_COLUMNS, PaperModel

# The paper's GMET design (appendix F.1): 75 categories of 20 sentences.
GMET_DESIGN = (75, 20)
SIGMA_FLOOR_QUANTILE = 0.001
SHARE_TOLERANCE = 0.02  # reported class shares are rounded: allow ±2 points
ROUNDING = (
    0.0002  # printed percentages have two decimals: each cell may be off by half a unit (0.00005) on the 0-1 scale
)


@dataclass(frozen=True)
class PaperFlag:
    """A printed cell (or group of cells) of the paper's results that fails a consistency check."""

    model: str
    task: str
    cells: tuple[str, ...]  # metric names of the flagged cells, as in nlue.registry.paper.RESULT_COLUMNS
    check: str
    summary: str  # a few words, for table cells
    explanation: str  # what was checked and what it implies

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "task": self.task,
            "cells": list(self.cells),
            "check": self.check,
            "summary": self.summary,
            "explanation": self.explanation,
        }


def macro_f1_range(accuracy: float, share_0: float) -> tuple[float, float]:
    """Lowest and highest binary macro-F1 any confusion matrix with this accuracy and class-0 share gives.

    With x the share of items that are correct members of class 0, macro-F1 is the mean of
    2x / (2x + 1 - acc) and 2(acc - x) / (2(acc - x) + 1 - acc): a sum of two concave functions
    of x, symmetric about acc / 2. So its minimum is at an end of x's feasible range and its
    maximum at the feasible point nearest acc / 2.
    """
    share_1 = 1.0 - share_0
    low_x, high_x = max(0.0, accuracy - share_1), min(share_0, accuracy)
    if low_x > high_x + 1e-12:
        return math.nan, math.nan  # no confusion matrix has this accuracy with these shares

    def macro_f1(x: float) -> float:
        y = accuracy - x
        f1_0 = 2 * x / (2 * x + 1 - accuracy) if x > 0 else 0.0
        f1_1 = 2 * y / (2 * y + 1 - accuracy) if y > 0 else 0.0
        return (f1_0 + f1_1) / 2

    peak = min(max(accuracy / 2, low_x), high_x)
    return min(macro_f1(low_x), macro_f1(high_x)), macro_f1(peak)


def macro_f1_bounds(accuracy: float, share_0: float, tolerance: float = SHARE_TOLERANCE) -> tuple[float, float]:
    """:func:`macro_f1_range` widened over class-0 shares within ``tolerance`` of the reported one."""
    lows, highs = [], []
    for k in range(21):
        share = share_0 - tolerance + 2 * tolerance * k / 20
        if 0.0 < share < 1.0:
            low, high = macro_f1_range(accuracy, share)
            if not math.isnan(low):
                lows.append(low)
                highs.append(high)
    return (min(lows), max(highs)) if lows else (math.nan, math.nan)


def chi2_quantile(probability: float, degrees: int) -> float:
    """Wilson-Hilferty approximation of the chi-square quantile."""
    z = _normal_quantile(probability)
    h = 2.0 / (9.0 * degrees)
    return degrees * (1.0 - h + z * math.sqrt(h)) ** 3


def _normal_quantile(probability: float) -> float:
    """Inverse of the standard normal CDF by bisection on math.erf (no scipy needed)."""
    low, high = -10.0, 10.0
    for _ in range(200):
        middle = (low + high) / 2
        if 0.5 * (1 + math.erf(middle / math.sqrt(2))) < probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def gmet_sigma_floor(
    accuracy: float, design: tuple[int, int] = GMET_DESIGN, quantile: float = SIGMA_FLOOR_QUANTILE
) -> float:
    """The ``quantile`` of σ that binomial noise alone gives when every category has accuracy ``accuracy``."""
    categories, items = design
    variance = accuracy * (1.0 - accuracy) / items
    return math.sqrt(variance * chi2_quantile(quantile, categories - 1) / categories)


def check_stsb(model: str, task: str, scores: Mapping[str, float]) -> PaperFlag | None:
    pearson, spearman, r2 = scores["pearson"], scores["spearman"], scores["r2"]
    if r2 <= pearson**2 + ROUNDING:
        return None
    swapped = r2 <= spearman**2 + ROUNDING
    return PaperFlag(
        model,
        task,
        ("spearman", "pearson", "r2"),
        "r2_above_pearson_squared",
        "R² > Pearson²: columns probably swapped" if swapped else "R² > Pearson²",
        f"R² {100 * r2:.2f} exceeds Pearson² ({100 * pearson:.2f}² = {100 * pearson**2:.2f}), which raw "
        "predictions cannot do (R² ≤ r² for any predictor)"
        + (
            f"; read with the first two columns swapped (Pearson {100 * spearman:.2f}) the row is possible, so "
            "the printed Spearman and Pearson labels are probably exchanged."
            if swapped
            else "."
        ),
    )


def check_binary(model: str, task: str, scores: Mapping[str, float], share_0: float) -> PaperFlag | None:
    accuracy, f1 = scores["accuracy"], scores["macro_f1"]
    low, high = macro_f1_bounds(accuracy, share_0)
    if math.isnan(low) or low - ROUNDING <= f1 <= high + ROUNDING:
        return None
    return PaperFlag(
        model,
        task,
        ("accuracy", "macro_f1"),
        "accuracy_macro_f1_impossible",
        "accuracy and macro-F1 cannot both hold",
        f"accuracy {100 * accuracy:.2f} with macro-F1 {100 * f1:.2f} is impossible on a test set whose class-0 "
        f"share is {100 * share_0:.0f}% (±{100 * SHARE_TOLERANCE:.0f}) as reported: at that accuracy macro-F1 lies "
        f"between {100 * low:.2f} and {100 * high:.2f}.",
    )


def check_gmet(model: str, task: str, scores: Mapping[str, float]) -> PaperFlag | None:
    accuracy, combined = scores["accuracy"], scores["combined"]
    if not 0 < combined <= accuracy < 1:
        return None
    sigma = -math.log(combined / accuracy)
    floor = gmet_sigma_floor(accuracy)
    if sigma >= floor:
        return None
    categories, items = GMET_DESIGN
    return PaperFlag(
        model,
        task,
        ("accuracy", "combined"),
        "gmet_sigma_below_noise",
        "implied σ below sampling noise",
        f"C/A implies σ = {sigma:.3f}, below {floor:.3f}, the {100 * SIGMA_FLOOR_QUANTILE:.1f}% quantile of the σ "
        f"that binomial noise alone gives at accuracy {100 * accuracy:.2f} with {categories} categories of "
        f"{items} items (even if every category had the same true accuracy).",
    )


def model_scores(model: PaperModel) -> dict[str, dict[str, float]]:
    """A paper row as {task: {metric: value on the 0-1 scale}}."""
    out: dict[str, dict[str, float]] = {}
    for (task, metric), value in zip(RESULT_COLUMNS, model.results_percent, strict=True):
        out.setdefault(task, {})[metric] = value / 100.0
    return out


def paper_flags(
    models: Sequence[PaperModel] = PAPER_MODELS, class_shares: Mapping[str, float] | None = None
) -> tuple[PaperFlag, ...]:
    """Every flag the checks raise on ``models``' rows.

    ``class_shares`` maps each binary task to the reported share of its class 0 (label id 0);
    the registry passes its ``class_balance``.
    """
    flags: list[PaperFlag] = []
    for model in models:
        for task, scores in model_scores(model).items():
            # The metrics a task's columns hold say which check applies.
            flag = None
            if {"pearson", "spearman", "r2"} <= scores.keys():
                flag = check_stsb(model.name, task, scores)
            elif {"accuracy", "combined"} <= scores.keys():
                flag = check_gmet(model.name, task, scores)
            elif {"accuracy", "macro_f1"} <= scores.keys() and class_shares and task in class_shares:
                flag = check_binary(model.name, task, scores, class_shares[task])
            if flag is not None:
                flags.append(flag)
    return tuple(flags)
