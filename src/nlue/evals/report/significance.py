"""The report's significance section: per task and setting, paired tests between the models run that way.

Runs are grouped as :mod:`nlue.evals.run_groups` says: by task, data and setting (how a language
model was asked: mode, shots, prompt language; neDIOM's setting and input variant). Within a group,
runs that answered every item alike are one row, and every two rows of different models are tested;
runs of one model (another seed, a copy in another sweep) are not tested against each other. A
group of three or more rows is a matrix; groups of two rows are lines of one table per task.

Every number is :func:`nlue.evals.compare.pairs.compare_runs`' for the pair, exactly what ``nlue compare
A B`` prints: the difference of the task's primary metric (row minus column) with the 95% paired
bootstrap interval, and its p-value after Holm's correction across the tasks the two runs share in
one setting. Runs whose results files have no per-item predictions are named and left out; a pair
scored on different items is refused by compare and marked "not comparable".
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from nlue.errors import NlueError
from nlue.evals.compare.cli import p_text
from nlue.evals.compare.pairs import TaskComparison, compare_runs
from nlue.evals.report.runs import Gathered
from nlue.evals.report.types import OURS, Section, Table
from nlue.evals.run_groups import NO_PROMPT, RunFile, SettingGroup, group_runs, pair_tasks
from nlue.text.safe import markdown_text

logger = logging.getLogger(__name__)

NOT_COMPARABLE = "not comparable"
SAME_MODEL = "same model: not tested"
RUN_COLUMN = "run (row)"
MATRIX_ROWS = 3  # a group with this many rows or more is a matrix; two rows are one line of the task's table


def pairwise(
    gathered: Gathered, resamples: int, seed: int
) -> tuple[list[SettingGroup], list[TaskComparison], list[str]]:
    """The groups, compare's comparisons of every pair of runs of different models in one setting, and refusals."""
    files = gathered.run_files()
    groups = group_runs(files)
    names = {f.folder: f.run for f in files}
    comparisons, refused = [], []
    for (folder_a, folder_b), tasks in pair_tasks(groups).items():
        try:
            found = compare_runs([folder_a, folder_b], tasks, resamples, seed)
        except NlueError as exc:  # scored on different items: compare refuses the pair, naming both
            logger.warning("significance: %s", exc)
            refused.append(markdown_text(f"{', '.join(tasks)}: {names[folder_a]} and {names[folder_b]}"))
            continue
        for c in (c for c in found if c.task in tasks):  # --tasks gmet is gmet.human too: this pair's only
            c.run_a, c.run_b = names[folder_a], names[folder_b]  # compare names runs by folder: the report's names
            comparisons.append(c)
    return groups, comparisons, refused


def _setting(group: SettingGroup) -> str:
    return group.setting or NO_PROMPT


def _title(group: SettingGroup) -> str:
    """The group's task and setting in the report's Markdown: the results files' words kept literal."""
    return f"{markdown_text(group.task)} · {markdown_text(group.setting) if group.setting else NO_PROMPT}"


def _row_label(row: Sequence[RunFile]) -> str:
    return row[0].run + (f" (and {len(row) - 1} alike)" if len(row) > 1 else "")


def _cell(group: SettingGroup, i: int, j: int, found: dict[tuple[str, str], TaskComparison], alpha: float):
    """The text and CSS class of the cell row i, column j: row minus column, or why there is no number."""
    if i == j:
        return "—", "diagonal"
    if group.same_model(i, j):
        return SAME_MODEL, "pair same"
    a, b = group.rows[i][0].run, group.rows[j][0].run
    c, sign = _lookup(found, a, b), 1 if (a, b) in found else -1
    if c is None:
        return NOT_COMPARABLE, "pair"
    difference = round(sign * c.difference, 3) + 0.0  # + 0.0: no "-0.000" for a difference of nothing
    style = "pair"  # difference and p on two lines keep ten runs within the page
    if c.p_holm is not None and c.p_holm < alpha and c.difference != 0:
        style += " better" if sign * c.difference > 0 else " worse"
    return f"{difference:+.3f} (p={p_text(c.p_holm)})", style  # one space: the cell wraps there only


def _metric(task: str, found: dict[tuple[str, str], TaskComparison]) -> str:
    return next((c.metric for c in found.values() if c.task == task), "primary metric")


def _key(group: SettingGroup, index: int) -> str:
    return f"significance_{group.task.replace('.', '_')}_{index}"


def _matrix(group: SettingGroup, index: int, found: dict[tuple[str, str], TaskComparison], alpha: float) -> Table:
    records, styles = [], {}
    for i, row in enumerate(group.rows):
        record = {"#": i + 1, RUN_COLUMN: _row_label(row)}
        for j in range(len(group.rows)):
            record[str(j + 1)], styles[(i, str(j + 1))] = _cell(group, i, j, found, alpha)
        records.append(record)
    return Table(
        key=_key(group, index),
        title=f"{_title(group)} · row minus column, {markdown_text(_metric(group.task, found))} (Holm-corrected p)",
        frame=pd.DataFrame(records),
        origins=[OURS] * len(records),
        styles=styles,
        formats={"#": "{:.0f}"},
        notes=[
            f"Column numbers are the rows' #. Green: the row's run is better at Holm-corrected p < {alpha}; red: "
            "worse. The 95% intervals and McNemar's test are in the table of every pair below.",
            *_alike_notes([group]),
        ],
    )


