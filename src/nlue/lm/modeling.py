"""Loading a classifier for a task, with the registry's labels, and refusing mismatched heads."""

from __future__ import annotations

import logging
from typing import Any

from nlue.errors import NlueError
from nlue.registry.kinds.base import named_labels
from nlue.registry.tasks import TaskSpec, get_task

logger = logging.getLogger(__name__)


def trainable_task(name: str) -> TaskSpec:
    """The registry task ``name``, refused with a clear message when its kind is not fine-tuned."""
    task = get_task(name)
    if not task.kind.trainable:
        raise NlueError(f"{task.name} is zero-shot (a {task.kind.name} task), not fine-tuned: {task.kind.how_to_score}")
    return task


def has_task_labels(config: Any) -> bool:
    """True when a checkpoint's config names its labels (a trained classifier, not a bare encoder)."""
    return named_labels(getattr(config, "id2label", None)) is not None


def check_label_mapping(config: Any, task: TaskSpec, model_name: str) -> None:
    """Refuse a classifier whose labels are not the registry's, in the registry's order.

    A bare encoder (no named labels) is fine: its head is new. A classifier trained
    elsewhere with, say, MNLI labels in another order would be silently mis-scored.
    The rule itself is the task kind's (:meth:`~nlue.registry.kinds.TaskKind.head_mismatch`).
    """
    labels = named_labels(getattr(config, "id2label", None))
    if labels is None:
        return
    problem = task.kind.head_mismatch(task, len(labels), labels)
    if problem:
        raise NlueError(
            f"{model_name}: {problem}; scoring it would mis-read its outputs. Start from the base encoder, or "
            "relabel the checkpoint's config.id2label/label2id if the heads really mean the same classes."
        )


def classifier_config_kwargs(task: TaskSpec) -> dict[str, Any]:
    """The config overrides that give a fresh head the registry's labels."""
    return task.kind.classifier_config(task)
