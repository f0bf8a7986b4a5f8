"""The report's neDIOM section: Table 3 (8 inputs x settings) with floors, and Figures 3-5 from our runs.

The table is the Space's neDIOM board (:func:`nlue.boards.sections.nediom_board_of`): our
runs, the floors of the test labels they used, then the paper's seven models as printed. Added
here: the floors of the paper's own test set (our arithmetic on its label counts), and a † on
every printed cell that sits on one of them, where the paper's model probably answered one class.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import pandas as pd

from nlue.boards.nediom import LEGEND, VARIANT_COLUMNS
from nlue.boards.sections import nediom_board_of
from nlue.evals.report.nediom_figures import IdiomCell, idiom_figure, shots_figure, size_figure, sized_families
from nlue.evals.report.runs import Gathered
from nlue.evals.report.types import DERIVED, FLOOR, NOTE, OURS, PAPER, CellFlag, Chart, Section, Table
from nlue.evals.report.wordings import wording_table
from nlue.idioms.table import floors
from nlue.registry.kinds.idiomaticity import VARIANTS
from nlue.registry.nediom import PAPER_IDIOMATIC, PAPER_LITERAL, PAPER_POOL_SIZE, TABLE3_SETTINGS
from nlue.results_folders import ResultsFolder

logger = logging.getLogger(__name__)

TASK = "nediom"
# The paper's test set: its 408 idiomatic and 118 literal items less the 20-item training pool, 10 per label.
PAPER_TEST_LABELS = (PAPER_IDIOMATIC - PAPER_POOL_SIZE // 2, PAPER_LITERAL - PAPER_POOL_SIZE // 2)
PRINTED_HALF_UNIT = 0.005 + 1e-9  # Table 3 prints two decimals


def paper_floors() -> dict[str, float]:
    """Macro-F1 of answering one class always on the paper's test set (398 idiomatic, 108 literal: derived)."""
    idiomatic, literal = PAPER_TEST_LABELS
    return floors(TASK, [0] * idiomatic + [1] * literal)


def _number(text: object) -> float | None:
    """The macro-F1 in a board cell ("0.44", "0.61 ± 0.05"), or None for "-" and blanks (NaN in the frame)."""
    try:
        value = float(str(text).split("±")[0])
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _floor_notes(rows: Sequence[Mapping[str, object]], origins: Sequence[str], values: Mapping[str, float]) -> list:
    flags = []
    for position, (row, origin) in enumerate(zip(rows, origins, strict=True)):
        if origin != PAPER:
            continue
        for column in VARIANT_COLUMNS:
            number = _number(row.get(column))
            for name, floor in values.items():
                if number is not None and abs(number - floor) <= PRINTED_HALF_UNIT:
                    flags.append(CellFlag(position, column, f"on the {name} floor", _FLOOR_NOTE, NOTE))
    return flags


_FLOOR_NOTE = (
    "A printed cell equal, to its two decimals, to what answering one class always scores on the paper's test set "
    "(the *ours, from the paper's numbers* rows: 398 idiomatic and 108 literal items, the paper's 408 and 118 less "
    "the 10 per label of its training pool, our derivation): the paper's model there probably answered one class."
)


def _table3(folders: Sequence[ResultsFolder]) -> tuple[Table, list[str]]:
    board = nediom_board_of(folders)
    derived = paper_floors()
    ours = [r for r in board.rows if r["kind"] not in ("paper", "floor")]
    ours_floors = [r for r in board.rows if r["kind"] == "floor"]
    paper = [r for r in board.rows if r["kind"] == "paper"]
    extra = [
        {
            "model": f"{name} (paper's test set)",
            "kind": "floor",
            "setting": "-",
            "data": "neDIOM test (derived)",
            **dict.fromkeys(VARIANT_COLUMNS, f"{value:.2f}"),
        }
        for name, value in derived.items()
    ]
    rows = [*ours, *ours_floors, *extra, *paper]
    origins = [OURS] * len(ours) + [FLOOR] * len(ours_floors) + [DERIVED] * len(extra) + [PAPER] * len(paper)
    table = Table(
        key="nediom_table3",
        title="neDIOM Table 3 · macro-F1 by input (8 variants) and setting",
        frame=pd.DataFrame(rows, columns=list(board.columns)),
        origins=origins,
        flags=_floor_notes(rows, origins, derived),
        notes=[
            LEGEND,
            "Variant columns: "
            + "; ".join(
                f"*{c}*: context {v.context}, idiom {'given' if v.with_idiom else 'not given'}"
                for c, v in zip(VARIANT_COLUMNS, VARIANTS, strict=True)
            )
            + ".",
            "The paper prints two cells with one decimal (0.4: GPT-3.5, S1+S2, 5-shot without the idiom; 0.2: "
            "BLOOM-560m, S2+S3, 10-shot with it), shown here as 0.40 and 0.20; `-` = the paper ran nothing there.",
        ],
    )
    return table, board.skipped


