"""The boards of one results folder or several: the papers' rows once, then every folder's runs, named by folder.

Each board reads one folder (:func:`~nlue.boards.leaderboard.load_leaderboard`,
:func:`~nlue.boards.exams.load_exam_board`, :func:`~nlue.boards.nediom.load_nediom_board`).
For several folders (:mod:`nlue.results_folders`: results folders and sweep folders) each folder is
read by the same board, its runs named ``<folder label>/<run>`` so that two sweeps' runs of one name
stay apart, in the order the folders were given, and the papers' rows are added once, where the
board puts them. The Space's tabs and `nlue report` both read their tables here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.boards.exams import load_exam_board
from nlue.boards.leaderboard import PAPER_KIND, Leaderboard, load_leaderboard
from nlue.boards.nediom import load_nediom_board
from nlue.boards.table import TableBoard
from nlue.results_folders import ResultsFolder

FLOOR_KIND = "floor"  # the neDIOM board's rows of what answering one class scores: the data's, not a run's


def _named(folder: ResultsFolder, name: str) -> str:
    return f"{folder.label}/{name}" if folder.label else name


def leaderboard_of(folders: Sequence[ResultsFolder], sources: Mapping[Path, str] | None = None) -> Leaderboard:
    """The NLUE leaderboard of the folders; ``sources``: a folder's rows' source (``submitted``), else ``local``."""
    sources = sources or {}
    boards = [(f, load_leaderboard(f.path, sources.get(f.path, "local"))) for f in folders]
    paper = [r for r in boards[0][1].rows if r.source == PAPER_KIND] if boards else []
    rows = [
        dataclasses.replace(row, model=_named(folder, row.model))
        for folder, board in boards
        for row in board.rows
        if row.source != PAPER_KIND
    ]
    skipped = [_named(folder, line) for folder, board in boards for line in board.skipped]
    return Leaderboard(paper + rows, skipped)


def _table_of(
    folders: Sequence[ResultsFolder], load: Callable[[Path], TableBoard], is_paper: Callable[[Mapping[str, Any]], bool]
) -> TableBoard:
    """A one-table board of the folders: each folder's runs (and floors, once each) in order, the paper's rows last."""
    boards = [(f, load(f.path)) for f in folders]
    ours: list[dict[str, Any]] = []
    for folder, board in boards:
        for row in board.rows:
            if is_paper(row):
                continue
            if row.get("kind") == FLOOR_KIND:  # the same test labels' floors in two folders are one row
                if row not in ours:
                    ours.append(row)
            else:
                ours.append({**row, "model": _named(folder, str(row["model"]))})
    paper = [r for r in boards[0][1].rows if is_paper(r)] if boards else []
    skipped = [_named(folder, line) for folder, board in boards for line in board.skipped]
    columns = boards[0][1].columns if boards else ()
    return TableBoard(columns, ours + paper, skipped)


def exam_board_of(folders: Sequence[ResultsFolder]) -> TableBoard:
    """The exams' board of the folders (the UrduMMLU paper's Table 4 rows last)."""
    return _table_of(folders, load_exam_board, lambda row: str(row.get("kind", "")).startswith(PAPER_KIND))


def nediom_board_of(folders: Sequence[ResultsFolder]) -> TableBoard:
    """The neDIOM board of the folders: runs, floors, then the paper's Table 3."""
    return _table_of(folders, load_nediom_board, lambda row: row.get("kind") == PAPER_KIND)
