"""The leaderboard's rows: the paper's reported results beside every run in the results folder.

Paper rows come from the registry (``TaskSpec.paper_results``, the paper's tables 2-5, kept
as printed, with the flags of :mod:`nlue.registry.paper_checks`). Results files
(:mod:`nlue.results`) are grouped by the folder they were written to,
``<results_dir>/<model slug>/<task>.json``: one row per model, one score per task (the
newest file wins when a task was scored twice). GMET scores keep how their verdicts were
reached: human-judged ones (comparable with the paper's) and automatic ones (exact match
with listed answers) are held apart, and only judged ones enter the NLUE score. Rows of
kind "diagnostic" never get an NLUE score. Every score is recomputed from its per-item
predictions first (:mod:`nlue.boards.score_checks`): a file whose stored scores disagree, or lie
outside their metric's range, is left out with its reason; a file without predictions is shown
as unverified and ranked after the checked rows. A file that cannot be used costs its own row
and is reported with the reason, never fatal: an empty or missing folder gives the paper rows alone.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nlue.boards import columns as cols
from nlue.boards.score_checks import PAPER_CELL, check_cell, check_results_file, is_refused, is_unverified
from nlue.boards.table import SAMPLE_DATA_LABEL, interval_text
from nlue.errors import NlueError
from nlue.evals.verify import judged_by_people
from nlue.lm.slug import model_slug
from nlue.registry.paper import PAPER_MODELS, paper_model
from nlue.registry.paper_checks import PaperFlag
from nlue.registry.tasks import TASK_NAMES, TASKS, get_task
from nlue.results import read_results
from nlue.scores import NlueScore, nlue_score, primary_score

logger = logging.getLogger(__name__)

PAPER_KIND = "paper"
DIAGNOSTIC_KIND = "diagnostic"
KNOWN_KINDS: tuple[str, ...] = (PAPER_KIND, "fine-tune", "zero-shot", "baseline", DIAGNOSTIC_KIND)
AUTOMATIC, HUMAN = "automatic", "human"
MODE_NAMES = {"generate": "generation", "loglik": "log-likelihood"}


@dataclass(frozen=True)
class LeaderboardRow:
    """One model: its primary score per task (0-1), intervals where known, and its NLUE score."""

    model: str
    kinds: tuple[str, ...]
    data: str
    task_scores: Mapping[str, float]  # primary metric per task; judged tasks (GMET) by people only
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    params_millions: float | None = None
    files: tuple[str, ...] = ()
    automatic_scores: Mapping[str, float] = field(default_factory=dict)  # GMET by exact match
    metrics: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # every metric, per task
    automatic_metrics: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    flags: tuple[PaperFlag, ...] = ()
    sds: Mapping[str, float] = field(default_factory=dict)  # primary metric's sd over training seeds, per task
    source: str = "local"  # paper, submitted (a Hub results repo) or local (nlue.space.results_source)
    modes: tuple[str, ...] = ()  # how a language model answered: generate, loglik (none for other kinds)
    base_model: str | None = None  # the one base model the run's files name, if they name exactly one
    check: str = PAPER_CELL  # whether its scores were recomputed from their predictions (nlue.boards.score_checks)
    unverified: bool = False  # a score without predictions to recompute it from: ranked after checked rows

    @property
    def kind(self) -> str:
        """The kinds, and for language-model runs the mode, so that the two modes are never shown unmarked."""
        kind = " + ".join(self.kinds)
        return f"{kind} · {' + '.join(MODE_NAMES.get(m, m) for m in self.modes)}" if self.modes else kind

    @property
    def is_diagnostic(self) -> bool:
        return DIAGNOSTIC_KIND in self.kinds

    @property
    def nlue(self) -> NlueScore:
        if self.is_diagnostic:  # a diagnostic saw the answers: it never gets a score
            return NlueScore(None, missing=tuple(TASK_NAMES))
        return nlue_score({t: {TASKS[t].primary_metric: s} for t, s in self.task_scores.items()})


@dataclass
class Leaderboard:
    rows: list[LeaderboardRow]
    skipped: list[str] = field(default_factory=list)  # "file: reason" for every results file left out

    @property
    def kinds(self) -> list[str]:
        found = {k for row in self.rows for k in row.kinds}
        return [*KNOWN_KINDS, *sorted(found - set(KNOWN_KINDS))]

    def row(self, model: str) -> LeaderboardRow | None:
        return next((r for r in self.rows if r.model == model), None)


def paper_rows() -> list[LeaderboardRow]:
    """The ten encoders of the paper with their reported test scores."""
    rows = []
    for model in PAPER_MODELS:
        scores = {}
        for name, task in ((n, TASKS[n]) for n in TASK_NAMES):
            value = task.paper_primary_score(model.name)
            if value is not None:
                scores[name] = value
        rows.append(
            LeaderboardRow(
                model=model.name,
                kinds=(PAPER_KIND,),
                source=PAPER_KIND,
                data="NLUE test sets",
                task_scores=scores,
                params_millions=float(model.params_millions),
                metrics={name: dict(TASKS[name].paper_results[model.name]) for name in TASK_NAMES},
                flags=tuple(flag for name in TASK_NAMES for flag in TASKS[name].paper_flags.get(model.name, ())),
            )
        )
    return rows


def _verdicts(task: str, data: Mapping[str, Any]) -> str | None:
    """For tasks the paper scored by human verdicts (GMET): how this file's verdicts were reached.

    Files written before ``verdicts`` existed say it in ``details.verdicts``; anything not
    stated as human counts as automatic.
    """
    if task not in cols.JUDGED_TASKS:
        return None
    return HUMAN if judged_by_people(data) else AUTOMATIC


@dataclass(frozen=True)
class _Run:
    task: str
    kind: str
    score: float
    interval: tuple[float, float] | None
    metrics: Mapping[str, float]
    verdicts: str | None
    is_sample: bool
    dataset: str
    base_model: str | None
    created: str
    path: Path
    mode: str | None = None
    sd: float | None = None  # over training seeds, when the run had several
    unverified: bool = False  # no per-item predictions to recompute its scores from


def _parse_run(path: Path, data: Mapping[str, Any]) -> _Run:
    """One results file, checked; ValueError names what is wrong with it."""
    task = get_task(str(data.get("task"))).name
    metrics = data.get("metrics")
    if not isinstance(metrics, Mapping) or not metrics:
        raise NlueError("its `metrics` is not a mapping of metric names to numbers")
    numbers: dict[str, float] = {}
    primary = TASKS[task].primary_metric
    for name, value in metrics.items():
        if value is None or value != value:  # null or NaN: a metric that could not be computed
            if name == primary:  # the file's details.null_metrics says why; the task has no score to show
                details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
                nulls = details.get("null_metrics") if isinstance(details.get("null_metrics"), Mapping) else {}
                reason = nulls.get(name, "not computed, or a non-finite value")
                raise NlueError(f"its primary metric {name} is {value} ({reason!s:.200})")
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise NlueError(f"metric {name!r} is {value!r:.40}, not a number")
        numbers[str(name)] = float(value)
    score = primary_score(task, numbers)
    low, high = numbers.get(f"{primary}_ci_low"), numbers.get(f"{primary}_ci_high")
    interval = (low, high) if low is not None and high is not None and math.isfinite(low + high) else None
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    params = data.get("hyperparameters") if isinstance(data.get("hyperparameters"), Mapping) else {}
    return _Run(
        task=task,
        kind=str(data.get("kind") or "unknown"),
        score=score,
        interval=interval,
        metrics={k: v for k, v in numbers.items() if not k.endswith(("_ci_low", "_ci_high"))},
        verdicts=_verdicts(task, data),
        is_sample=bool(dataset.get("is_sample", False)),
        dataset=str(dataset.get("id") or "unknown data"),
        base_model=str(data["base_model"]) if data.get("base_model") else None,
        created=str(data.get("created") or ""),
        path=path,
        mode=str(params["mode"]) if params.get("mode") else None,
        sd=numbers.get(f"{primary}_sd") if len((data.get("details") or {}).get("seeds") or ()) > 1 else None,
    )


def _row_from_runs(model: str, runs: Sequence[_Run], refused: Sequence[_Run] = ()) -> LeaderboardRow:
    """A model's row from its usable runs; ``refused`` runs (scores not what their predictions give) are only named."""
    latest: dict[tuple[str, bool], _Run] = {}  # (task, scored automatically where the paper had judges)
    for run in sorted(runs, key=lambda r: r.created):
        latest[(run.task, run.verdicts == AUTOMATIC)] = run
    judged = [latest[(t, False)] for t in TASK_NAMES if (t, False) in latest]
    automatic = [latest[(t, True)] for t in TASK_NAMES if (t, True) in latest]
    chosen = judged + automatic
    shown = chosen or list(refused)  # a row whose every file was refused still says what it was
    data = SAMPLE_DATA_LABEL if any(r.is_sample for r in shown) else ", ".join(sorted({r.dataset for r in shown}))
    bases = {r.base_model for r in chosen if r.base_model}
    base = bases.pop() if len(bases) == 1 else None
    known = paper_model(base)

    def header(run: _Run) -> str:
        return cols.task_header(TASKS[run.task]) + (" auto" if run.verdicts == AUTOMATIC else "")

    unverified = [header(r) for r in chosen if r.unverified]
    return LeaderboardRow(
        model=model,
        kinds=tuple(sorted({r.kind for r in shown})),
        data=data,
        task_scores={r.task: r.score for r in judged},
        intervals={r.task: r.interval for r in judged if r.interval},
        params_millions=float(known.params_millions) if known else None,
        files=tuple(str(r.path) for r in chosen),
        automatic_scores={r.task: r.score for r in automatic},
        metrics={r.task: dict(r.metrics) for r in judged},
        automatic_metrics={r.task: dict(r.metrics) for r in automatic},
        modes=tuple(sorted({r.mode for r in chosen if r.mode})),
        sds={r.task: r.sd for r in judged if r.sd is not None},
        base_model=base,
        check=check_cell(unverified, [header(r) for r in sorted(refused, key=lambda r: TASK_NAMES.index(r.task))]),
        unverified=bool(unverified),
    )


