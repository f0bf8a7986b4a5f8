"""How many items a split has, without loading a dataset or a model: what a dry run counts requests from.

* the embedded sample (no dataset given): its JSON lines;
* a built folder: the row counts in its Parquet files' footers (``<config>/<split>-*.parquet``);
* a Hub id: nothing is downloaded for a dry run, so the paper's test size from the registry stands in,
  and the cost says it is an estimate.
"""

from __future__ import annotations

from pathlib import Path

from nlue.errors import NlueError


class Sizes:
    """Split sizes, each read once."""

    def __init__(self) -> None:
        self._known: dict[tuple[str | None, str, str], tuple[int, bool]] = {}

    def size(self, dataset: str | None, task: str, split: str = "test") -> tuple[int, bool]:
        """(items, exact): exact is False when the number is the paper's size standing in for a Hub dataset's."""
        key = (dataset, task, split)
        if key not in self._known:
            self._known[key] = _size(dataset, task, split)
        return self._known[key]


def _size(dataset: str | None, task_name: str, split: str) -> tuple[int, bool]:
    from nlue.registry.tasks import get_task

    task = get_task(task_name)
    if not dataset:
        from nlue.data.sample import sample_split

        return len(sample_split(task, split)), True
    folder = Path(dataset).expanduser()
    if folder.is_dir():
        import pyarrow.parquet as pq

        files = sorted((folder / task.name).glob(f"{split}-*.parquet"))
        if not files:
            raise NlueError(f"{dataset} has no {split} split of {task.name} ({folder / task.name}/{split}-*.parquet)")
        return sum(pq.ParquetFile(f).metadata.num_rows for f in files), True
    return task.paper_test_size, False