def _pairs_of_task(groups: Sequence[SettingGroup], found: dict[tuple[str, str], TaskComparison], alpha: float):
    """One table of the task's two-row groups: a line per setting, run A minus run B."""
    records, styles = [], {}
    for position, group in enumerate(groups):
        text, style = _cell(group, 0, 1, found, alpha)
        records.append({"setting": _setting(group), "data": group.data,
                        "run A": _row_label(group.rows[0]), "run B": _row_label(group.rows[1]), "A − B": text})  # fmt: skip
        styles[(position, "A − B")] = style
    task = groups[0].task
    return Table(
        key=f"significance_{task.replace('.', '_')}_pairs",
        title=f"{markdown_text(task)} · two models in a setting: A minus B, {markdown_text(_metric(task, found))} "
        "(Holm-corrected p)",
        frame=pd.DataFrame(records),
        origins=[OURS] * len(records),
        styles=styles,
        notes=[f"Green: A is better at Holm-corrected p < {alpha}; red: worse.", *_alike_notes(groups)],
    )


def _alike_notes(groups: Sequence[SettingGroup]) -> list[str]:
    return [
        f"{_title(group)}: {markdown_text(', '.join(f.run for f in row))} gave the same answer on every item (one row)."
        for group in groups
        for row in group.rows
        if len(row) > 1
    ]


def _lookup(found: dict[tuple[str, str], TaskComparison], a: str, b: str) -> TaskComparison | None:
    return found.get((a, b)) or found.get((b, a))


def _pairs_table(groups: Sequence[SettingGroup], found: dict[str, dict[tuple[str, str], TaskComparison]]) -> Table:
    """Every comparison the matrices show (runs that answered alike are one row: their zeros are not repeated)."""
    records = []
    for group in groups:
        for i, j in group.pairs():
            c = _lookup(found.get(group.task, {}), group.rows[i][0].run, group.rows[j][0].run)
            if c is not None:
                records.append({"task": c.task, "setting": _setting(group), "data": group.data, **c.to_dict()})
    columns = ["task", "setting", "data", *(c for c in TaskComparison.__dataclass_fields__ if c != "task")]
    frame = pd.DataFrame(records, columns=columns)
    return Table(
        "significance_pairs",
        "Every pair tested, task by task (nlue compare's numbers)",
        frame,
        [OURS] * len(frame),
        collapsed=True,
        formats={"items": "{:.0f}", "right_only_a": "{:.0f}", "right_only_b": "{:.0f}"},
        notes=[
            "difference = score_a - score_b; ci: 95% paired bootstrap interval; p_holm and "
            "mcnemar_p_holm: Holm's correction across the tasks the pair shares in one setting, as `nlue compare`."
        ],
    )


def _untested(groups: Sequence[SettingGroup]) -> Table | None:
    """What was not tested, and why: runs of one model in a setting, or every run answering alike."""
    records = []
    for group in groups:
        runs = [f.run for row in group.rows for f in row]
        if len(group.rows) == 1 and len(runs) > 1 and len(group.models) > 1:
            why = "every run gave the same answer on every item: no difference to test"
        elif len(group.models) == 1 and len(runs) > 1:
            why = f"{len(runs)} runs of one model ({group.models[0]}): not tested against each other"
        else:
            continue
        records.append({"task": group.task, "setting": _setting(group), "data": group.data,
                        "runs": ", ".join(runs), "why": why})  # fmt: skip
    if not records:
        return None
    return Table(
        "significance_not_tested",
        "Runs not tested against each other, and why",
        pd.DataFrame(records),
        [OURS] * len(records),
        collapsed=True,
    )


def significance_section(gathered: Gathered, resamples: int, seed: int, alpha: float) -> Section:
    section = Section(
        key="significance",
        title="Significance: paired tests between models, per task and setting",
        intro=[
            f"For each task, the runs scored on the same items are grouped by setting (how a language model was "
            f"asked: mode, shots, prompt language; neDIOM's setting and input variant), and every two models in a "
            f"setting are tested: the difference of the task's primary metric (row minus column) and its p-value "
            f"from a paired bootstrap ({resamples} draws, seed {seed}) after Holm's correction across the tasks the "
            "pair shares, computed by `nlue compare`. Runs of one model (another seed or input, a copy in another "
            "folder) are never tested as two models, and runs that gave the same answer on every item are one row. "
            "The papers report no test of a difference between models: everything here is ours."
        ],
        sample=gathered.sample_count() > 0,
    )
    left_out = gathered.without_predictions()
    if left_out:
        section.add(f"Left out, no per-item predictions beside the results file: {markdown_text(', '.join(left_out))}.")
    groups, comparisons, refused = pairwise(gathered, resamples, seed)
    found: dict[str, dict[tuple[str, str], TaskComparison]] = {}
    for c in comparisons:
        found.setdefault(c.task, {})[(c.run_a, c.run_b)] = c
    tables, index = [], 0
    for task in dict.fromkeys(g.task for g in groups):
        tested = [g for g in groups if g.task == task and g.pairs()]
        for group in (g for g in tested if len(g.rows) >= MATRIX_ROWS):
            index += 1
            tables.append(_matrix(group, index, found.get(task, {}), alpha))
        pairs = [g for g in tested if len(g.rows) < MATRIX_ROWS]
        if pairs:
            tables.append(_pairs_of_task(pairs, found.get(task, {}), alpha))
    if refused:
        section.add("Not comparable (scored on different items, so compare refuses them): " + "; ".join(refused) + ".")
    untested = _untested(groups)
    if not tables:
        section.empty = "No setting of any task has two models with per-item predictions that answered differently: no pair to test."
    else:
        section.add(*tables, _pairs_table(groups, found))
    if untested is not None:
        section.add(untested)
    return section
