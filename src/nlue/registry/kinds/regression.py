"""Regression: a real-valued score in the task's declared range (STS-B's 0-5 similarity).

Input formation is the classification kind's (a text pair); the model has one output;
scored by Pearson, Spearman and R², with the mean of the two correlations as primary
(an nlue convention the paper never computed). A language model is asked by generation only:
the prompt is the classification kind's, with no label words, and the model writes the score
(:mod:`nlue.evals.llm.number_generation`); log-likelihood over a few label words does not apply.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import datasets
import numpy as np

from nlue.errors import NlueError
from nlue.registry.kinds.base import FINE_TUNED_CLASSIFIER, GENERATION, StarterFile, TaskDeclaration
from nlue.registry.kinds.classification import ClassificationKind, _no_categories
from nlue.scoring.regression import regression_problem

if TYPE_CHECKING:
    from nlue.scoring.problem import ScoringProblem


HF_PROBLEM_TYPE = "regression"  # transformers' config.problem_type of a one-output regression head


@dataclass(frozen=True)
class RegressionKind(ClassificationKind):
    """Shares text-pair input formation with classification; labels and scoring differ."""

    @property
    def has_classes(self) -> bool:
        return False

    def num_labels(self, task: TaskDeclaration) -> int:
        return 1

    def features(self, task: TaskDeclaration) -> datasets.Features:
        columns: dict[str, Any] = {name: datasets.Value("string") for name in task.input_fields}
        columns[str(task.label_field)] = datasets.Value("float64")
        columns["idx"] = datasets.Value("int32")
        return datasets.Features(columns)

    def describe_output(self, task: TaskDeclaration) -> str:
        low, high = _range(task)
        return f"a similarity score from {low:g} to {high:g}"

    def parse_label(self, task: TaskDeclaration, raw: Any) -> float | str:
        low, high = _range(task)
        try:
            score = float(raw)
        except (TypeError, ValueError):
            return f"expected a number from {low:g} to {high:g}"
        if not math.isfinite(score) or not low <= score <= high:
            return f"score outside {low:g}-{high:g}"
        return score

    def label_code_dtype(self, task: TaskDeclaration) -> np.dtype | None:
        return np.dtype(np.uint64)  # the score's float64 bits: equal exactly when the scores are

    def label_codes(self, task: TaskDeclaration, values: Sequence[Any]) -> np.ndarray | None:
        return np.array(values, dtype=np.float64).view(np.uint64)

    def strata(self, task: TaskDeclaration, labels: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(labels, dtype=np.float64)).astype(np.int8)  # score bands, half to even

    def classifier_config(self, task: TaskDeclaration) -> dict[str, Any]:
        return {"num_labels": 1, "problem_type": HF_PROBLEM_TYPE, "id2label": {0: "score"}, "label2id": {"score": 0}}

    def head_mismatch(self, task: TaskDeclaration, num_labels: int, labels: dict[int, str] | None) -> str | None:
        if num_labels != 1:
            return f"it has a {num_labels}-label classifier; {task.name} needs one regression output"
        return None

    def training_labels(self, task: TaskDeclaration, labels: Sequence[Any]) -> list[Any]:
        return [float(x) for x in labels]

    def scoring_problem(
        self, task: TaskDeclaration, predictions: Any, references: Any, categories: Sequence[str] | None
    ) -> tuple[ScoringProblem, tuple[str, ...]]:
        _no_categories(task, categories)
        return regression_problem(predictions, references), ()

    def primary_from(self, task: TaskDeclaration, metrics: Mapping[str, float]) -> float:
        # The paper's tables give Pearson and Spearman only: their mean is derived when absent.
        if task.primary_metric not in metrics and {"pearson", "spearman"} <= metrics.keys():
            return (float(metrics["pearson"]) + float(metrics["spearman"])) / 2.0
        return super().primary_from(task, metrics)

    def score_features(self, task: TaskDeclaration | None) -> datasets.Features:
        # float64: similarity scores keep every digit the model produced.
        return datasets.Features({"predictions": datasets.Value("float64"), "references": datasets.Value("float64")})

    @property
    def score_format(self) -> str | None:
        return None  # Python floats: evaluate's NumPy formatter would turn them into float32

    def format_label(self, task: TaskDeclaration, value: Any) -> Any:
        return round(float(value), 2) if isinstance(value, float | int) else value


def _range(task: TaskDeclaration) -> tuple[float, float]:
    if task.score_range is None:
        raise NlueError(f"regression task {task.name!r} declares no score_range in the registry")
    return task.score_range


# What `nlue tasks new --kind regression` starts a task file with (our own example task).
STARTER = StarterFile(
    title="A similarity score",
    description="Score how close in meaning two sentences are, from 0 to 5.",
    body="""\
category: similarity
inputs:
  fields: [sentence1, sentence2] # a text pair
label_field: score
score_range: [0.0, 5.0]          # the lowest and highest score
prompts:                         # generation: the model writes one number in the score range (your own words)
  en:
    instruction: How close in meaning are these two sentences, from 0 (unrelated) to 5 (the same meaning)?
    field_labels: {sentence1: Sentence 1, sentence2: Sentence 2}
    answer_cue: "Answer:"
    label_words: []              # a score has no label words
    # number_line: {template: "Reply with one number from {low} to {high} and nothing else."}
    # wordings:                  # other wordings, each asked by --wordings all beside this one (named main)
    # - name: plain
    #   instruction: Rate how alike the two sentences are in meaning, from 0 (unrelated) to 5 (the same).
    #   number_line: {template: "Write only the score, a number from {low} to {high}."}
""",
    data_columns="sentence1: first, sentence2: second",
    data_labels="",
)


REGRESSION = RegressionKind(
    name="regression",
    metrics=("pearson", "spearman", "r2"),
    primary_metric="pearson_spearman_mean",
    hub_task_category="text-classification",
    evaluators=(FINE_TUNED_CLASSIFIER, GENERATION),
    declares=("score_range",),
    takes_prompts=True,  # asked by generation: the classification prompt, no label words, a number line
    prompt_keys=("number_line",),
    starter=STARTER,
)
