"""Do two runs differ? Paired tests on the items both were scored on, task by task (``nlue compare``).

A *run* is a results folder (``<results_dir>/<name>/``): one results file per task, each pointing to
its per-item predictions (:mod:`nlue.predictions`). For every pair of runs and every task both have:

* the runs must have been scored on the same items with the same answers: each item's id, input
  fingerprint and gold must match (the order may differ). Otherwise the pair is refused for that
  task, naming both runs, how many items differ and the two datasets' fingerprints;
* the difference A - B of the task's primary metric (macro-F1, the exams' accuracy over all items,
  GMET's combined score, ..., or the one a user's task file names; never the one a results file claims),
  recomputed from the predictions by the task's kind, with a 95% paired bootstrap interval and p-value: items are
  resampled once per draw and both runs scored on the same draw
  (:func:`nlue.scoring.significance.paired_test`); the p-value is the interval's own (twice the smaller
  share of resampled differences on one side of 0), so p < 0.05 exactly when the 95% interval leaves 0 out;
* the exact McNemar test on accuracy where each item is right or wrong: the items only one of the
  two got right (a regression task has none; runs over several seeds have no single answer per item);
* Holm's correction across the pair's tasks, for each of the two tests, so that reading a table of
  many tasks keeps the chance of any false "different" at the level asked for.

None of this is in the papers, which report no test of a difference between models.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.predictions import read_predictions
from nlue.registry.kinds.multiple_choice import MultipleChoiceKind
from nlue.registry.tasks import TaskSpec, get_task
from nlue.results import NOT_RESULTS, read_results
from nlue.results_files import predictions_file

logger = logging.getLogger(__name__)

DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True)
class RunTask:
    """One task of one run: its results file and per-item rows."""

    run: str
    path: Path
    result: Mapping[str, Any]
    rows: list[dict[str, Any]]


def _refuse_unreadable(path: Path, reason: str) -> None:
    """A run folder's file that cannot be read stops the comparison (a JSON file that is no run does not)."""
    if not reason.startswith(NOT_RESULTS):
        raise NlueError(f"{path}: not a readable results file: {reason}")


def load_run(folder: Path) -> dict[str, RunTask]:
    """The tasks of one run folder that have per-item predictions; a clear error for a folder without any.

    The results files directly in the folder, as :func:`nlue.results.read_results` reads them (a file
    that cannot be read is logged and left out, as everywhere results are read).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise NlueError(
            f"{folder}: no such run folder (give <results-dir>/<name>, as `nlue llm` or `nlue train` wrote)"
        )
    found: dict[str, RunTask] = {}
    for path, result in read_results(folder, on_skip=_refuse_unreadable):  # bounded in size and depth
        if path.parent != folder:
            continue  # a folder inside the run (a checkpoint's) is not this run
        if not result.get("predictions"):
            logger.warning("%s: no per-item predictions (written by an older nlue?): left out of the comparison", path)
            continue
        rows = predictions_file(path, result)
        if rows is None:
            raise NlueError(f"{path}: its predictions {str(result['predictions'])[:200]!r} is no file beside it")
        key = path.name.removesuffix(".json")  # gmet and gmet.human are compared apart
        found[key] = RunTask(str(folder), path, result, read_predictions(rows))
    if not found:
        raise NlueError(f"{folder}: no results file with per-item predictions to compare")
    return found


def aligned(a: RunTask, b: RunTask) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both runs' rows in the same item order; refuse runs scored on different items or answers."""
    key = lambda row: (json.dumps(row["id"]), row["input_sha256"], json.dumps(row["gold"], sort_keys=True))  # noqa: E731
    by_key = {key(row): row for row in b.rows}
    missing = [row for row in a.rows if key(row) not in by_key]
    if missing or len(a.rows) != len(b.rows) or len(by_key) != len(b.rows):
        fingerprints = (a.result.get("dataset", {}).get("fingerprint"), b.result.get("dataset", {}).get("fingerprint"))
        raise NlueError(
            f"{a.path} and {b.path} were scored on different items: {len(a.rows)} and {len(b.rows)} items, "
            f"{len(missing)} of the first not in the second (id, input or gold differ); dataset fingerprints "
            f"{str(fingerprints[0])[:12]} and {str(fingerprints[1])[:12]}. Compare runs on the same data and split"
        )
    return a.rows, [by_key[key(row)] for row in a.rows]


@dataclass(frozen=True)
class UndefinedCorrelations:
    """The scores of a run by generation with fewer than 2 answers that parse as a number: every regression metric
    undefined (NaN), as :mod:`nlue.evals.llm.number_generation` stored them, rather than an error."""

    n_items: int

    @property
    def metrics(self) -> tuple[str, ...]:
        from nlue.scoring.regression import REGRESSION_METRICS

        return REGRESSION_METRICS

    def point_estimates(self) -> dict[str, float]:
        return dict.fromkeys(self.metrics, float("nan"))


