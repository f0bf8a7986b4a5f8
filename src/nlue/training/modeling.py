"""Loading a classifier for a task, with the registry's labels, and refusing mismatched heads."""

from __future__ import annotations

import logging
import re
from typing import Any

from nlue.errors import NlueError
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)

_DEFAULT_LABEL = re.compile(r"LABEL_\d+")


def has_task_labels(config: Any) -> bool:
    """True when a checkpoint's config names its labels (a trained classifier, not a bare encoder)."""
    id2label = getattr(config, "id2label", None) or {}
    return bool(id2label) and not all(_DEFAULT_LABEL.fullmatch(str(v)) for v in id2label.values())


def check_label_mapping(config: Any, task: TaskSpec, model_name: str) -> None:
    """Refuse a classifier whose labels are not the registry's, in the registry's order.

    A bare encoder (no named labels) is fine: its head is new. A classifier trained
    elsewhere with, say, MNLI labels in another order would be silently mis-scored.
    """
    if not has_task_labels(config):
        return
    found = {int(k): str(v) for k, v in config.id2label.items()}
    if task.problem_type == "regression":
        if len(found) != 1:
            raise NlueError(
                f"{model_name}: has a {len(found)}-label classifier; {task.name} needs one regression output"
            )
        return
    expected = task.id2label
    if found != expected:
        shown = ", ".join(f"{i}={n}" for i, n in sorted(found.items()))
        wanted = ", ".join(f"{i}={n}" for i, n in expected.items())
        raise NlueError(
            f"{model_name}: its classifier labels ({shown}) are not {task.name}'s labels in the registry's order "
            f"({wanted}); scoring it would mis-read its outputs. Start from the base encoder, or relabel the "
            "checkpoint's config.id2label/label2id if the heads really mean the same classes."
        )


def classifier_config_kwargs(task: TaskSpec) -> dict[str, Any]:
    """The config overrides that give a fresh head the registry's labels."""
    if task.problem_type == "regression":
        return {"num_labels": 1, "problem_type": "regression", "id2label": {0: "score"}, "label2id": {"score": 0}}
    return {
        "num_labels": task.num_labels,
        "problem_type": "single_label_classification",
        "id2label": task.id2label,
        "label2id": task.label2id,
    }
