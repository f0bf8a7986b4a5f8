"""What the Space's one-table boards share (the exams' and neDIOM's): rows, their columns, files skipped.

The NLUE leaderboard has views, filters and its own row type (:mod:`nlue.boards.leaderboard`);
a benchmark with its own table needs only this: the rows as dicts keyed by column, the
results files that could not be read, which results files are its, and how a row names its data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from nlue.registry.benchmarks import is_shipped_task
from nlue.registry.tasks import TASKS

SAMPLE_DATA_LABEL = "⚠ sample data"
# Column widths in pixels: about one monospace character of the table's font, plus the cell's padding.
CHAR_PX, PADDING_PX, MIN_COLUMN_PX, MAX_COLUMN_PX = 9, 28, 56, 280


@dataclass
class TableBoard:
    columns: tuple[str, ...]
    rows: list[dict[str, Any]]
    skipped: list[str] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(self.columns))

    def column_widths(self) -> list[str]:
        """Pixel widths for the table, from each column's longest header word and cell.

        Left to the browser, a narrow column of short numbers squeezes its header into one
        letter per line ("All (all items)" ran down the Exams table); sized by the longest
        word, a header wraps between words only.
        """
        widths = []
        for column in self.columns:
            texts = [str(row.get(column, "") or "") for row in self.rows]
            longest = max([len(word) for word in column.split()] + [len(t) for t in texts])
            widths.append(f"{min(MAX_COLUMN_PX, max(MIN_COLUMN_PX, CHAR_PX * longest + PADDING_PX))}px")
        return widths


def is_task_of_kind(task_name: str, kind_type: type) -> bool:
    """Whether ``task_name`` is a shipped task (a paper's benchmark) whose kind is a ``kind_type``.

    A user's task of that kind (declared in a task file) is on its own board (:mod:`nlue.boards.tasks`),
    never in a paper's table.
    """
    task = TASKS.get(task_name)
    return task is not None and is_shipped_task(task) and isinstance(task.kind, kind_type)


def data_label(dataset: Mapping[str, Any]) -> str:
    """A results file's dataset as a row shows it: sample data flagged, otherwise its id."""
    return SAMPLE_DATA_LABEL if dataset.get("is_sample") else str(dataset.get("id") or "unknown data")


def interval_text(low: Any, high: Any) -> str:
    """A 0-1 interval in percent with one decimal (``12.5–40.0``), as every board prints one; empty unless both
    bounds are finite numbers (a run that drew none)."""
    finite = [isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in (low, high)]
    return f"{100 * float(low):.1f}–{100 * float(high):.1f}" if all(finite) else ""
