"""The embedded sample data: a few dozen items per task, written by the nlue developers.

It exists to try every tool end to end without downloading anything; it is not the
NLUE benchmark and scores on it mean nothing about a model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.registry.tasks import TASK_NAMES, TASKS, TaskSpec

SAMPLE_TAG = "sample-data"  # the card tag `nlue build` gives a build of the embedded sample
# What every command that scores prints when the data is the sample, so a number is never mistaken for a result.
SAMPLE_DATA_NOTE = "SAMPLE DATA: scored on the embedded sample, these numbers mean nothing about the model"


def sample_data_dir() -> Path:
    """The folder of ``<config>/<split>.jsonl`` sample files shipped inside the package."""
    return Path(str(files("nlue") / "sample_data"))


def sample_records(include_test_only: bool = True) -> Iterator[tuple[TaskSpec, dict[str, Any]]]:
    """Every sample record of NLUE with its task, in registry and split order.

    ``include_test_only=False`` leaves out the tasks that have only a test split (GMET):
    what the download-free baselines train on must not hold the items they are scored on.
    """
    for task in (TASKS[name] for name in TASK_NAMES):
        if "train" not in task.splits and not include_test_only:
            continue
        for split in task.splits:
            path = sample_data_dir() / task.name / f"{split}.jsonl"
            for line in path.read_text(encoding="utf-8").splitlines():
                yield task, json.loads(line)


def sample_split(task: TaskSpec, split: str) -> list[dict[str, Any]]:
    """The sample records of one split of ``task``, of any benchmark (an exam's ``demo`` pool, say), in file order."""
    if split not in task.splits:
        raise NlueError(f"task {task.name!r} has the splits {', '.join(task.splits)}, not {split!r}")
    path = sample_data_dir() / task.name / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
