"""The boards of tasks no paper printed: a user's task files, one table per task, its own primary metric.

A task declared in a user's task file (``nlue tasks new``, ``--task-file``) belongs to no paper: its
runs are never put in the NLUE paper's tables, the exams' or neDIOM's, and never enter the NLUE score
(:func:`nlue.registry.benchmarks.is_shipped_task` tells the two apart). Each such task gets a board of
its own, read from the same results folders as the papers' boards:

* one row per results file of the task (a run folder): the run, the model, its kind and how a language
  model was asked (``zero-shot · log-likelihood · 0-shot · ur prompt``), the data (sample data flagged) and
  the check;
* every metric the task file declares, in percent with its 95% interval where the run has one, the
  task's primary metric first and marked as the task file's choice;
* runs whose scores are what their per-item predictions give (✓ recomputed) first, by the primary
  metric; unverified runs (no predictions) after them; runs whose scores disagree are left out and
  listed with the reason (:mod:`nlue.boards.score_checks`), as on every other board.

A results file whose task is not registered (its task file was not given) cannot be scored or shown;
the NLUE board lists it with the reason. The Space's leaderboard (its "Your tasks" section) and
``nlue report`` both read these boards.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nlue.boards.score_checks import UNVERIFIED_CELL, VERIFIED_CELL, check_results_file, is_refused, is_unverified
from nlue.boards.table import TableBoard, data_label, interval_text
from nlue.boards.text import languages_text
from nlue.errors import NlueError
from nlue.evals.run_groups import setting_key
from nlue.registry.benchmarks import declared_tasks, is_shipped_task
from nlue.registry.spec import TaskSpec
from nlue.registry.tasks import TASKS
from nlue.results_folders import FoundResults, ResultsFolder, gather_results
from nlue.text.safe import markdown_text

logger = logging.getLogger(__name__)

RUN_COLUMNS: tuple[str, ...] = ("run", "model", "kind", "data", "check")


def primary_column(task: TaskSpec) -> str:
    return f"{task.primary_metric} (primary)"


def interval_column(metric: str) -> str:
    return f"{metric} 95% CI"


def metric_columns(task: TaskSpec) -> tuple[str, ...]:
    """The task's metric columns: its primary metric and interval first, then every other metric it declares."""
    others = [m for m in task.metrics if m != task.primary_metric]
    columns = [primary_column(task), interval_column(task.primary_metric)]
    for metric in others:
        columns += [metric, interval_column(metric)]
    return tuple(columns)


@dataclass(frozen=True)
class RunScore:
    """One run's primary metric (0-1 scale) and interval, for the task's chart."""

    run: str
    score: float
    interval: tuple[float, float] | None
    unverified: bool
    sample: bool


@dataclass
class TaskRuns:
    """One declared task's board: its rows (a table), the primary scores for the chart, and what was left out."""

    task: TaskSpec
    board: TableBoard
    scores: list[RunScore] = field(default_factory=list)

    @property
    def sample(self) -> bool:
        return any(score.sample for score in self.scores)

    def legend(self) -> str:
        """What the table shows, in Markdown: the task, its language, kind and primary metric, and the columns."""
        task = self.task
        where = f" ({markdown_text(task.task_file)})" if task.task_file else ""
        return (
            f"**{markdown_text(task.title)}** · {markdown_text(task.name)} · {task.kind.name} · language: "
            f"{languages_text(task)} · benchmark {markdown_text(task.benchmark)}, declared in a task file{where}; no "
            f"paper printed it. Primary metric: {markdown_text(task.primary_note)}. Scores in percent; *95% CI*: the "
            "run's bootstrap interval. "
            "*kind*: the run's kind, and how a language model was asked (mode, shots, prompt language). "
            f"*check*: {VERIFIED_CELL} when the scores are what the run's per-item predictions give; unverified "
            "runs (no predictions) come after the checked ones; runs whose scores disagree are left out."
        )


@dataclass
class DeclaredBoards:
    """Every declared task's board, and the results files that no board could show (with the reason)."""

    tasks: list[TaskRuns]
    skipped: list[str] = field(default_factory=list)

    def of(self, name: str) -> TaskRuns | None:
        return next((runs for runs in self.tasks if runs.task.name == name), None)


