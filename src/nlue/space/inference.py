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
from nlue.registry.tasks import TASKS, TRAINABLE_TASKS, TaskSpec
from nlue.space.cache import LoadedModel
from nlue.space.models import ModelEntry, labels_fit
from nlue.text.normalize import normalize_text
from nlue.training.predict import predict_logits, probabilities

logger = logging.getLogger(__name__)

# Tasks a classifier can be tried on, read live from the registry (GMET has its own tab: it needs a masked LM).
TRY_TASKS: Sequence[str] = TRAINABLE_TASKS


def max_fields() -> int:
    """The most input fields any task of the Try tab has: the form's number of text boxes."""
    return max(len(TASKS[t].input_fields) for t in TRY_TASKS)


def field_hint(task: TaskSpec, field: str) -> str:
    """The hint under an input field, where it needs more than "type text here" (declared in the registry)."""
    spec = task.input_spec
    if spec.blank is not None and field == spec.blank_field:
        return f"Mark the blank with {spec.blank} (exactly one)."
    return task.field_hints.get(field, "")


class InputError(NlueError):
    """The visitor's input cannot be used; the message says how to fix it."""


def field_label(field: str) -> str:
    """A field name as a form label: ``ad_description`` -> ``Ad description``."""
    return field.replace("_", " ").capitalize()


def checked_text(value: object, label: str) -> str:
    """``value`` stripped, if it is Unicode text a tokenizer can take; InputError otherwise.

    A JSON body may carry anything where a text belongs (a number, a file object) and may escape
    half of a UTF-16 pair alone (``"\\ud800"``), which Python decodes to a str that is no Unicode
    text: tokenizers and UTF-8 encoders fail on it deep inside. Both are the caller's to fix.
    An empty result means the field is empty.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{label} must be a text; got {type(value).__name__}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        raise InputError(
            f"{label} holds a lone surrogate (U+{code:04X}, character {exc.start + 1}): half of a UTF-16 pair, "
            "not a character. Send the text as UTF-8, or both halves of the pair."
        ) from None
    return value.strip()


def is_blank(text: str) -> bool:
    """True when nothing is left of ``text`` once normalised: spaces and invisible characters only.

    The project's normaliser decides (zero-width spaces, stray joiners, orphaned variation
    selectors go), so that the Space calls empty what a built dataset would hold as empty.
    """
    return not normalize_text(text)


def validate_inputs(task: TaskSpec, values: Sequence[str | None], max_chars: int) -> dict[str, str]:
    """The example dict for ``task`` from the form's text boxes (extra boxes are ignored)."""
    example: dict[str, str] = {}
    for field, value in zip(task.input_fields, values, strict=False):
        label = field_label(field)
        text = checked_text(value, label)
        if len(text) > max_chars:
            raise InputError(
                f"{label} is {len(text):,} characters long; this Space accepts up to {max_chars:,} per field. "
                "Shorten it and try again."
            )
        if is_blank(text):  # after the length check: normalising a long text costs
            raise InputError(
                f"{label} is empty: {task.title} needs {', '.join(map(field_label, task.input_fields))} "
                "(spaces and invisible characters such as zero-width spaces alone count as empty)."
            )
        example[field] = text
    if len(example) < len(task.input_fields):
        raise InputError(f"{task.title} needs {len(task.input_fields)} fields; got {len(example)}.")
    problem = task.kind.check_row(task, example)
    if problem is not None:
        raise InputError(f"{field_label(problem.field)}: {problem.reason}.")
    return example


def prediction_record(task: TaskSpec, logits: np.ndarray) -> dict[str, Any]:
    """A prediction for API clients, as JSON: the label and every label's probability, or the score.

    The score is clipped to the task's range, as on the page; ``model_score`` keeps what the model said.
    """
    row = np.asarray(logits, dtype=np.float64).reshape(-1)
    if not task.kind.has_classes:
        low, high = task.score_range or (float("-inf"), float("inf"))
        score = float(row[0])
        return {"task": task.name, "score": min(max(score, low), high), "model_score": score, "range": [low, high]}
    probs = probabilities(row[None, :])[0]
    shares = {name: float(p) for name, p in zip(task.label_names, probs, strict=True)}
    return {"task": task.name, "label": max(shares, key=shares.__getitem__), "probabilities": shares}


def format_prediction(task: TaskSpec, logits: np.ndarray) -> dict[str, float] | str:
    """What gr.Label shows: class probabilities by label name, or the stsb score as text (from :func:`prediction_record`)."""
    record = prediction_record(task, logits)
    if "probabilities" in record:
        return record["probabilities"]
    clipped, score, high = record["score"], record["model_score"], record["range"][1]
    note = "" if abs(clipped - score) < 0.005 else f" (the model said {score:.2f})"
    return f"similarity {clipped:.2f} / {high:g}{note}"


def check_head(entry: ModelEntry, task: TaskSpec, config: Any) -> None:
    """Refuse a loaded classifier whose head does not read out ``task``'s labels in the registry's order."""
    if not labels_fit(task, config):
        raise NlueError(
            f"{entry.name}: its classifier head ({config.num_labels} outputs, labels {dict(config.id2label)}) "
            f"does not read out {task.name}'s labels {task.id2label}"
        )


def predict_rows(loaded: LoadedModel, task: TaskSpec, examples: Sequence[Mapping[str, str]]) -> list[np.ndarray]:
    """Each example's logits, in the order given, from one call of the evaluator's batched path.

    Padding is masked, so an example's logits do not depend on the others in its batch: a visitor
    gets the answer a lone request would get (up to float rounding). The model's lock is held
    because its fast tokenizer is not safe to share between threads (see :mod:`nlue.space.cache`).
    """
    with loaded.lock:
        logits = predict_logits(loaded.model, loaded.tokenizer, task, examples, batch_size=max(1, len(examples)))
    return list(logits)


def predict_example(loaded: LoadedModel, task: TaskSpec, example: Mapping[str, str]) -> dict[str, float] | str:
    """One example alone (no batching), as the page shows it: the reference the batched path is checked against."""
    return format_prediction(task, predict_rows(loaded, task, [example])[0])
