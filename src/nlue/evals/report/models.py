"""The report's models section: monolingual vs multilingual encoders, and parameters vs score.

The NLUE paper's ten encoders are seven pretrained on Nepali alone and three multilingual ones
(:attr:`nlue.registry.paper.PaperModel.multilingual`, from each model's own description: the
grouping is ours, not a column of the paper). Our runs are placed by their base model (or model)
where it is one of the paper's encoders, else "unknown". The score is the leaderboard's NLUE score,
the mean of the tasks' primary metrics: an nlue convention the paper never computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean

import pandas as pd
from matplotlib.figure import Figure

from nlue.boards.columns import task_header
from nlue.boards.leaderboard import PAPER_KIND, Leaderboard, LeaderboardRow
from nlue.boards.table import SAMPLE_DATA_LABEL
from nlue.evals.report.style import tidy
from nlue.evals.report.types import DERIVED, OURS, PAPER, Chart, Section, Table
from nlue.registry.nlue import NLUE_SCORE_NOTE
from nlue.registry.paper import PaperModel, paper_model
from nlue.registry.tasks import TASK_NAMES, TASKS
from nlue.text.safe import plot_text

MONOLINGUAL, MULTILINGUAL, UNKNOWN = "monolingual (Nepali)", "multilingual", "unknown"
COLOURS = {MONOLINGUAL: "#16a34a", MULTILINGUAL: "#7c3aed", UNKNOWN: "#6b7280"}


def _known(row: LeaderboardRow) -> PaperModel | None:
    """The paper's encoder a row is (paper rows) or was fine-tuned from (our rows), if any."""
    return paper_model(row.model) if row.source == PAPER_KIND else paper_model(row.base_model or row.model)


def language_group(row: LeaderboardRow) -> str:
    model = _known(row)
    if model is None:
        return UNKNOWN
    return MULTILINGUAL if model.multilingual else MONOLINGUAL


def _score(row: LeaderboardRow) -> float | None:
    value = row.nlue.score
    return None if value is None else round(100.0 * value, 2)


def _rows_table(rows: Sequence[LeaderboardRow]) -> Table:
    records = []
    for row in rows:
        known = _known(row)
        records.append(
            {
                "model": row.model,
                "pretraining": language_group(row),
                "base model": known.name if known and row.source != PAPER_KIND else "",
                "params (M)": row.params_millions,
                "NLUE score (%)": _score(row),
                "tasks": f"{len(row.nlue.task_scores)}/{len(TASK_NAMES)}",
                "data": row.data,
            }
        )
    return Table(
        "models_by_pretraining",
        "Encoders by pretraining languages, size and NLUE score",
        pd.DataFrame(records),
        [PAPER if r.source == PAPER_KIND else OURS for r in rows],
        formats={"params (M)": "{:.0f}"},
        notes=[
            "*pretraining*: ours, from each model's name and card; a run of ours is placed by the paper "
            "encoder it names as its base model (or is), else *unknown*. *NLUE score*: the mean of the "
            f"tasks' primary metrics over the tasks present (see *tasks*). {NLUE_SCORE_NOTE}"
        ],
    )


def _group_table(paper: Sequence[LeaderboardRow]) -> Table:
    """The mean primary metric per task of the paper's monolingual and multilingual encoders (our arithmetic)."""
    records = []
    for group in (MONOLINGUAL, MULTILINGUAL):
        members = [r for r in paper if language_group(r) == group]
        record = {"group": group, "models": len(members)}
        for task in TASK_NAMES:
            values = [r.task_scores[task] for r in members if task in r.task_scores]
            record[task_header(TASKS[task])] = round(100.0 * mean(values), 2) if values else None
        scores = [s for s in (_score(r) for r in members) if s is not None]
        record["NLUE score (%)"] = round(mean(scores), 2) if scores else None
        records.append(record)
    return Table(
        "models_monolingual_vs_multilingual",
        "The paper's encoders: monolingual vs multilingual, mean primary metric per task (%)",
        pd.DataFrame(records),
        [DERIVED] * len(records),
        formats={"models": "{:.0f}"},
        notes=[
            "Means of the paper's printed primary metrics over each group's models: our arithmetic and "
            "our grouping; the paper reports the models one by one."
        ],
    )


def params_figure(rows: Sequence[LeaderboardRow]) -> Figure:
    """NLUE score against parameters: the paper's encoders (filled) and our runs of known size (hollow stars)."""
    figure = Figure(figsize=(8.5, 4.6), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    crowded: dict[int, int] = {}
    for row in sorted(rows, key=lambda r: -(_score(r) or 0.0)):
        score = _score(row)
        if row.params_millions is None or score is None:
            continue
        group = language_group(row)
        paper = row.source == PAPER_KIND
        axes.scatter(
            [row.params_millions],
            [score],
            s=46 if paper else 110,
            marker="o" if paper else "*",
            color=COLOURS[group] if paper else "none",
            edgecolors=COLOURS[group],
            linewidths=1.4,
            zorder=3,
        )
        label = row.model if paper else f"{row.model} (ours, {len(row.nlue.task_scores)}/{len(TASK_NAMES)} tasks)"
        # Several encoders share a size (three of 110M): their labels step down instead of overprinting.
        step = crowded.setdefault(round(row.params_millions), 0)
        crowded[round(row.params_millions)] += 1
        axes.annotate(
            plot_text(label),
            (row.params_millions, score),
            xytext=(6, 4 - 9 * step),
            textcoords="offset points",
            fontsize=7.5,
        )
    for group in (MONOLINGUAL, MULTILINGUAL):
        axes.scatter([], [], color=COLOURS[group], label=f"{group} (paper)")
    axes.scatter([], [], marker="*", color="none", edgecolors="#374151", s=110, label="ours (known size)")
    axes.margins(x=0.14)  # room for the labels right of the largest encoders
    axes.set_xlabel("parameters (millions)")
    axes.set_ylabel("NLUE score (%, an nlue convention)")
    tidy(axes, "both", "Parameters vs NLUE score (mean primary metric over the tasks a row has)")
    axes.legend(fontsize=8, frameon=False, loc="lower right")
    return figure


def models_section(board: Leaderboard) -> Section:
    rows = board.rows
    paper = [r for r in rows if r.source == PAPER_KIND]
    ours = [r for r in rows if r.source != PAPER_KIND and not r.is_diagnostic and r.task_scores]
    section = Section(
        key="models",
        title="Models: monolingual vs multilingual, parameters vs score",
        sample=any(r.data == SAMPLE_DATA_LABEL for r in ours),
        intro=[
            "The NLUE paper's encoders, grouped by the languages they were pretrained on, and their size against "
            "their NLUE score; our NLUE runs join them where their base model is one of the paper's encoders."
        ],
    )
    if not ours:
        section.empty = "No NLUE run in the results folder: the paper's encoders alone."
    section.add(_group_table(paper), _rows_table(paper + ours))
    sized = [r for r in ours if r.params_millions is not None]
    caption = (
        f"{len(sized)} of our {len(ours)} NLUE runs have a known size (their base model is a paper encoder)."
        if ours
        else ""
    )
    if ours and not sized:
        caption = "None of our runs has a base model among the paper's encoders, so none has a known size."
    section.add(Chart("models_params_vs_score", "Parameters vs NLUE score", params_figure(paper + ours), caption))
    return section