def result_rows(results_dir: Path) -> Leaderboard:
    """One row per model folder of ``results_dir``, plus what was skipped or left out and why."""
    root = Path(results_dir)
    groups: dict[str, list[_Run]] = {}
    names: dict[str, set[str]] = {}  # the model names the files give, per folder
    refused: dict[str, list[_Run]] = {}  # per folder, the runs whose scores are not what their predictions give
    skipped: list[str] = []

    def skip(path: Path, reason: str) -> None:  # read_results logs its own
        skipped.append(f"{path.relative_to(root)}: {reason}")

    for path, data in read_results(root, on_skip=skip):
        if str(data.get("task")) in TASKS and str(data.get("task")) not in TASK_NAMES:
            continue  # another benchmark's task (the exams, neDIOM): shown in a table of its own
        parent = path.parent.relative_to(root).as_posix()
        model = parent if parent != "." else model_slug(str(data.get("model") or path.stem))
        try:
            run = _parse_run(path, data)
        except ValueError as exc:
            logger.warning("leaderboard: skipping %s: %s", path, exc)
            skip(path, str(exc))
            continue
        check = check_results_file(path, data)
        names.setdefault(model, set()).add(str(data.get("model") or model))
        if is_refused(check):
            logger.warning("leaderboard: leaving out %s: %s", path, check.reason)
            skip(path, f"left out: {check.reason}")
            refused.setdefault(model, []).append(run)
            continue
        groups.setdefault(model, []).append(dataclasses.replace(run, unverified=is_unverified(check)))
    rows = [_row_from_runs(_display_name(model, names[model]), groups.get(model, ()), refused.get(model, ()))
            for model in sorted(names)]  # fmt: skip
    return Leaderboard(rows, skipped)