def _cells(table: Table) -> list[IdiomCell]:
    """Our runs' numbers from the table's rows of origin *ours*."""
    cells = []
    for position, origin in enumerate(table.origins):
        if origin != OURS:
            continue
        row = table.frame.iloc[position]
        for column, variant in zip(VARIANT_COLUMNS, VARIANTS, strict=True):
            number = _number(row[column])
            if number is not None:
                cells.append(
                    IdiomCell(str(row["model"]), str(row["setting"]), variant.context, variant.with_idiom, number)
                )
    return cells


def _settings(cells: Sequence[IdiomCell]) -> list[str]:
    """The settings our runs have, in the paper's order (zero-shot, 5-shot, 10-shot), generation rows after."""
    present = dict.fromkeys(c.setting for c in cells)

    def order(setting: str) -> tuple[int, str]:
        base = setting.split(" · ")[0]
        return (TABLE3_SETTINGS.index(base) if base in TABLE3_SETTINGS else len(TABLE3_SETTINGS), setting)

    return sorted(present, key=order)


def _our_floors(table: Table) -> dict[str, float]:
    """The floors of our runs' test labels, when they all used one test set (else no floor lines)."""
    rows = [table.frame.iloc[i] for i, origin in enumerate(table.origins) if origin == FLOOR]
    if len({str(r["data"]) for r in rows}) != 1:
        return {}
    return {str(r["model"]): float(_number(r[VARIANT_COLUMNS[0]]) or 0.0) for r in rows}


def nediom_section(folders: Sequence[ResultsFolder], gathered: Gathered) -> tuple[Section, list[str]]:
    table, skipped = _table3(folders)
    cells = _cells(table)
    section = Section(
        key="nediom",
        title="neDIOM: the paper's Table 3 and Figures 3-5 from our runs",
        intro=[
            "Idiomatic vs literal, macro-F1. Rows *paper, as printed* are the neDIOM paper's Table 3 (its 7 models "
            "in 3 settings); rows *ours* are our runs, one per run name and setting, with the floors of the test "
            "labels they used. The paper names no inconsistent cell here; † marks printed cells on a floor.",
        ],
        sample=gathered.sample_count("nediom") > 0,
    )
    section.add(table)
    if not cells:
        section.empty = "No neDIOM run in the results folder: the paper's Table 3 alone, and no figures."
        return section, skipped
    settings = _settings(cells)
    lines = _our_floors(table)
    section.add(
        Chart(
            "nediom_figure3",
            "neDIOM Figure 3 (ours): with vs without the idiom, by model and context",
            idiom_figure(cells, settings, lines),
            "Our runs' macro-F1 per context window; solid bars give the model the idiom, hatched ones do not. "
            "Dotted and dashed lines: the floors of our test labels.",
        ),
        Chart(
            "nediom_figure4",
            "neDIOM Figure 4 (ours): zero-shot vs 5- and 10-shot",
            shots_figure(cells, settings, lines),
            "Mean macro-F1 over the contexts each run has, per setting our runs have"
            + (
                ""
                if len(settings) > 1
                else " (only one here: run `nlue idioms eval --setting 5-shot 10-shot` for the others)"
            )
            + ".",
        ),
    )
    families = sized_families(cells)
    if families:
        section.add(
            Chart(
                "nediom_figure5",
                "neDIOM Figure 5 (ours): by model size",
                size_figure(cells, families, settings),
                "Families with several sizes among our runs (the paper: BLOOM 560m, 1b1, 3b); sizes are read from "
                "the models' names.",
            )
        )
    else:
        section.add(
            "Figure 5 (by model size) needs runs of one model family at two or more sizes, read from the model "
            "names (e.g. bloom-560m and bloom-1b1): our runs have none."
        )
    worded = wording_table(
        gathered.of("nediom"), "nediom_prompt_wordings", "Our runs · prompt wordings (--wordings all)"
    )
    if worded is not None:
        section.add(worded)
    logger.debug("neDIOM: %d of our cells in %d settings", len(cells), len(settings))
    return section, skipped
