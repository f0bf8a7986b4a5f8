"""The report's sections for tasks no paper printed: a user's task files, one section per benchmark.

A task declared in a user's task file has no paper's rows to stand beside, and its runs never enter a
paper's tables or the NLUE score. Each of its benchmarks (a benchmark file's, or a lone task file's own)
gets a section after the papers' sections, and each task in it:

* a paragraph saying what the task is: its kind, its language, its benchmark and task file, and its
  primary metric as the task file chose it (:attr:`nlue.registry.spec.TaskSpec.primary_note`);
* a table of every run (the board of :mod:`nlue.boards.tasks`, as the Space's "Your tasks" tab
  shows it): every metric the task declares with its 95% interval, kind and mode, data (sample data
  flagged) and whether the scores were recomputed from the run's predictions;
* a bar chart of the primary metric per run with its interval (:func:`nlue.boards.charts.runs_chart`);
* for the runs on that board made with ``--wordings all`` (or ``--option-orders cyclic``), the same
  prompt-wording (option-order) table the shipped tasks' sections show (:mod:`nlue.evals.report.wordings`,
  :mod:`nlue.evals.report.mcq_orders`).

Paired tests between the models run on these tasks are in the significance section, with the papers'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from nlue.boards.charts import MAX_RUN_BARS, runs_chart
from nlue.boards.tasks import (
    RUN_COLUMNS,
    TaskRuns,
    declared_boards,
    interval_column,
    primary_column,
)
from nlue.boards.text import languages_text
from nlue.evals.report.mcq_orders import order_table
from nlue.evals.report.runs import Gathered, gather
from nlue.evals.report.types import OURS, Chart, Section, Table
from nlue.evals.report.wordings import wording_table
from nlue.registry.benchmarks import BENCHMARKS
from nlue.results_folders import ResultsFolder
from nlue.text.safe import markdown_text

INTRO = (
    "The tasks below come from task files, not from a paper: no paper printed them, so no paper's rows stand "
    "beside ours, their runs are never in the NLUE paper's tables or the NLUE score, and each task's primary "
    "metric is the one its task file names. Every row is ours, one per run folder; scores in percent."
)


def _about(runs: TaskRuns) -> str:
    """The task in one paragraph of the report's Markdown (names from the task file kept literal)."""
    task = runs.task
    where = f" ({markdown_text(task.task_file)})" if task.task_file else ""
    return (
        f"**{markdown_text(task.title)}** ({markdown_text(task.name)}): {markdown_text(task.description)} "
        f"Kind: {task.kind.name}; language: {markdown_text(languages_text(task))}; declared in a task file{where}. "
        f"Primary metric: {markdown_text(task.primary_note)}."
    )


def _with_interval(value: object, interval: object) -> object:
    """A score and its interval in one cell (``37.33 [11.4, 53.4]``), so that a task of many metrics fits the page."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    low, _, high = str(interval or "").partition("–")
    return f"{value:.2f} [{low},\u00a0{high}]" if high else value  # no break inside the brackets


def _table(runs: TaskRuns) -> Table:
    """The board's rows with each metric's interval beside its score in one cell (the CSV keeps the board's)."""
    task = runs.task
    board = runs.board.frame()
    frame = board[list(RUN_COLUMNS)].copy()
    for metric in dict.fromkeys([task.primary_metric, *task.metrics]):
        column = primary_column(task) if metric == task.primary_metric else metric
        frame[column] = [
            _with_interval(v, i) for v, i in zip(board[column], board[interval_column(metric)], strict=True)
        ]
    return Table(
        key=f"declared_{task.name}",
        title=f"{markdown_text(task.title)} · every run",
        frame=frame,
        origins=[OURS] * len(frame),
        notes=[
            f"*{markdown_text(primary_column(task))}*: the task file's primary metric. Each score is in percent, "
            "followed by the run's 95% bootstrap interval in brackets where the run has one.",
            "*kind*: the run's kind, and how a language model was asked (mode, shots, prompt language). *check*: ✓ recomputed "
            "when the run's scores are what its per-item predictions give; unverified runs (no predictions) are "
            "listed after the checked ones.",
        ],
    )


def _chart(runs: TaskRuns) -> Chart:
    task = runs.task
    more = len(runs.scores) - MAX_RUN_BARS
    return Chart(
        key=f"declared_{task.name}_chart",
        title=f"{markdown_text(task.title)}: {markdown_text(task.primary_metric)} per run",
        figure=runs_chart(task, runs.scores),
        caption=f"Bars: each run's {markdown_text(task.primary_metric)}, the task file's primary metric, in "
        "percent; whiskers: its 95% bootstrap interval; hatched bars: unverified runs."
        + (f" {more} more runs are in the table only." if more > 0 else ""),
    )


def _robustness(runs: TaskRuns, gathered: Gathered) -> list[Table]:
    """The prompt-wording and option-order tables of the task's runs on its board (a refused run is not there)."""
    shown = {score.run for score in runs.scores}
    files = [f for f in gathered.files if f.task == runs.task.name and f.run in shown]
    files.sort(key=lambda f: str(f.data.get("created") or ""))
    title = markdown_text(runs.task.title)
    worded = wording_table(files, f"declared_{runs.task.name}_prompt_wordings",
                           f"{title} · prompt wordings (--wordings all)")  # fmt: skip
    orders = order_table(files, f"declared_{runs.task.name}_option_orders", f"{title} · option orders (cyclic)")
    return [table for table in (worded, orders) if table is not None]


def declared_sections(
    folders: Sequence[ResultsFolder], gathered: Gathered | None = None
) -> tuple[list[Section], list[str]]:
    """A section per benchmark of registered task files (none when no task file is registered), and the
    results files of those tasks that were left out, each with the reason (``gathered``: the folders' files,
    read again when not given)."""
    boards = declared_boards(folders)
    gathered = gathered if gathered is not None else gather(folders)
    by_benchmark: dict[str, list[TaskRuns]] = {}
    for runs in boards.tasks:
        by_benchmark.setdefault(runs.task.benchmark, []).append(runs)
    sections = []
    for name, tasks in by_benchmark.items():
        title = BENCHMARKS[name].title if name in BENCHMARKS else name
        section = Section(
            key=f"benchmark_{name}",
            title=f"{title}: declared in task files (no paper)",
            intro=[INTRO],
            sample=any(runs.sample for runs in tasks),
        )
        for runs in tasks:
            section.add(_about(runs))
            if not runs.scores:
                section.add(f"*No run of {markdown_text(runs.task.name)} in the results folder.*")
                continue
            section.add(_table(runs), _chart(runs), *_robustness(runs, gathered))
        if not any(runs.scores for runs in tasks):
            section.empty = "No run of these tasks in the results folder."
        sections.append(section)
    return sections, boards.skipped
