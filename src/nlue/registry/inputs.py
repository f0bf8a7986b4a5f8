"""How a task's item becomes the text, or text pair, a sequence classifier reads.

The task's kind decides (:meth:`nlue.registry.kinds.TaskKind.text_pair`) from the input
shape the registry declares; these functions are the shared entry point of the trainers,
the evaluator and the Space.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlue.registry.spec import TaskSpec


def text_pair(task: TaskSpec, example: Mapping[str, Any]) -> tuple[str, str | None]:
    """The (first, second) texts of one example; second is None for single-text tasks."""
    return task.kind.text_pair(task, example)


def batch_text_pairs(task: TaskSpec, batch: Mapping[str, Sequence[Any]]) -> tuple[list[str], list[str] | None]:
    """Column-wise :func:`text_pair` for ``datasets.map(batched=True)``."""
    return task.kind.batch_text_pairs(task, batch)
