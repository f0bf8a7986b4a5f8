"""Classification: a label from a fixed list, scored by accuracy and macro-F1.

Model input is the task's declared input shape (:class:`~nlue.registry.spec.InputSpec`):
one text, a text pair, fields joined into one side (QADSM's ad), or both readings of a
blank (WinoGrande). Labels are stored as a ClassLabel in the registry's order; a source
may give a label by name, by id, or by one of the task's declared ``label_values``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import datasets
import numpy as np

from nlue.errors import NlueError
from nlue.registry.kinds.base import (
    CAUSAL_LM_LOGLIKELIHOOD,
    FINE_TUNED_CLASSIFIER,
    StarterFile,
    TaskDeclaration,
    TaskKind,
    joined,
)
from nlue.scoring.classification import classification_problem

if TYPE_CHECKING:
    from nlue.scoring.problem import ScoringProblem


def label_key(value: Any) -> str:
    """The text form of a raw label, so 1, 1.0 and "1" all map alike."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


@dataclass(frozen=True)
class ClassificationKind(TaskKind):
    @property
    def has_classes(self) -> bool:
        return True

    def features(self, task: TaskDeclaration) -> datasets.Features:
        columns: dict[str, Any] = {name: datasets.Value("string") for name in task.input_fields}
        columns[str(task.label_field)] = datasets.ClassLabel(names=list(task.label_names))
        columns["idx"] = datasets.Value("int32")
        return datasets.Features(columns)

    def describe_output(self, task: TaskDeclaration) -> str:
        return "one of " + ", ".join(f"`{name}`" for name in task.label_names)

    def parse_label(self, task: TaskDeclaration, raw: Any) -> int | str:
        key = label_key(raw)
        label_id = task.label2id.get(key)
        if label_id is not None:
            return label_id
        if task.label_values:
            # A task that declares its source values (WinoGrande's 1 or 2) takes those, not bare ids.
            if key in task.label_values:
                return task.label_values[key]
            values = " or ".join(task.label_values)
            return f"expected {task.label_field} {values}, or a label name ({', '.join(task.label_names)})"
        try:
            number = int(key)
        except ValueError:
            number = None
        if number is not None and 0 <= number < len(task.label_names):
            return number
        expected = ", ".join(f"{i}={n}" for i, n in enumerate(task.label_names))
        return f"unknown label; expected one of {expected} (id or name), or map it with --label-map"

    def label_code_dtype(self, task: TaskDeclaration) -> np.dtype | None:
        return np.dtype(np.uint8 if len(task.label_names) <= 256 else np.int64)

    def strata(self, task: TaskDeclaration, labels: np.ndarray) -> np.ndarray:
        return np.asarray(labels).astype(np.int8 if len(task.label_names) <= 127 else np.int32)

    def text_pair(self, task: TaskDeclaration, example: Mapping[str, Any]) -> tuple[str, str | None]:
        spec = task.input_spec
        if spec.blank is not None and spec.blank_field is not None:
            text = str(example[spec.blank_field])
            first, second = (text.replace(spec.blank, str(example[option]), 1) for option in spec.options)
            return first, second
        second = joined(example, spec.second, spec.joiner) if spec.second else None
        return joined(example, spec.first, spec.joiner), second

    def llm_template(self, task: TaskDeclaration, language: str) -> tuple[str, tuple[str, ...]]:
        prompt = task.prompts.get(language)
        if prompt is None:
            offered = ", ".join(task.prompts) or "none"
            raise NlueError(f"task {task.name!r} has no {language!r} prompt for language models; it has: {offered}")
        lines = [prompt.instruction, ""]
        lines += [f"{prompt.field_labels[name]}: {{{{ {name} }}}}" for name in task.input_fields]
        lines.append(prompt.answer_cue)
        return "\n".join(lines), tuple(prompt.label_words)

    def classifier_config(self, task: TaskDeclaration) -> dict[str, Any]:
        return {
            "num_labels": len(task.label_names),
            "problem_type": "single_label_classification",
            "id2label": task.id2label,
            "label2id": task.label2id,
        }

    def head_mismatch(self, task: TaskDeclaration, num_labels: int, labels: dict[int, str] | None) -> str | None:
        if labels is not None and labels != task.id2label:
            shown = ", ".join(f"{i}={n}" for i, n in sorted(labels.items()))
            wanted = ", ".join(f"{i}={n}" for i, n in task.id2label.items())
            return f"its classifier labels ({shown}) are not {task.name}'s labels in the registry's order ({wanted})"
        if num_labels != len(task.label_names):
            return f"it has {num_labels} outputs; {task.name} has {len(task.label_names)} labels"
        return None

    def scoring_problem(
        self, task: TaskDeclaration, predictions: Any, references: Any, categories: Sequence[str] | None
    ) -> tuple[ScoringProblem, tuple[str, ...]]:
        _no_categories(task, categories)
        return classification_problem(predictions, references, range(len(task.label_names)), f"task {task.name!r}"), ()

    def format_label(self, task: TaskDeclaration, value: Any) -> Any:
        return task.label_names[int(value)] if isinstance(value, int | np.integer) else value

    def score_features(self, task: TaskDeclaration | None) -> datasets.Features:
        return datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")})

    @property
    def score_format(self) -> str | None:
        return "numpy"  # integer label ids are exact in NumPy


def _no_categories(task: TaskDeclaration, categories: Sequence[str] | None) -> None:
    if categories is not None:
        raise NlueError(f"categories apply to GMET only; task {task.name!r} takes predictions and references alone")


# What `nlue tasks new --kind classification` starts a task file with (our own example task).
STARTER = StarterFile(
    title="A three-class sentiment task",
    description="Decide whether a short text is negative, neutral or positive.",
    body="""\
category: single sentence
inputs:
  fields: [text]                 # input fields in prompt order; two fields make a text pair
label_field: label
labels: [negative, neutral, positive]   # in id order: label 0 is negative (fixed here, once)
# metrics: [accuracy, macro_f1]  # default: the kind's; primary_metric: macro_f1
prompts:                         # how a language model is asked, per prompt language (your own words)
  en:
    instruction: Is the opinion in this text negative, neutral or positive?
    field_labels: {text: Text}   # the label shown before each input field
    answer_cue: "Answer:"
    label_words: [negative, neutral, positive]   # one word per label, in label order
    # answer_line: {template: "Reply with one of these words only: {words}.", separator: ", "}
    # wordings:                  # other wordings, each asked by --wordings all beside this one (named main);
    # - name: plain              # each key given replaces this prompt's; the label words are never reworded
    #   instruction: Does the writer of this text sound negative, neutral or positive?
    #   answer_cue: "Reply:"
""",
    data_columns="text: review",
    data_labels=', labels: {"-1": negative, "0": neutral, "1": positive}',
)


CLASSIFICATION = ClassificationKind(
    name="classification",
    metrics=("accuracy", "macro_f1"),
    primary_metric="macro_f1",
    hub_task_category="text-classification",
    evaluators=(FINE_TUNED_CLASSIFIER, CAUSAL_LM_LOGLIKELIHOOD),
    takes_prompts=True,
    prompt_keys=("answer_line",),
    starter=STARTER,
)