def _display_name(folder: str, names: set[str]) -> str:
    """The model name the results files give (`baseline:bigram`) when the folder was named after it."""
    if len(names) == 1:
        name = next(iter(names))
        if model_slug(name) == folder:
            return name
    return folder


def load_leaderboard(results_dir: Path, source: str = "local") -> Leaderboard:
    """Paper rows first, then the results folder's rows, marked with where they came from (``source``)."""
    found = result_rows(results_dir)
    return Leaderboard(paper_rows() + [dataclasses.replace(r, source=source) for r in found.rows], found.skipped)


# --- filtering, sorting and the table ----------------------------------------------------


def filter_rows(
    rows: Iterable[LeaderboardRow], kinds: Iterable[str] | None = None, query: str = "", complete_only: bool = False
) -> list[LeaderboardRow]:
    """Rows of any of ``kinds`` (all when None) whose model name contains ``query`` (case-insensitive)."""
    wanted = None if kinds is None else set(kinds)
    needle = (query or "").strip().casefold()
    return [
        row
        for row in rows
        if (wanted is None or wanted & set(row.kinds))
        and needle in row.model.casefold()
        and (row.nlue.complete or not complete_only)
    ]


def _column_value(row: LeaderboardRow, column: cols.Column) -> float | None:
    """The number a score column shows for ``row`` (0-1 scale), or None."""
    if column.metric is not None:
        source = row.automatic_metrics if column.automatic else row.metrics
        return source.get(column.task or "", {}).get(column.metric)
    return (row.automatic_scores if column.automatic else row.task_scores).get(column.task or "")


_SCORE_COLUMNS = {
    c.name: c
    for c in (*cols.TASK_COLUMNS, *cols.AUTOMATIC_COLUMNS, *cols.PAPER_METRIC_COLUMNS, *cols.AUTOMATIC_METRIC_COLUMNS)
}


