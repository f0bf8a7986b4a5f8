"""`datasets` features of each config: decided by the task's kind from the registry's fields."""

from __future__ import annotations

import datasets

from nlue.registry.spec import TaskSpec


def task_features(task: TaskSpec) -> datasets.Features:
    """The typed columns of a built config: inputs, label (ClassLabel or float) or answers, idx."""
    return task.kind.features(task)
