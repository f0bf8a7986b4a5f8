"""The data browser: pages and random draws of any config and split, labels shown by name.

Configs are loaded with :func:`nlue.data.access.load_task` (a Hub id, a built folder, or
the embedded sample, which is built on first use) and kept: the sample is a few KB per
config, and a real dataset is memory-mapped Arrow. The browser may read several datasets at
once (NLUE's build and the build of a user's own task, say): each config is read from the first
of them that has it. The embedded sample has the shipped tasks only; a task from a task file is
browsed from its own build.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Sequence
from typing import Any

import datasets
import pandas as pd

from nlue.data.access import is_sample, load_task
from nlue.errors import NlueError
from nlue.registry.benchmarks import is_shipped_task
from nlue.registry.tasks import TASKS, get_task

logger = logging.getLogger(__name__)

MAX_PAGE_SIZE = 100


def _sources(dataset: str | Sequence[str | None] | None) -> tuple[str | None, ...]:
    """The datasets to read, in order; None (or ``sample``) is the embedded sample."""
    given = [dataset] if dataset is None or isinstance(dataset, str) else list(dataset)
    out = [None if value in (None, "", "sample") else str(value) for value in given]
    return tuple(dict.fromkeys(out)) or (None,)


class DataBrowser:
    """Loads configs lazily from one dataset source or several and serves pages of them as DataFrames."""

    def __init__(self, dataset: str | Sequence[str | None] | None = None) -> None:
        self.sources = _sources(dataset)
        self.dataset = self.sources[0]
        self._lock = threading.Lock()
        self._loaded: dict[str, datasets.DatasetDict] = {}
        self._where: dict[str, str | None] | None = None  # config -> the source it is read from

    @property
    def is_sample(self) -> bool:
        """Whether any of the configs offered comes from the embedded sample data."""
        return any(is_sample(source) for source in self.sources)

    def _configs_of(self, source: str | None) -> set[str] | None:
        """The registry's tasks one source has: the sample's shipped tasks, or the configs its card declares;
        None when they cannot be listed (a Hub id with no network)."""
        if source is None:
            return {name for name, task in TASKS.items() if is_shipped_task(task)}
        try:  # a folder's card is read; a Hub id costs one request for its card
            return set(datasets.get_dataset_config_names(source))
        except Exception as exc:  # listing is a convenience: loading a config still reports what fails
            logger.warning("could not list the configs of %s (%s: %s); it is offered for the tasks no other "
                           "source lists", source, type(exc).__name__, exc)  # fmt: skip
            return None

    def configs(self) -> tuple[str, ...]:
        """The registry's tasks the data sources have, in the registry's order; read once.

        The embedded sample has every shipped task (one sample repo per benchmark). A dataset named by the
        operator (``--dataset``) has the configs its card declares, often fewer: an NLUE build holds
        no exams, a partial build not even every NLUE task, a user's build its own task. A source whose
        configs cannot be listed (a Hub id with no network) is assumed to have every task the others do not
        list, and :meth:`load` says which one is missing when asked.
        """
        if self._where is None:
            where: dict[str, str | None] = {}
            unlisted = []
            for source in self.sources:
                found = self._configs_of(source)
                if found is None:
                    unlisted.append(source)
                for name in found or ():
                    where.setdefault(name, source)
            for source in unlisted:  # after every listed source, so that none takes a config another lists
                for name in TASKS:
                    where.setdefault(name, source)
            self._where = {name: where[name] for name in TASKS if name in where}
            logger.info("data sources %s have %d of the registry's tasks", self.sources, len(self._where))
        return tuple(self._where)

    def is_sample_config(self, config: str) -> bool:
        """Whether ``config`` is read from the embedded sample data."""
        return config in self.configs() and is_sample(self.source_of(config))

    def source_of(self, config: str) -> str | None:
        """The dataset a config is read from (None: the embedded sample)."""
        self.configs()
        return (self._where or {}).get(config)

    def load(self, config: str) -> datasets.DatasetDict:
        task = get_task(config)
        if task.name not in self.configs():
            named = ", ".join(str(source or "the embedded sample") for source in self.sources)
            raise NlueError(
                f"{task.name} is not in this Space's dataset ({named}); "
                f"it has {', '.join(self.configs()) or 'none of the registry tasks'}"
            )
        with self._lock:  # one load at a time: the first may build the sample repo
            if config not in self._loaded:
                self._loaded[config] = load_task(self.source_of(task.name), task)
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
