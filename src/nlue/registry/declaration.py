"""A task's declaration fingerprint: a canonical hash of what, in a task's declaration, changes a run's numbers.

A run's identity (:mod:`nlue.run_identity`) records it as ``task_fingerprint``, so that a run after an
edit of a task file's prompts, labels or metrics is a run of another identity: it never quietly takes
the place of a result asked in other words or scored another way. Shipped tasks and a user's alike.

In the hash (:data:`NUMBER_FIELDS`): the kind; the input fields, the label field and the input shape;
the labels and the raw values that name them; every prompt (with its label words), idiom prompt, and
the answer and number lines each prompt language is asked with (the task's own, or the default its
language gets, so that the words a model reads are what is hashed); the metrics and the primary metric;
the language profile (the text normalisation); a regression's score range, a mask filling task's mask
and categories; an exam's language (its answers' normalisation).

Left out, because they describe and do not score: name (the identity names the task itself), title,
description, citation, licence, version, domains, sources, notes and field hints, the paper's facts,
and where the data comes from (the identity's ``dataset_fingerprint`` is the data itself).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from nlue.registry.label_prompts import ANSWER_LINES, NUMBER_LINES
from nlue.registry.spec import TaskSpec

NUMBER_FIELDS: tuple[str, ...] = (
    "problem_type", "input_fields", "label_field", "inputs", "label_names", "label_values", "prompts",
    "idiom_prompts", "metrics", "primary_metric", "profile", "score_range", "mask", "categories",
)  # fmt: skip
EXAM_FIELDS: tuple[str, ...] = ("language",)  # an ExamSpec's, beside the TaskSpec's


def _canonical(value: Any) -> Any:
    """``value`` as plain JSON values: dataclasses and mappings (read-only views too) as objects, tuples as lists."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    return value


def _asked_lines(task: TaskSpec) -> dict[str, Any]:
    """Per prompt language, the answer line and number line a generating model is shown: the task's or the default."""
    languages = dict.fromkeys([*task.prompts, *task.idiom_prompts])
    return {
        "answer_lines": {language: task.answer_lines.get(language) or ANSWER_LINES.get(language) for language in languages},
        "number_lines": {language: task.number_lines.get(language) or NUMBER_LINES.get(language) for language in languages},
    }  # fmt: skip


def declaration(task: TaskSpec) -> dict[str, Any]:
    """What of ``task`` changes numbers (module docstring), as plain JSON values."""
    chosen = {name: getattr(task, name) for name in NUMBER_FIELDS}
    chosen.update({name: getattr(task, name) for name in EXAM_FIELDS if hasattr(task, name)})
    return _canonical({**chosen, **_asked_lines(task)})


def task_fingerprint(task: TaskSpec) -> str:
    """SHA-256 of :func:`declaration` as canonical JSON (sorted keys): equal for equal declarations."""
    text = json.dumps(declaration(task), ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
