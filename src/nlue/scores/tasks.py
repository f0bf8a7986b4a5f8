"""Score predictions for a task named in the registry: the entry points the metric modules call.

The registry (:mod:`nlue.registry.tasks`) decides how a task is scored: its problem type picks
the scorer, its label ids are the classes macro-F1 averages over, and its metric names
are the keys of the result. Every function here returns plain Python floats (nested
dicts only for per-category GMET accuracy), each metric optionally followed by its
``<metric>_ci_low`` / ``<metric>_ci_high`` bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.registry.tasks import TaskSpec, get_task
from nlue.scoring.bootstrap import DEFAULT_CONFIDENCE_LEVEL, DEFAULT_SEED, scores_with_intervals
from nlue.scoring.classification import classification_problem, observed_labels
from nlue.scoring.gmet import category_accuracy
from nlue.scoring.problem import ScoringProblem
from nlue.scoring.regression import regression_problem
from nlue.scoring.significance import DEFAULT_TEST_RESAMPLES, PairedComparison, TestMethod, paired_test


def build_problem(
    task: str | TaskSpec, predictions: Any, references: Any, categories: Sequence[str] | None = None
) -> tuple[ScoringProblem, tuple[str, ...]]:
    """Validate inputs for ``task`` and return its scoring problem (plus category names, for GMET).

    ``task`` is a registered task's name, or a task itself (one loaded from a task file and not registered,
    as the ``nlue`` evaluate module does). The task's kind decides how its inputs are read
    (:meth:`nlue.registry.kinds.TaskKind.scoring_problem`).
    """
    spec = task if isinstance(task, TaskSpec) else get_task(task)
    return spec.kind.scoring_problem(spec, predictions, references, categories)


def score_task(
    task: str | TaskSpec,
    predictions: Any,
    references: Any,
    *,
    categories: Sequence[str] | None = None,
    bootstrap_resamples: int | None = None,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    seed: int | None = DEFAULT_SEED,
) -> dict[str, Any]:
    """Every metric of a registry task, as the NLUE paper reports it.

    Args:
        task: a registered task's name (:data:`nlue.registry.tasks.TASKS`), or a task loaded from a task file.
        predictions: label ids (classification), scores (stsb) or predicted words (gmet).
        references: gold label ids, gold scores, or for gmet either each item's list of
            acceptable words or a 0/1 human judgment of each prediction.
        categories: gmet only, the category of each item.
        bootstrap_resamples: when given, add a percentile-bootstrap interval to every metric.
        confidence_level: coverage of those intervals.
        seed: seed of the resampling.

    Returns:
        classification: accuracy, macro_f1; stsb: pearson, spearman, pearson_spearman_mean,
        r2; gmet: accuracy, equality, combined, sigma and the dict category_accuracy. Each
        float metric ``m`` is followed by ``m_ci_low`` and ``m_ci_high`` when resampling.
    """
    problem, category_names = build_problem(task, predictions, references, categories)
    scores: dict[str, Any] = scores_with_intervals(problem, None, bootstrap_resamples, confidence_level, seed)
    if category_names:
        scores["category_accuracy"] = category_accuracy(problem, category_names)
    return scores


def score_macro_f1(
    predictions: Any,
    references: Any,
    *,
    task: str | None = None,
    labels: Sequence[int] | None = None,
    bootstrap_resamples: int | None = None,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    seed: int | None = DEFAULT_SEED,
) -> dict[str, float]:
    """Macro-F1 over the labels of an NLUE ``task``, over explicit ``labels``, or else over the ids seen."""
    if task is not None:
        spec = get_task(task)
        if not spec.is_classification:
            raise NlueError(f"task {task!r} is not a classification task; macro-F1 needs class labels")
        if labels is not None and list(labels) != list(range(spec.num_labels)):
            raise NlueError(
                f"labels {list(labels)} disagree with task {task!r}, whose ids are 0..{spec.num_labels - 1}"
            )
        labels, owner = list(range(spec.num_labels)), f"task {task!r}"
    elif labels is not None:
        owner = "the given labels"
    else:
        labels, owner = observed_labels(predictions, references), "the labels seen"
    problem = classification_problem(predictions, references, labels, owner)
    return scores_with_intervals(problem, ("macro_f1",), bootstrap_resamples, confidence_level, seed)


def score_r_squared(
    predictions: Any,
    references: Any,
    *,
    bootstrap_resamples: int | None = None,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    seed: int | None = DEFAULT_SEED,
) -> dict[str, float]:
    """R² of raw predicted scores against reference scores."""
    problem = regression_problem(predictions, references, ("r2",))
    return scores_with_intervals(problem, None, bootstrap_resamples, confidence_level, seed)


def seed_mean_problem(task: str, predictions_by_seed: Any, references: Any) -> ScoringProblem:
    """Predictions of several training seeds (items x seeds) as one problem whose metrics are the seeds' mean.

    Items, not seeds, are what a bootstrap or a paired test resamples: each resampled item keeps all its
    seeds' predictions, so an interval is about the test items and the spread over seeds stays inside it.
    """
    table = np.asarray(predictions_by_seed)
    if table.ndim != 2 or table.shape[1] < 1:
        raise NlueError(f"predictions by seed must be items x seeds, got shape {table.shape}")
    first, _ = build_problem(task, table[:, 0], references)
    codes = np.stack([build_problem(task, table[:, s], references)[0].outputs for s in range(table.shape[1])], axis=-1)

    def mean_over_seeds(outputs: np.ndarray, refs: np.ndarray | None) -> dict[str, np.ndarray]:
        runs = [first.statistic(outputs[..., s], refs) for s in range(outputs.shape[-1])]
        return {name: np.mean([run[name] for run in runs], axis=0) for name in first.metrics}

    return ScoringProblem(codes, first.references, mean_over_seeds, first.metrics, value_range=first.value_range)


def compare_systems(
    task: str,
    predictions_a: Any,
    predictions_b: Any,
    references: Any,
    *,
    categories: Sequence[str] | None = None,
    metric: str | None = None,
    method: TestMethod = "permutation",
    resamples: int = DEFAULT_TEST_RESAMPLES,
    seed: int | None = 0,
) -> PairedComparison:
    """Paired significance test of two systems on the same items of ``task`` (default: its primary metric)."""
    problem_a, _ = build_problem(task, predictions_a, references, categories)
    problem_b, _ = build_problem(task, predictions_b, references, categories)
    chosen = metric or get_task(task).primary_metric
    return paired_test(problem_a, problem_b, chosen, method=method, resamples=resamples, seed=seed)
