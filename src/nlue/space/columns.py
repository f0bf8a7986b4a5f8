"""The leaderboard's columns, derived from the task registry: one score column per task.

Scores are shown in percent with two decimals, the way the paper's tables print them;
the data behind them stays on the 0-1 scale of results files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nlue.tasks import TASKS, TaskSpec

Datatype = Literal["str", "number", "markdown"]

PRIMARY_METRIC_NAMES = {
    "macro_f1": "macro-F1",
    "pearson_spearman_mean": "mean of Pearson and Spearman",
    "combined": "GMET combined score",
}


@dataclass(frozen=True)
class Column:
    name: str
    datatype: Datatype
    description: str
    task: str | None = None


def task_header(task: TaskSpec) -> str:
    return task.name.upper()


def primary_metric_name(task: TaskSpec) -> str:
    return PRIMARY_METRIC_NAMES.get(task.primary_metric, task.primary_metric)


MODEL = Column("Model", "str", "paper model name, or the results folder a run was written to")
KIND = Column("Kind", "str", "paper: reported by the NLUE paper; otherwise the kind(s) of the results files")
PARAMS = Column("Params (M)", "number", "parameters in millions, where known")
DATA = Column("Data", "str", "what the scores were measured on")
NLUE_SCORE = Column("NLUE score", "number", "mean primary metric over the tasks present")
COVERAGE = Column("Tasks", "str", "tasks present out of twelve; incomplete rows leave the missing task cells empty")

LEADING_COLUMNS: tuple[Column, ...] = (MODEL, KIND, NLUE_SCORE, COVERAGE)
TRAILING_COLUMNS: tuple[Column, ...] = (PARAMS, DATA)
TASK_COLUMNS: tuple[Column, ...] = tuple(
    Column(task_header(t), "number", f"{t.title}: {primary_metric_name(t)}", t.name) for t in TASKS.values()
)
CI_COLUMNS: tuple[Column, ...] = tuple(
    Column(f"{task_header(t)} 95% CI", "str", f"{t.title}: bootstrap interval, where the run has one", t.name)
    for t in TASKS.values()
)

SORT_CHOICES: tuple[str, ...] = (NLUE_SCORE.name, MODEL.name, PARAMS.name, *(c.name for c in TASK_COLUMNS))


def leaderboard_columns(show_ci: bool = False) -> list[Column]:
    """The table's columns: the model and its NLUE score, one per task (with ``show_ci``, each followed by
    its interval), then size and data."""
    columns = list(LEADING_COLUMNS)
    for score, interval in zip(TASK_COLUMNS, CI_COLUMNS, strict=True):
        columns.append(score)
        if show_ci:
            columns.append(interval)
    return columns + list(TRAILING_COLUMNS)


def column_widths(columns: list[Column]) -> list[str]:
    """CSS widths that keep the twelve task columns narrow and the text columns readable."""
    wide = {
        MODEL.name: "165px",
        KIND.name: "95px",
        NLUE_SCORE.name: "105px",
        COVERAGE.name: "145px",
        PARAMS.name: "115px",
        DATA.name: "145px",
    }
    return [wide.get(c.name, "110px" if c in CI_COLUMNS else "60px") for c in columns]
