"""The report's NLUE section: the paper's Tables 2-5 with our runs beside its rows, and a chart per few runs.

The rows are the leaderboard's (:func:`nlue.boards.leaderboard.load_leaderboard`) in its "paper's
metrics" view: the paper's ten encoders as printed, with the cells that fail a consistency check
flagged (:mod:`nlue.registry.paper_checks`), then one row per run folder. The paper prints one
table per task category, in :data:`nlue.registry.nlue.CATEGORIES` order: Table 2 single sentence,
Table 3 similarity and paraphrase, Table 4 inference, Table 5 GMET.
"""

from __future__ import annotations

from collections.abc import Sequence

from nlue.boards import columns as cols
from nlue.boards.charts import MAX_CHART_MODELS, score_chart
from nlue.boards.leaderboard import PAPER_KIND, Leaderboard, LeaderboardRow, flags_cell, leaderboard_frame
from nlue.boards.table import SAMPLE_DATA_LABEL
from nlue.boards.text import flag_line
from nlue.evals.report.runs import Gathered
from nlue.evals.report.types import OURS, PAPER, CellFlag, Chart, Section, Table
from nlue.evals.report.wordings import wording_table
from nlue.registry.nlue import CATEGORIES, NLUE_SCORE_NOTE
from nlue.registry.paper import PAPER_MODELS
from nlue.registry.tasks import TASK_NAMES, TASKS

FIRST_TABLE = 2  # the paper's results tables are numbered 2-5, one per category
MAX_CHARTS = 4  # more runs than fit in these charts are in the tables only
# The chart's reference row: the paper's largest encoder (by parameters, not by any score of ours).
REFERENCE_MODEL = max(PAPER_MODELS, key=lambda m: m.params_millions).name


def _category_tables(rows: Sequence[LeaderboardRow]) -> list[Table]:
    frame = leaderboard_frame(rows, view=cols.PAPER_VIEW)
    tables = []
    for number, category in enumerate(CATEGORIES, start=FIRST_TABLE):
        tasks = [t for t in TASK_NAMES if TASKS[t].category == category]
        metric_columns = [c for c in (*cols.PAPER_METRIC_COLUMNS, *cols.AUTOMATIC_METRIC_COLUMNS) if c.task in tasks]
        names = [c.name for c in metric_columns]
        # Our runs that scored none of this table's tasks would be rows of blanks: they are left out.
        keep = [i for i, row in enumerate(rows) if row.source == PAPER_KIND or frame.loc[i, names].notna().any()]
        part = frame.loc[keep, [cols.MODEL.name, cols.KIND.name, *names, cols.PARAMS.name, cols.DATA.name]]
        part = part.reset_index(drop=True)
        kept = [rows[i] for i in keep]
        part.insert(
            len(names) + 2, cols.FLAGS.name, [flags_cell([f for f in r.flags if f.task in tasks]) for r in kept]
        )
        flags = []
        for position, row in enumerate(kept):
            for flag in (f for f in row.flags if f.task in tasks):
                for column in metric_columns:
                    if column.task == flag.task and column.metric in flag.cells and not column.automatic:
                        flags.append(CellFlag(position, column.name, flag.summary, flag_line(flag)))
        legend = "; ".join(f"*{c.name}*: {c.description}" for c in metric_columns)
        tables.append(
            Table(
                key=f"nlue_table{number}_{category.replace(' & ', '_').replace(' ', '_').casefold()}",
                title=f"NLUE Table {number} · {category}",
                frame=part,
                origins=[PAPER if r.source == PAPER_KIND else OURS for r in kept],
                flags=flags,
                notes=[f"Columns, in the paper's order: {legend}."],
                formats={cols.PARAMS.name: "{:.0f}"},
            )
        )
    return tables


def _charts(ours: Sequence[LeaderboardRow], reference: LeaderboardRow) -> list[Chart]:
    """Our runs, a few per chart, each chart with the paper's largest encoder for reference."""
    per_chart = MAX_CHART_MODELS - 1
    charts = []
    for index in range(0, min(len(ours), per_chart * MAX_CHARTS), per_chart):
        chunk = list(ours[index : index + per_chart])
        figure = score_chart([*chunk, reference])
        charts.append(
            Chart(
                key=f"nlue_scores_{index // per_chart + 1}",
                title=f"NLUE: primary metric per task, our runs {index + 1}-{index + len(chunk)} and the paper's "
                f"{reference.model}",
                figure=figure,
                caption=f"Bars of our runs beside the paper's row for {reference.model} (its largest encoder, as "
                "printed). Primary metrics: macro-F1, the mean of Pearson and Spearman for STS-B, the GMET combined "
                f"score (judged by people only). {NLUE_SCORE_NOTE}",
            )
        )
    return charts


def nlue_section(board: Leaderboard, gathered: Gathered | None = None) -> Section:
    """The section from the leaderboard of the results folder (the paper's rows, then ours), and from the gathered
    results files the prompt-wording table of runs made with ``--wordings all`` (ours alone)."""
    rows = board.rows
    ours = [r for r in rows if r.source != PAPER_KIND]
    section = Section(
        key="nlue",
        title="NLUE: the paper's Tables 2-5 and our runs",
        intro=[
            "Rows marked *paper, as printed* are the NLUE paper's test-set results for its ten encoders, exactly as "
            "printed (percent, two decimals); rows marked *ours* are the runs in the results folder, one per run "
            "folder, on the data their *Data* column names. Cells marked ⚠ fail a consistency check of the "
            "paper's numbers (`nlue.registry.paper_checks`); they stay as printed and the reason is given under "
            "each table. *GMET auto* columns hold our exact-match GMET scores, which are not comparable with the "
            "paper's judged ones.",
        ],
        sample=any(r.data == SAMPLE_DATA_LABEL for r in ours),
    )
    if not ours:
        section.empty = "No NLUE run in the results folder: the paper's rows alone."
    tables = _category_tables(rows)
    for table in tables:
        section.add(table)
    # The chart shows primary metrics; a run with none (GMET by exact match only, a diagnostic) has no bar.
    charted = [r for r in ours if r.task_scores and not r.is_diagnostic]
    if charted:
        reference = next(r for r in rows if r.source == PAPER_KIND and r.model == REFERENCE_MODEL)
        section.add(*_charts(charted, reference))
    title = "Our runs · prompt wordings (--wordings all)"
    worded = wording_table(gathered.of("nlue"), "nlue_prompt_wordings", title) if gathered is not None else None
    if worded is not None:
        section.add(worded)
    left = len(ours) - min(len(charted), (MAX_CHART_MODELS - 1) * MAX_CHARTS)
    if ours and left:
        section.add(
            f"{left} of our runs {'is' if left == 1 else 'are'} in the tables only: past the charts' {(MAX_CHART_MODELS - 1) * MAX_CHARTS} "
            "runs, or without a primary metric to chart (GMET scored by exact match only, diagnostics)."
        )
    return section
