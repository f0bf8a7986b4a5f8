"""What the Space's one-table boards share (the exams' and neDIOM's): rows, their columns, files skipped.

The NLUE leaderboard has views, filters and its own row type (:mod:`nlue.space.leaderboard`);
a benchmark with its own table needs only this: the rows as dicts keyed by column, the
results files that could not be read, which results files are its, and how a row names its data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from nlue.registry.tasks import TASKS

SAMPLE_DATA_LABEL = "⚠ sample data"


@dataclass
class TableBoard:
    columns: tuple[str, ...]
    rows: list[dict[str, Any]]
    skipped: list[str] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(self.columns))


def is_task_of_kind(task_name: str, kind_type: type) -> bool:
    """Whether ``task_name`` is a registered task whose kind is a ``kind_type``."""
    task = TASKS.get(task_name)
    return task is not None and isinstance(task.kind, kind_type)


def data_label(dataset: Mapping[str, Any]) -> str:
    """A results file's dataset as a row shows it: sample data flagged, otherwise its id."""
    return SAMPLE_DATA_LABEL if dataset.get("is_sample") else str(dataset.get("id") or "unknown data")