def scoring_problem(task: TaskSpec, rows: Sequence[Mapping[str, Any]]) -> Any:
    """The run's rows as a scoring problem of the task's metrics (invalid LLM answers count as wrong)."""
    from nlue.evals.llm.label_generation import generation_problem
    from nlue.scores.tasks import build_problem, seed_mean_problem

    predictions = [row["prediction"] for row in rows]
    golds = [row["gold"] for row in rows]
    if any(isinstance(p, list) for p in predictions):  # several training seeds: their mean, item by item
        return seed_mean_problem(task.name, predictions, golds)
    if any(p is None for p in predictions) and not isinstance(task.kind, MultipleChoiceKind):
        if not task.kind.has_classes:  # a score by generation (stsb): no number to correlate in an invalid answer,
            # so, as the run scored it (nlue.evals.llm.number_generation), correlations over the parsed answers
            kept = [(p, g) for p, g in zip(predictions, golds, strict=True) if p is not None]
            if len(kept) < 2:  # no correlation: the run stored its metrics as undefined (null, with the reason)
                return UndefinedCorrelations(len(kept))
            return build_problem(task.name, [p for p, _ in kept], [g for _, g in kept])[0]
        return generation_problem(predictions, golds, len(task.label_names))
    categories = [row.get("category") for row in rows] if task.categories else None
    return build_problem(task.name, predictions, golds, categories)[0]


def _correct(rows: Sequence[Mapping[str, Any]]) -> np.ndarray | None:
    """Whether each item was answered right, where that is defined (not for scores or runs over seeds)."""
    out = []
    for row in rows:
        prediction, gold = row["prediction"], row["gold"]
        if isinstance(prediction, list | float) or isinstance(gold, float):
            return None
        verdict = row.get("verdict")
        out.append(bool(verdict) if isinstance(verdict, int) and isinstance(gold, list) else prediction == gold)
    return np.asarray(out, dtype=bool)


@dataclass
class TaskComparison:
    task: str
    run_a: str
    run_b: str
    metric: str
    score_a: float
    score_b: float
    difference: float
    ci_low: float | None
    ci_high: float | None
    p_value: float
    p_holm: float | None = None
    right_only_a: int | None = None
    right_only_b: int | None = None
    mcnemar_p: float | None = None
    mcnemar_p_holm: float | None = None
    items: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_task(a: RunTask, b: RunTask, resamples: int, seed: int) -> TaskComparison:
    from nlue.scoring.significance import mcnemar_exact, paired_test

    task = get_task(str(a.result["task"]))
    rows_a, rows_b = aligned(a, b)
    # The task's own primary metric (its task file's), never the one a results file claims: the file is input.
    metric = task.primary_metric
    for run in (a, b):
        claimed = run.result.get("primary_metric")
        if claimed and claimed != metric:
            logger.warning("%s says its primary metric is %s; %s's is %s, which is compared", run.path,
                           str(claimed)[:80], task.name, metric)  # fmt: skip
    if not task.kind.has_classes:  # scores by generation: a pair needs a number from both runs
        both = [i for i, (x, y) in enumerate(zip(rows_a, rows_b, strict=True))
                if x["prediction"] is not None and y["prediction"] is not None]  # fmt: skip
        if len(both) < len(rows_a):
            logger.warning("%s: %d of %d items left out of the comparison: an answer with no number in one run or "
                           "both", task.name, len(rows_a) - len(both), len(rows_a))  # fmt: skip
            rows_a, rows_b = [rows_a[i] for i in both], [rows_b[i] for i in both]
        if len(both) < 2:
            raise NlueError(f"{task.name}: {len(both)} items have a number from both runs; a correlation needs 2")
    problem_a, problem_b = scoring_problem(task, rows_a), scoring_problem(task, rows_b)
    test = paired_test(problem_a, problem_b, metric, method="bootstrap", resamples=resamples, seed=seed)
    comparison = TaskComparison(
        task=a.path.name.removesuffix(".json"), run_a=a.run, run_b=b.run, metric=metric, score_a=test.score_a,
        score_b=test.score_b, difference=test.difference, ci_low=test.ci_low, ci_high=test.ci_high,
        p_value=test.p_value, items=len(rows_a),
    )  # fmt: skip
    right_a, right_b = _correct(rows_a), _correct(rows_b)
    if right_a is not None and right_b is not None:
        comparison.right_only_a = int(np.count_nonzero(right_a & ~right_b))
        comparison.right_only_b = int(np.count_nonzero(right_b & ~right_a))
        comparison.mcnemar_p = mcnemar_exact(comparison.right_only_a, comparison.right_only_b)
    return comparison


def compare_runs(
    folders: Sequence[Path], tasks: Sequence[str] | None = None, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> list[TaskComparison]:
    """Every pair of runs on every task both have (or ``tasks``), with Holm's correction per pair."""
    from nlue.scoring.significance import holm

    if len(folders) < 2:
        raise NlueError("give at least two runs to compare")
    runs = [load_run(folder) for folder in folders]
    out: list[TaskComparison] = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            shared = [t for t in runs[i] if t in runs[j] and (not tasks or t.split(".")[0] in tasks)]
            if not shared:
                raise NlueError(f"{folders[i]} and {folders[j]} share no task with per-item predictions")
            family = [compare_task(runs[i][t], runs[j][t], resamples, seed) for t in shared]
            for comparison, adjusted in zip(family, holm([c.p_value for c in family]), strict=True):
                comparison.p_holm = adjusted
            with_mcnemar = [c for c in family if c.mcnemar_p is not None]
            for comparison, adjusted in zip(with_mcnemar, holm([c.mcnemar_p for c in with_mcnemar]), strict=True):
                comparison.mcnemar_p_holm = adjusted
            out.extend(family)
    return out
