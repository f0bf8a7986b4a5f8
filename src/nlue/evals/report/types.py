"""What `nlue report` is made of: sections of tables and charts, each row saying whose numbers it holds.

The builders (:mod:`nlue.evals.report.nlue`, ``report_nediom``, ``report_mcq``, ``report_models``,
``report_significance``) fill these; :mod:`nlue.evals.report.render` writes them as one HTML
page, Markdown and CSV. Every row carries its origin, so that no number of ours is ever shown
unmarked beside the papers' (the architecture's "ours vs the paper's").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

# Whose numbers a row holds. The labels are what the page and the CSV files print in the "numbers" column.
PAPER, OURS, FLOOR, DERIVED = "paper", "ours", "floor", "derived"
ORIGIN_LABELS: dict[str, str] = {
    PAPER: "paper, as printed",
    OURS: "ours",
    FLOOR: "floor (ours)",
    DERIVED: "ours, from the paper's numbers",
}
ORIGIN_COLUMN = "numbers"
# A flag marks a cell: "inconsistent" = fails a consistency check (the leaderboard's ⚠); "note" = worth a look.
INCONSISTENT, NOTE = "inconsistent", "note"


@dataclass(frozen=True)
class CellFlag:
    """One flagged cell: the row's position in its table, the column, a few words, and the reason."""

    row: int
    column: str
    summary: str
    explanation: str
    kind: str = INCONSISTENT


@dataclass
class Table:
    """A table as shown: display values per column, the origin of each row, flagged cells and notes (Markdown)."""

    key: str  # the CSV file's name without .csv, unique in the report
    title: str
    frame: pd.DataFrame
    origins: list[str]
    flags: list[CellFlag] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    collapsed: bool = False  # long tables (every pair of runs) fold away on the page
    formats: dict[str, str] = field(default_factory=dict)  # column -> format of its numbers (default {:.2f})
    styles: dict[tuple[int, str], str] = field(default_factory=dict)  # (row, column) -> a CSS class of the page

    def __post_init__(self) -> None:
        if len(self.origins) != len(self.frame):
            raise ValueError(f"table {self.key}: {len(self.origins)} origins for {len(self.frame)} rows")

    def flag_at(self, row: int, column: str) -> CellFlag | None:
        return next((f for f in self.flags if f.row == row and f.column == column), None)


@dataclass
class Chart:
    """A matplotlib figure, written as ``<key>.png`` beside the page."""

    key: str
    title: str
    figure: Any  # matplotlib.figure.Figure
    caption: str = ""


@dataclass
class Section:
    key: str
    title: str
    intro: list[str] = field(default_factory=list)  # paragraphs (Markdown) before the section's parts
    parts: list[Table | Chart | str] = field(default_factory=list)  # tables, charts and paragraphs, in order
    empty: str | None = None  # said in place of our numbers when the results folder has none for this section
    sample: bool = False  # some of our numbers here come from the embedded sample data

    def add(self, *items: Table | Chart | str) -> None:
        """Append tables, charts or paragraphs (Markdown) in the order they are shown."""
        self.parts.extend(items)

    @property
    def tables(self) -> list[Table]:
        return [part for part in self.parts if isinstance(part, Table)]

    @property
    def charts(self) -> list[Chart]:
        return [part for part in self.parts if isinstance(part, Chart)]


@dataclass
class Report:
    title: str
    results_dir: str
    sections: list[Section]
    sample_files: int = 0  # results files scored on the embedded sample
    total_files: int = 0
    skipped: list[str] = field(default_factory=list)  # results files no section could read, and why
    created: str = ""

    @property
    def sample(self) -> bool:
        return self.sample_files > 0
