"""What the "Try a model" tab does with a visitor's text: check it, run the model, format the answer.

The classifier input is built by :func:`nlue.registry.inputs.text_pair` and scored by
:func:`nlue.training.predict.predict_logits`, the same code the evaluator uses, so the Space shows
what a results file measured.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.registry.tasks import STSB_SCORE_RANGE, TASKS, WG_BLANK, TaskSpec
from nlue.space.cache import LoadedModel
from nlue.space.models import ModelEntry, labels_fit
from nlue.training.predict import predict_logits, probabilities

logger = logging.getLogger(__name__)

# Tasks a classifier can be tried on (GMET has its own tab: it needs a masked LM).
TRY_TASKS: tuple[str, ...] = tuple(t.name for t in TASKS.values() if t.problem_type != "mask_fill")
MAX_FIELDS: int = max(len(TASKS[t].input_fields) for t in TRY_TASKS)

# Hints shown under an input field, where the field needs more than "type text here".
FIELD_HINTS: Mapping[tuple[str, str], str] = {
    ("wg", "sentence"): f"Mark the blank with {WG_BLANK} (exactly one).",
    ("cr", "sentence2"): "The first sentence with the pronoun replaced by a candidate.",
    ("stsb", "sentence2"): "The model scores similarity from 0 (unrelated) to 5 (same meaning).",
}


class InputError(NlueError):
    """The visitor's input cannot be used; the message says how to fix it."""


def field_label(field: str) -> str:
    """A field name as a form label: ``ad_description`` -> ``Ad description``."""
    return field.replace("_", " ").capitalize()


def validate_inputs(task: TaskSpec, values: Sequence[str | None], max_chars: int) -> dict[str, str]:
    """The example dict for ``task`` from the form's text boxes (extra boxes are ignored)."""
    example: dict[str, str] = {}
    for field, value in zip(task.input_fields, values, strict=False):
        text = (value or "").strip()
        label = field_label(field)
        if not text:
            raise InputError(f"{label} is empty: {task.title} needs {', '.join(map(field_label, task.input_fields))}.")
        if len(text) > max_chars:
            raise InputError(
                f"{label} is {len(text):,} characters long; this Space accepts up to {max_chars:,} per field. "
                "Shorten it and try again."
            )
        example[field] = text
    if len(example) < len(task.input_fields):
        raise InputError(f"{task.title} needs {len(task.input_fields)} fields; got {len(example)}.")
    if task.name == "wg" and example["sentence"].count(WG_BLANK) != 1:
        raise InputError(f"Mark the blank in the sentence with exactly one {WG_BLANK}; the options fill it.")
    return example


def format_prediction(task: TaskSpec, logits: np.ndarray) -> dict[str, float] | str:
    """What gr.Label shows: class probabilities by label name, or the stsb score as text."""
    row = np.asarray(logits, dtype=np.float64).reshape(-1)
    if task.problem_type == "regression":
        low, high = STSB_SCORE_RANGE
        score = float(row[0])
        clipped = min(max(score, low), high)
        note = "" if abs(clipped - score) < 0.005 else f" (the model said {score:.2f})"
        return f"similarity {clipped:.2f} / {high:g}{note}"
    probs = probabilities(row[None, :])[0]
    return {name: float(p) for name, p in zip(task.label_names, probs, strict=True)}


def check_head(entry: ModelEntry, task: TaskSpec, config: Any) -> None:
    """Refuse a loaded classifier whose head does not read out ``task``'s labels in the registry's order."""
    if not labels_fit(task, config):
        raise NlueError(
            f"{entry.name}: its classifier head ({config.num_labels} outputs, labels {dict(config.id2label)}) "
            f"does not read out {task.name}'s labels {task.id2label}"
        )


def predict_example(loaded: LoadedModel, task: TaskSpec, example: Mapping[str, str]) -> dict[str, float] | str:
    with loaded.lock:
        logits = predict_logits(loaded.model, loaded.tokenizer, task, [example], batch_size=1)
    return format_prediction(task, logits[0])
