"""The NLUE score: one number per model, the mean of each task's primary metric.

Primary metrics come from the registry (macro-F1 for classification, the mean of
Pearson and Spearman for STS-B, the combined score for GMET). A submission that lacks
some tasks still gets a score over the tasks it has, but the result says which tasks
are missing and whether it is complete, so that a partial mean is never mistaken for
(or ranked against) a full one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from nlue.errors import NlueError
from nlue.registry.tasks import TASK_NAMES, get_task


@dataclass(frozen=True)
class NlueScore:
    """A model's NLUE score and what it was computed from.

    Attributes:
        score: mean primary metric over the tasks present (0-1 scale); None when no task is present.
        task_scores: the primary metric used for each task present, in registry order.
        missing: tasks expected but absent, in registry order.
    """

    score: float | None
    task_scores: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    missing: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """True only when every expected task contributed to the score."""
        return not self.missing and self.score is not None

    def as_dict(self) -> dict[str, object]:
        return {
            "score": self.score,
            "complete": self.complete,
            "missing": list(self.missing),
            "task_scores": dict(self.task_scores),
        }


def primary_score(task: str, metrics: Mapping[str, float]) -> float:
    """The registry's primary metric of ``task`` from a dict of its metrics (see TaskSpec.primary_from)."""
    return get_task(task).primary_from(metrics)


def _defined_primary(task: str, metrics: Mapping[str, float | None]) -> float | None:
    """The primary score, or None when it is null (could not be computed) or not a finite number."""
    try:
        value = primary_score(task, metrics)
    except TypeError:  # float(None): a null metric
        return None
    return value if math.isfinite(value) else None


def nlue_score(results: Mapping[str, Mapping[str, float]], tasks: Iterable[str] = TASK_NAMES) -> NlueScore:
    """Mean primary metric of a model over ``tasks`` (default: all twelve NLUE tasks).

    ``results`` maps task names to metric dicts, such as the output of
    :func:`nlue.scores.score_task` or a row of ``TaskSpec.paper_results``.
    """
    expected = [get_task(name).name for name in tasks]
    unknown = [name for name in results if name not in TASK_NAMES]
    if unknown:
        raise NlueError(f"unknown NLUE task(s) in results: {', '.join(unknown)}; expected: {', '.join(TASK_NAMES)}")
    outside = [name for name in results if name not in expected]
    if outside:
        raise NlueError(f"results hold task(s) outside the ones scored ({', '.join(expected)}): {', '.join(outside)}")
    # A task whose primary metric could not be computed (null in its results file) counts as missing.
    defined = {name: _defined_primary(name, results[name]) for name in expected if name in results}
    task_scores = {name: value for name, value in defined.items() if value is not None}
    missing = tuple(name for name in expected if name not in task_scores)
    score = sum(task_scores.values()) / len(task_scores) if task_scores else None
    return NlueScore(score, MappingProxyType(task_scores), missing)