def _percent(value: Any) -> float | None:
    number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return round(100.0 * float(value), 2) if number else None


def _interval(metrics: Mapping[str, Any], metric: str) -> tuple[float, float] | None:
    low, high = metrics.get(f"{metric}_ci_low"), metrics.get(f"{metric}_ci_high")
    if _percent(low) is None or _percent(high) is None:
        return None
    return float(low), float(high)


def _interval_text(interval: tuple[float, float] | None) -> str:
    return interval_text(*interval) if interval else ""


def _row(task: TaskSpec, found: FoundResults) -> tuple[dict[str, Any], RunScore]:
    """One results file of ``task`` as a row and its chart entry; NlueError says what is wrong with it."""
    data = found.data
    metrics = data.get("metrics")
    if not isinstance(metrics, Mapping) or not metrics:
        raise NlueError("its `metrics` is not a mapping of metric names to numbers")
    numbers = {str(k): float(v) for k, v in metrics.items() if _percent(v) is not None}
    if task.primary_metric not in numbers and metrics.get(task.primary_metric, 0) is None:
        raise NlueError(f"its primary metric {task.primary_metric} is null (not computed)")
    score = task.primary_from(numbers)  # a derived primary (a mean of two metrics) where the file lacks it
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    row: dict[str, Any] = {
        "run": found.run,
        "model": str(data.get("model") or "unknown model"),
        "kind": " · ".join(filter(None, [str(data.get("kind") or "unknown"), setting_key(data)])),
        "data": data_label(dataset),
        primary_column(task): _percent(score),
        interval_column(task.primary_metric): _interval_text(_interval(numbers, task.primary_metric)),
    }
    for metric in (m for m in task.metrics if m != task.primary_metric):
        row[metric] = _percent(numbers.get(metric))
        row[interval_column(metric)] = _interval_text(_interval(numbers, metric))
    interval = _interval(numbers, task.primary_metric)
    return row, RunScore(found.run, score, interval, False, bool(dataset.get("is_sample")))


def _ranked(rows: list[tuple[dict[str, Any], RunScore]]) -> list[tuple[dict[str, Any], RunScore]]:
    """Checked runs by the primary metric (highest first), then the unverified ones the same way."""
    return sorted(rows, key=lambda pair: (pair[1].unverified, -pair[1].score))


def declared_boards(folders: Sequence[ResultsFolder]) -> DeclaredBoards:
    """The board of every registered declared task (in registry order) from the runs in ``folders``."""
    tasks = declared_tasks()
    found: dict[str, list[tuple[dict[str, Any], RunScore]]] = {task.name: [] for task in tasks}
    skipped: list[str] = []
    for result in gather_results(folders):
        where = f"{result.run}/{result.path.name}"
        task = TASKS.get(str(result.data.get("task")))
        if task is None or is_shipped_task(task):
            continue  # a paper's task is on that paper's board; the NLUE board lists a task not registered
        try:
            row, score = _row(task, result)
        except (NlueError, ValueError, TypeError) as exc:
            logger.warning("declared tasks: skipping %s: %s", result.path, exc)
            skipped.append(f"{where}: {exc}")
            continue
        check = check_results_file(result.path, result.data)
        if is_refused(check):
            logger.warning("declared tasks: leaving out %s: %s", result.path, check.reason)
            skipped.append(f"{where}: left out: {check.reason}")
            continue
        unverified = is_unverified(check)
        row["check"] = UNVERIFIED_CELL if unverified else VERIFIED_CELL
        found[task.name].append((row, RunScore(score.run, score.score, score.interval, unverified, score.sample)))
    boards = []
    for task in tasks:
        ranked = _ranked(found[task.name])
        columns = (*RUN_COLUMNS, *metric_columns(task))
        boards.append(TaskRuns(task, TableBoard(columns, [row for row, _ in ranked]), [s for _, s in ranked]))
    return DeclaredBoards(boards, skipped)
