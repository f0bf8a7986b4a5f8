"""Combining native speakers' verdicts on GMET predictions: majority, agreement, recomputed scores.

Majority
    An item is correct when more judges said 1 than 0. A tie (an even number of judges,
    split evenly) goes to the automatic verdict by default (``ties="automatic"``: the
    listed answers break the tie); ``ties="zero"`` counts it as wrong and ``ties="one"``
    as right. With one judge the majority is that judge.

Agreement
    Cohen's kappa for two judges, Fleiss' kappa for three or more
    (:mod:`nlue.gmet.agreement`), the share of unanimous items, the items the judges
    disagree on, and the agreement (Cohen's kappa) of the majority with the automatic
    verdict. The scores A, E and C are then recomputed from the majority verdicts with
    :func:`nlue.scores.score_task`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nlue.errors import NlueError, RowProblem
from nlue.gmet.agreement import agreement, cohen_kappa
from nlue.gmet.judging import TIE_RULES, JudgedItem, JudgmentFileError, read_judgments


@dataclass
class JudgingOutcome:
    """The judges' verdicts combined: majority, agreement, disagreements and the recomputed scores."""

    judges: list[str]
    items: list[JudgedItem]
    ratings: np.ndarray  # items x judges, 0/1
    majority: np.ndarray  # 0/1 per item
    ties: list[int]  # ids of tied items
    tie_rule: str
    agreement: dict[str, Any]
    automatic_agreement: dict[str, Any]
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "judges": self.judges,
            "items": len(self.items),
            "tie_rule": self.tie_rule,
            "ties": self.ties,
            "agreement": self.agreement,
            "majority_vs_automatic": self.automatic_agreement,
            "disagreements": len(self.disagreements),
            "metrics": self.metrics,
        }


def judge_names(paths: Sequence[Path]) -> list[str]:
    """A distinct name per judgment file: its stem, numbered when stems repeat."""
    names: list[str] = []
    for path in paths:
        stem = Path(path).stem
        name, k = stem, 2
        while name in names:
            name, k = f"{stem}_{k}", k + 1
        names.append(name)
    return names


def majority_vote(
    ratings: np.ndarray, automatic: Sequence[int | None] | None, tie_rule: str
) -> tuple[np.ndarray, np.ndarray]:
    """Majority verdict per item and a mask of tied items (see the module docstring for ties)."""
    if tie_rule not in TIE_RULES:
        raise NlueError(f"unknown tie rule {tie_rule!r}; choose one of {', '.join(TIE_RULES)}")
    ones = ratings.sum(axis=1)
    zeros = ratings.shape[1] - ones
    tied = ones == zeros
    majority = (ones > zeros).astype(np.int64)
    if tied.any():
        if tie_rule == "automatic":
            if automatic is None or any(a is None for a in automatic):
                raise NlueError("ties go to the automatic verdict, but the item list has no 'automatic' column")
            majority[tied] = np.asarray(automatic, dtype=np.int64)[tied]
        else:
            majority[tied] = 1 if tie_rule == "one" else 0
    return majority, tied


def combine_judgments(
    paths: Sequence[Path],
    items: Sequence[JudgedItem],
    *,
    tie_rule: str = "automatic",
    bootstrap_resamples: int | None = 1000,
    seed: int | None = 42,
    sheet_keys: Mapping[str, Sequence[int]] | None = None,
) -> JudgingOutcome:
    """Read every judge's file, check them, take the majority and recompute the GMET scores.

    With ``sheet_keys`` (blind sheets), an item whose model proposed no word has no sheet
    row and is wrong for every judge.
    """
    from nlue.scores import score_task

    if not paths:
        raise NlueError("give at least one judgment file")
    ids = [item.id for item in items]
    problems: list[RowProblem] = []
    per_judge = [read_judgments(Path(path), ids, problems, sheet_keys) for path in paths]
    if problems:
        raise JudgmentFileError(problems)
    names = judge_names(paths)
    ratings = np.array([[verdicts.get(i, 0) for verdicts in per_judge] for i in ids], dtype=np.int64)
    automatic = [item.automatic for item in items]
    majority, tied = majority_vote(ratings, automatic, tie_rule)
    stats = agreement(ratings)
    if all(a is not None for a in automatic):
        auto = np.asarray(automatic, dtype=np.int64)
        automatic_agreement = {"kappa": cohen_kappa(majority, auto), "same_verdict": float((majority == auto).mean())}
    else:
        automatic_agreement = {"kappa": None, "same_verdict": None}
    disagreements = []
    for row, item in enumerate(items):
        if len(set(ratings[row].tolist())) > 1:
            disagreements.append(
                {
                    "id": item.id,
                    "category": item.category,
                    "sentence": item.sentence,
                    "prediction": item.prediction,
                    **{name: int(ratings[row, j]) for j, name in enumerate(names)},
                    "majority": int(majority[row]),
                    "tie": bool(tied[row]),
                    "automatic": item.automatic,
                }
            )
    metrics = score_task(
        "gmet",
        [item.prediction for item in items],
        majority.tolist(),
        categories=[item.category for item in items],
        bootstrap_resamples=bootstrap_resamples or None,
        seed=seed,
    )
    return JudgingOutcome(
        judges=names,
        items=list(items),
        ratings=ratings,
        majority=majority,
        ties=[item.id for item, t in zip(items, tied.tolist(), strict=True) if t],
        tie_rule=tie_rule,
        agreement=stats,
        automatic_agreement=automatic_agreement,
        disagreements=disagreements,
        metrics=metrics,
    )
