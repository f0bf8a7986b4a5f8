"""The report's significance section: for each task, a matrix of paired tests over every pair of our runs.

Every number is :func:`nlue.evals.compare.compare_runs`' for the pair, exactly what ``nlue compare
A B`` prints: the difference of the task's primary metric (row minus column) with the 95% paired
bootstrap interval, and its p-value after Holm's correction across the tasks the two runs share.
Runs whose results files have no per-item predictions are named and left out; a pair scored on
different items (other data, or another split) is refused by compare and marked "not comparable".
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import combinations

import pandas as pd

from nlue.errors import NlueError
from nlue.evals.compare import RunTask, TaskComparison, aligned, compare_runs, load_run
from nlue.evals.compare_cli import p_text
from nlue.evals.report_runs import Gathered
from nlue.evals.report_types import OURS, Section, Table

logger = logging.getLogger(__name__)

NOT_COMPARABLE = "not comparable"
RUN_COLUMN = "run (row)"


def _comparable(a: RunTask, b: RunTask) -> bool:
    try:
        aligned(a, b)
    except NlueError:
        return False
    return True


def pairwise(
    gathered: Gathered, resamples: int, seed: int
) -> tuple[dict[str, list[str]], list[TaskComparison], list[tuple[str, str, str]]]:
    """Runs per task, compare's comparisons of every pair, and the (task, run, run) pairs it refused."""
    loaded = {}
    for folder in gathered.run_folders():
        try:
            loaded[gathered.run_label(folder)] = (folder, load_run(folder))
        except NlueError as exc:
            logger.warning("significance: %s", exc)
    tasks: dict[str, list[str]] = {}
    for label, (_, run) in sorted(loaded.items()):
        for task in run:
            tasks.setdefault(task, []).append(label)
    comparisons, refused = [], []
    for a, b in combinations(sorted(loaded), 2):
        (folder_a, run_a), (folder_b, run_b) = loaded[a], loaded[b]
        shared = [t for t in run_a if t in run_b]
        ok = [t for t in shared if _comparable(run_a[t], run_b[t])]
        refused += [(t, a, b) for t in shared if t not in ok]
        if ok:
            # compare names runs by the folder it was given: the labels keep the report's names
            for c in compare_runs([folder_a, folder_b], ok, resamples, seed):
                c.run_a, c.run_b = a, b
                comparisons.append(c)
    return tasks, comparisons, refused


def _matrix(task: str, runs: Sequence[str], found: dict[tuple[str, str], TaskComparison], alpha: float) -> Table:
    records, styles = [], {}
    for i, a in enumerate(runs):
        record = {"#": i + 1, RUN_COLUMN: a}
        for j, b in enumerate(runs):
            column = str(j + 1)
            if i == j:
                record[column] = "—"
                styles[(i, column)] = "diagonal"
                continue
            c, sign = (found.get((a, b)), 1) if (a, b) in found else (found.get((b, a)), -1)
            styles[(i, column)] = "pair"  # difference and p on two lines keep ten runs within the page
            if c is None:
                record[column] = NOT_COMPARABLE
                continue
            difference = round(sign * c.difference, 3) + 0.0  # + 0.0: no "-0.000" for a difference of nothing
            record[column] = f"{difference:+.3f} (p={p_text(c.p_holm)})"  # one space: the cell wraps there only
            if c.p_holm is not None and c.p_holm < alpha and c.difference != 0:
                styles[(i, column)] += " better" if sign * c.difference > 0 else " worse"
        records.append(record)
    metric = next((c.metric for c in found.values() if c.task == task), "primary metric")
    return Table(
        key=f"significance_{task.replace('.', '_')}",
        title=f"{task} · row minus column, {metric} (Holm-corrected p)",
        frame=pd.DataFrame(records),
        origins=[OURS] * len(records),
        styles=styles,
        formats={"#": "{:.0f}"},
        notes=[
            f"Column numbers are the rows' #. Green: the row's run is better at Holm-corrected p < {alpha}; red: "
            "worse. The 95% intervals and McNemar's test are in the table of every pair below."
        ],
    )


def _pairs_table(comparisons: Sequence[TaskComparison]) -> Table:
    frame = pd.DataFrame([c.to_dict() for c in comparisons], columns=list(TaskComparison.__dataclass_fields__))
    return Table(
        "significance_pairs",
        "Every pair of runs, task by task (nlue compare's numbers)",
        frame,
        [OURS] * len(frame),
        collapsed=True,
        formats={"items": "{:.0f}", "right_only_a": "{:.0f}", "right_only_b": "{:.0f}"},
        notes=[
            "difference = score_a - score_b; ci: 95% paired bootstrap interval; p_holm and "
            "mcnemar_p_holm: Holm's correction across the tasks the pair shares, as `nlue compare`."
        ],
    )


def significance_section(gathered: Gathered, resamples: int, seed: int, alpha: float) -> Section:
    section = Section(
        key="significance",
        title="Significance: paired tests between our runs, per task",
        intro=[
            f"For each task, every pair of our runs scored on the same items: the difference of the task's "
            f"primary metric (row minus column) and its p-value from a paired bootstrap ({resamples} draws, seed "
            f"{seed}) after Holm's correction across the tasks the pair shares, computed by `nlue compare`. The "
            "papers report no test of a difference between models: everything here is ours."
        ],
        sample=gathered.sample_count() > 0,
    )
    left_out = gathered.without_predictions()
    if left_out:
        section.add(f"Left out, no per-item predictions beside the results file: {', '.join(left_out)}.")
    tasks, comparisons, refused = pairwise(gathered, resamples, seed)
    matrices = []
    for task, runs in sorted(tasks.items()):
        if len(runs) < 2:
            continue
        by_pair = {(c.run_a, c.run_b): c for c in comparisons if c.task == task}
        matrices.append(_matrix(task, runs, by_pair, alpha))
    if refused:
        section.add(
            "Not comparable (scored on different items, so compare refuses them): "
            + "; ".join(f"{t}: {a} and {b}" for t, a, b in refused)
            + "."
        )
    if not matrices:
        section.empty = "No task has two or more of our runs with per-item predictions: no pair to test."
        return section
    section.add(*matrices, _pairs_table(comparisons))
    return section