def sort_rows(rows: Iterable[LeaderboardRow], by: str = cols.NLUE_SCORE.name, descending: bool = True):
    """Rows sorted by a column of :data:`~nlue.boards.columns.SORT_CHOICES`; rows lacking the value go last.

    By a score, rows with an unverified score (no predictions to recompute it from) are ranked after
    the checked ones, among themselves. ``as listed`` keeps the paper's order, then the results
    folder's: no ranking at all.
    """
    rows = list(rows)
    if by == cols.AS_LISTED:
        return rows
    if by == cols.MODEL.name:
        return sorted(rows, key=lambda r: r.model.casefold(), reverse=descending)
    column = _SCORE_COLUMNS.get(by)

    def value(row: LeaderboardRow) -> float | None:
        if by == cols.NLUE_SCORE.name:
            return row.nlue.score
        if by == cols.PARAMS.name:
            return row.params_millions
        if column is not None:
            return _column_value(row, column)
        raise NlueError(f"cannot sort by {by!r}; choose one of {', '.join(cols.SORT_CHOICES)}")

    present = [r for r in rows if value(r) is not None]
    absent = [r for r in rows if value(r) is None]
    # A score without predictions to recompute it from is ranked apart, after every checked row.
    apart = [r for r in present if r.unverified and by != cols.PARAMS.name]
    checked = [r for r in present if not (r.unverified and by != cols.PARAMS.name)]
    return sorted(checked, key=value, reverse=descending) + sorted(apart, key=value, reverse=descending) + absent


def _percent(value: float | None) -> float | None:
    return None if value is None else round(100.0 * value, 2)


def _coverage(row: LeaderboardRow) -> str:
    if row.is_diagnostic:
        return "diagnostic: not scored"
    score = row.nlue
    shown = f"{len(score.task_scores)}/{len(TASK_NAMES)}"
    if score.complete:
        return shown
    automatic_only = [cols.task_header(TASKS[t]) for t in score.missing if t in row.automatic_scores]
    if automatic_only:
        return f"{shown} incomplete ({', '.join(automatic_only)} auto only: judge it to count)"
    return f"{shown} incomplete"


def flags_cell(flags: Sequence[PaperFlag]) -> str:
    """'⚠ STSB, WG' for a row with flagged cells, '' otherwise."""
    tasks = [cols.task_header(TASKS[t]) for t in TASK_NAMES if any(f.task == t for f in flags)]
    return f"⚠ {', '.join(tasks)}" if tasks else ""


def leaderboard_frame(
    rows: Sequence[LeaderboardRow], show_ci: bool = False, view: cols.View = cols.PRIMARY_VIEW
) -> pd.DataFrame:
    """The table as shown: scores in percent, the columns of ``view``, intervals if asked for."""
    sd_tasks = {task for row in rows for task in row.sds} if view == cols.PRIMARY_VIEW else set()
    columns = cols.leaderboard_columns(show_ci, view, sd_tasks)
    score_columns = [c for c in columns if c.name in _SCORE_COLUMNS]
    records = []
    for row in rows:
        score = row.nlue
        record: dict[str, Any] = {
            cols.MODEL.name: row.model,
            cols.KIND.name: row.kind,
            cols.SOURCE.name: row.source,
            cols.PARAMS.name: row.params_millions,
            cols.DATA.name: row.data,
            cols.CHECK.name: row.check,
            cols.FLAGS.name: flags_cell(row.flags),
            cols.NLUE_SCORE.name: _percent(score.score),
            cols.COVERAGE.name: _coverage(row),
        }
        for column in score_columns:
            record[column.name] = _percent(_column_value(row, column))
        for column in cols.SD_COLUMNS:
            if column.task in sd_tasks:
                record[column.name] = _percent(row.sds.get(column.task))
        if show_ci and view == cols.PRIMARY_VIEW:
            for column in cols.CI_COLUMNS:
                interval = row.intervals.get(column.task)
                record[column.name] = interval_text(*interval) if interval else ""
        records.append(record)
    return pd.DataFrame(records, columns=[c.name for c in columns])


def styled_frame(frame: pd.DataFrame) -> Any:
    """The table with scores printed to two decimals (as the paper prints them) and blanks for missing values.

    The cells keep their numbers, so sorting on them stays numeric.
    """
    sds = {c.name for c in cols.SD_COLUMNS}
    scores = [c for c in frame.columns if c == cols.NLUE_SCORE.name or c in _SCORE_COLUMNS or c in sds
              or cols.CLEAN_MARK in c]  # fmt: skip
    styler = frame.style.format("{:.2f}", subset=scores, na_rep="")
    return styler.format("{:.0f}", subset=[cols.PARAMS.name], na_rep="")
