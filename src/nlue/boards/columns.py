"""The NLUE leaderboard's columns, derived from the registry's NLUE tasks and the paper's table layout.

Two views of the same rows:

* **the paper's metrics** (default): every metric the paper prints, in the order of its
  tables (SA accuracy and macro-F1, ..., STS-B Spearman, Pearson and R², ..., GMET accuracy
  and combined score). Nothing here is ours, so nothing is ranked by default;
* **primary metrics and the NLUE score**: one primary metric per task and their mean. The
  mean, and STS-B's primary (the mean of Pearson and Spearman), are nlue conventions that
  the paper never computed; the view says so wherever it ranks by them.

GMET scores from automatic exact matching against listed answers sit in their own
columns ("GMET auto"), apart from native speakers' verdicts (the paper's, and ours after
judging): the two are not comparable. Scores are shown in percent with two decimals, the
way the paper's tables print them; the data behind them stays on the 0-1 scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nlue.registry.paper import RESULT_COLUMNS
from nlue.registry.tasks import TASK_NAMES, TASKS, TaskSpec

Datatype = Literal["str", "number", "markdown"]
View = Literal["paper", "primary"]
PAPER_VIEW: View = "paper"
PRIMARY_VIEW: View = "primary"
VIEW_LABELS: dict[str, str] = {
    "The paper's metrics": PAPER_VIEW,
    "Primary metrics + NLUE score (nlue conventions)": PRIMARY_VIEW,
}

PRIMARY_METRIC_NAMES = {
    "macro_f1": "macro-F1",
    "pearson_spearman_mean": "mean of Pearson and Spearman (nlue convention)",
    "combined": "GMET combined score",
}
METRIC_SHORT = {
    "accuracy": "acc",
    "macro_f1": "F1",
    "spearman": "Spearman",
    "pearson": "Pearson",
    "r2": "R²",
    "combined": "C",
}
# The tasks whose paper numbers are human verdicts, where our automatic scores get columns of their own.
JUDGED_TASKS: tuple[str, ...] = tuple(name for name in TASK_NAMES if TASKS[name].primary_is_paper_defined)


@dataclass(frozen=True)
class Column:
    name: str
    datatype: Datatype
    description: str
    task: str | None = None
    metric: str | None = None  # the metric a paper-view column holds
    automatic: bool = False  # GMET scored by exact match, not by judges


def task_header(task: TaskSpec) -> str:
    return task.name.upper()


def primary_metric_name(task: TaskSpec) -> str:
    return PRIMARY_METRIC_NAMES.get(task.primary_metric, task.primary_metric)


MODEL = Column("Model", "str", "paper model name, or the results folder a run was written to")
KIND = Column(
    "Kind",
    "str",
    "paper: reported by the NLUE paper; otherwise the kind(s) of the results files (diagnostic: not a score); "
    "language-model runs add their mode, log-likelihood or generation, which are different numbers",
)
SOURCE = Column(
    "Source", "str", "paper: the paper's tables; submitted: a run checked by `nlue submit` in the results repo; local"
)
PARAMS = Column("Params (M)", "number", "parameters in millions, where known")
DATA = Column("Data", "str", "what the scores were measured on; ⚠ sample data says nothing about a model")
CHECK = Column(
    "Check",
    "str",
    "✓ recomputed: every score was recomputed from the run's per-item predictions and agrees; unverified: no "
    "predictions to recompute from (ranked after the checked rows); ⚠ left out: a stored score disagreed with its "
    "predictions or lay outside its range (the reason is listed below the table); the paper's rows are as printed",
)
FLAGS = Column("Flags", "str", "cells of the paper's tables that fail a consistency check (explained below the table)")
NLUE_SCORE = Column(
    "NLUE score", "number", "mean primary metric over the tasks present: an nlue convention, not defined by the paper"
)
COVERAGE = Column("Tasks", "str", "tasks present out of twelve; incomplete rows leave the missing task cells empty")

# What a row is comes first, beside the model name (pinned): what it was measured on (sample data flagged) and
# whether its scores were checked; the scores follow.
IDENTITY_COLUMNS: tuple[Column, ...] = (MODEL, DATA, CHECK, KIND, SOURCE)
LEADING_COLUMNS: tuple[Column, ...] = (*IDENTITY_COLUMNS, NLUE_SCORE, COVERAGE)
TRAILING_COLUMNS: tuple[Column, ...] = (FLAGS, PARAMS)
TASK_COLUMNS: tuple[Column, ...] = tuple(
    Column(
        task_header(t),
        "number",
        f"{t.title}: {primary_metric_name(t)}" + (", judged by native speakers" if t.name in JUDGED_TASKS else ""),
        t.name,
    )
    for t in (TASKS[name] for name in TASK_NAMES)
)
AUTOMATIC_COLUMNS: tuple[Column, ...] = tuple(
    Column(
        f"{task_header(TASKS[name])} auto",
        "number",
        f"{TASKS[name].title}: {primary_metric_name(TASKS[name])} from exact matches with the listed answers; "
        "not comparable with judged scores",
        name,
        automatic=True,
    )
    for name in JUDGED_TASKS
)
CI_COLUMNS: tuple[Column, ...] = tuple(
    Column(f"{task_header(t)} 95% CI", "str", f"{t.title}: bootstrap interval, where the run has one", t.name)
    for t in (TASKS[name] for name in TASK_NAMES)
)
SD_COLUMNS: tuple[Column, ...] = tuple(
    Column(f"{task_header(t)} ± sd", "number", f"{t.title}: sd of the primary metric over training seeds", t.name)
    for t in (TASKS[name] for name in TASK_NAMES)
)
PAPER_METRIC_COLUMNS: tuple[Column, ...] = tuple(
    Column(
        f"{task_header(TASKS[task])} {METRIC_SHORT.get(metric, metric)}",
        "number",
        f"{TASKS[task].title}: {metric}, as the paper's tables print it",
        task,
        metric,
    )
    for task, metric in RESULT_COLUMNS
)
AUTOMATIC_METRIC_COLUMNS: tuple[Column, ...] = tuple(
    Column(
        f"{task_header(TASKS[task])} auto {METRIC_SHORT.get(metric, metric)}",
        "number",
        f"{TASKS[task].title}: {metric} from exact matches with the listed answers; not comparable with judged scores",
        task,
        metric,
        automatic=True,
    )
    for task, metric in RESULT_COLUMNS
    if task in JUDGED_TASKS
)

AS_LISTED = "as listed"
SORT_CHOICES: tuple[str, ...] = (
    AS_LISTED,
    NLUE_SCORE.name,
    MODEL.name,
    PARAMS.name,
    *(c.name for c in TASK_COLUMNS),
    *(c.name for c in AUTOMATIC_COLUMNS),
    *(c.name for c in PAPER_METRIC_COLUMNS),
    *(c.name for c in AUTOMATIC_METRIC_COLUMNS),
)


def leaderboard_columns(
    show_ci: bool = False, view: View = PRIMARY_VIEW, sd_tasks: frozenset[str] | set[str] = frozenset()
) -> list[Column]:
    """The table's columns in ``view``.

    Both views start with what a row is: the model, its data (sample data flagged), its check, kind and
    source. Primary view: then the NLUE score, one column per task (followed by the sd over seeds where
    a row has several, and with ``show_ci`` by its interval), the automatic GMET column, then flags and
    size. Paper view: then every metric the paper prints, the automatic GMET metrics, flags, size.
    """
    if view == PAPER_VIEW:
        return [*IDENTITY_COLUMNS, *PAPER_METRIC_COLUMNS, *AUTOMATIC_METRIC_COLUMNS, *TRAILING_COLUMNS]
    columns = [*LEADING_COLUMNS]
    for score, sd, interval in zip(TASK_COLUMNS, SD_COLUMNS, CI_COLUMNS, strict=True):
        columns.append(score)
        if score.task in sd_tasks:
            columns.append(sd)
        if show_ci:
            columns.append(interval)
        columns.extend(c for c in AUTOMATIC_COLUMNS if c.task == score.task)
    return columns + list(TRAILING_COLUMNS)


CLEAN_MARK = " clean ("  # a clean column's header: "<TASK> clean (<corpus>)" (nlue.boards.clean_columns)
CLEAN_HELP = ("ours: the primary metric on the items `nlue contamination` found in no measure against the corpus "
              "named, recomputed from the run's predictions")  # fmt: skip


def column_named(name: str) -> Column:
    """The column a table header names (every column of every view, and the clean columns)."""
    every = (*LEADING_COLUMNS, *TASK_COLUMNS, *SD_COLUMNS, *CI_COLUMNS, *AUTOMATIC_COLUMNS, *PAPER_METRIC_COLUMNS,
             *AUTOMATIC_METRIC_COLUMNS, *TRAILING_COLUMNS)  # fmt: skip
    found = next((c for c in every if c.name == name), None)
    if found is None and CLEAN_MARK in name:
        return Column(name, "number", CLEAN_HELP)
    if found is None:
        raise KeyError(f"no leaderboard column {name!r}")
    return found


def column_widths(columns: list[Column]) -> list[str]:
    """CSS widths that show every header whole: text columns get room to read, the others their longest header word.

    The table wraps its headers between words ("STSB" over "Spearman"), so a column needs the width of
    its longest header word, or of a score ("100.00"), whichever is wider: a fixed narrow width cut
    headers to "COL..." at 1280 px.
    """
    wide = {
        MODEL.name: "165px",
        DATA.name: "160px",
        CHECK.name: "140px",
        KIND.name: "95px",
        SOURCE.name: "95px",
        NLUE_SCORE.name: "105px",
        COVERAGE.name: "145px",
        PARAMS.name: "115px",
        FLAGS.name: "150px",
    }
    return [wide.get(c.name) or f"{header_width(c.name, 110 if c in CI_COLUMNS else 0)}px" for c in columns]


SCORE_TEXT = "100.00"  # the widest score a cell shows
CHAR_PX, PADDING_PX = 9, 30  # about one character of the table's monospace font; the cell's padding and sort icon


def header_width(header: str, at_least: int = 0) -> int:
    """Pixels that fit the longest word of ``header`` (and a score) on one line."""
    longest = max(len(word) for word in [*header.split(), SCORE_TEXT])
    return max(at_least, CHAR_PX * longest + PADDING_PX)
