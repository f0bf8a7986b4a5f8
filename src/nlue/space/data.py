"""The data browser: pages and random draws of any config and split, labels shown by name.

Configs are loaded with :func:`nlue.data.access.load_task` (a Hub id, a built folder, or
the embedded sample, which is built on first use) and kept: the sample is a few KB per
config, and a real dataset is memory-mapped Arrow.
"""

from __future__ import annotations

import logging
import random
import threading
from typing import Any

import datasets
import pandas as pd

from nlue.data.access import is_sample, load_task
from nlue.errors import NlueError
from nlue.registry.tasks import TASKS, get_task

logger = logging.getLogger(__name__)

MAX_PAGE_SIZE = 100


class DataBrowser:
    """Loads configs lazily from one dataset source and serves pages of them as DataFrames."""

    def __init__(self, dataset: str | None = None) -> None:
        self.dataset = dataset
        self._lock = threading.Lock()
        self._loaded: dict[str, datasets.DatasetDict] = {}
        self._configs: tuple[str, ...] | None = None

    @property
    def is_sample(self) -> bool:
        return is_sample(self.dataset)

    def configs(self) -> tuple[str, ...]:
        """The registry's tasks this data source has, in the registry's order; read once.

        The embedded sample has every task (one sample repo per benchmark). A dataset named by the
        operator (``--dataset``) has the configs its card declares, often fewer: an NLUE build holds
        no exams, a partial build not even every NLUE task. When they cannot be listed (a Hub id with
        no network), every task is assumed and :meth:`load` says which one is missing when asked.
        """
        if self._configs is None:
            if self.dataset in (None, "", "sample"):
                self._configs = tuple(TASKS)
            else:
                try:  # a folder's card is read; a Hub id costs one request for its card
                    found = set(datasets.get_dataset_config_names(str(self.dataset)))
                except Exception as exc:  # listing is a convenience: loading a config still reports what fails
                    logger.warning("could not list the configs of %s (%s: %s); offering every task",
                                   self.dataset, type(exc).__name__, exc)  # fmt: skip
                    found = set(TASKS)
                self._configs = tuple(name for name in TASKS if name in found)
                logger.info("data source %s has %d of the registry's tasks", self.dataset, len(self._configs))
        return self._configs

    def load(self, config: str) -> datasets.DatasetDict:
        task = get_task(config)
        if task.name not in self.configs():
            raise NlueError(
                f"{task.name} is not in this Space's dataset ({self.dataset}); "
                f"it has {', '.join(self.configs()) or 'none of the registry tasks'}"
            )
        with self._lock:  # one load at a time: the first may build the sample repo
            if config not in self._loaded:
                self._loaded[config] = load_task(self.dataset, task)
            return self._loaded[config]

    def split(self, config: str, split: str) -> datasets.Dataset:
        data = self.load(config)
        if split not in data:
            raise NlueError(f"{config} has no {split!r} split here; it has {', '.join(data)}")
        return data[split]

    def page(self, config: str, split: str, page: int, page_size: int) -> tuple[pd.DataFrame, int, int]:
        """Rows of one page (1-based, clamped to the last page), the page shown, and the page count."""
        rows = self.split(config, split)
        size = max(1, min(int(page_size), MAX_PAGE_SIZE))
        pages = max(1, -(-rows.num_rows // size))
        page = min(max(1, int(page)), pages)
        indices = range((page - 1) * size, min(page * size, rows.num_rows))
        return self._frame(config, rows, list(indices)), page, pages

    def random(self, config: str, split: str, count: int, seed: int | None = None) -> pd.DataFrame:
        rows = self.split(config, split)
        count = max(1, min(int(count), MAX_PAGE_SIZE, rows.num_rows))
        indices = sorted(random.Random(seed).sample(range(rows.num_rows), count))
        return self._frame(config, rows, indices)

    def example(self, config: str, seed: int | None = None) -> dict[str, Any]:
        """One item with its input fields, for the "Try a model" tab (validation split when there is one)."""
        task = get_task(config)
        split = "validation" if "validation" in task.splits else task.splits[0]
        rows = self.split(config, split)
        return rows[random.Random(seed).randrange(rows.num_rows)]

    @staticmethod
    def _frame(config: str, rows: datasets.Dataset, indices: list[int]) -> pd.DataFrame:
        task = TASKS[config]
        subset = rows.select(indices)
        shown = [task.kind.browse_row(task, dict(row)) for row in subset]  # e.g. neDIOM marks the idiom's span
        columns: dict[str, list[Any]] = {"row": indices}
        for name in subset.column_names:
            if name == "idx":
                continue
            values = [row[name] for row in shown]
            feature = rows.features[name]
            if name == task.label_field:
                values = [task.kind.format_label(task, v) for v in values]
            elif isinstance(feature, datasets.Sequence | datasets.List):
                values = [" / ".join(_item_text(x) for x in v) for v in values]
            columns[name] = values
        return pd.DataFrame(columns)


def _item_text(value: Any) -> str:
    """One element of a list column (GMET's answers, an exam item's sources {name, url}) as text."""
    if isinstance(value, dict):
        return " ".join(str(v) for v in value.values() if v not in (None, ""))
    return str(value)
