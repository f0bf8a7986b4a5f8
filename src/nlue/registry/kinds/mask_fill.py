"""Mask filling (GMET): a sentence with one blank, scored zero-shot by a masked language model.

An item is its ``sentence`` holding the task's ``mask`` placeholder once, its ``category``
(one of the task's declared categories, given by name, by number in the declared order,
or through a user's map), the ``theme`` that category belongs to, and optionally the
``answers`` people accept (ours, not the paper's: the paper had native speakers judge
each prediction, so an item without answers is scored by judging only). Test-only; no
classifier trains on it; scored by accuracy and the combined score C = A·exp(-σ).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import datasets
import numpy as np

from nlue.errors import NlueError
from nlue.registry.kinds.base import MASKED_LM_FILL, RowRejection, StarterFile, TaskDeclaration, TaskKind
from nlue.registry.kinds.classification import label_key
from nlue.scoring.gmet import gmet_correctness, gmet_problem
from nlue.text.json_records import parse_json
from nlue.text.normalize import normalize_answer, normalize_text
from nlue.text.values import NotText, source_text

if TYPE_CHECKING:
    from nlue.scoring.problem import ScoringProblem

UNKNOWN_CATEGORY = (
    "unknown GMET category; expected one of the paper's 75 categories: its English name "
    "(`nlue tasks --gmet-categories`), its number 1-75 in that list's order, "
    "or a value mapped to one with --category-map"
)


def category_order(task: TaskDeclaration) -> tuple[str, ...]:
    """The task's categories in declared order (the paper's appendix order for GMET), numbered from 1."""
    return tuple(category for categories in task.categories.values() for category in categories)


def category_theme(task: TaskDeclaration) -> dict[str, str]:
    return {category: theme for theme, categories in task.categories.items() for category in categories}


@dataclass(frozen=True)
class MaskFillKind(TaskKind):
    def num_labels(self, task: TaskDeclaration) -> int:
        return 0

    def text_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return task.input_fields[:1]

    def identity_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return task.input_fields[:1]  # the same sentence is the same item, whatever its answers

    def gold(self, task: TaskDeclaration, item: Mapping[str, Any]) -> Any:
        return [str(answer) for answer in item.get("answers") or []]  # every acceptable answer

    def required_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("sentence", "category")

    def optional_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        # The paper gives only sentences: a release may lack our acceptable answers and the derived theme.
        return ("theme", "answers")

    def features(self, task: TaskDeclaration) -> datasets.Features:
        text = datasets.Value("string")
        return datasets.Features(
            {
                "sentence": text,
                "category": text,
                "theme": text,
                "answers": datasets.List(text),
                "idx": datasets.Value("int32"),
            }
        )

    def describe_output(self, task: TaskDeclaration) -> str:
        return f"the whole word hidden behind {task.mask}"

    def check_row(self, task: TaskDeclaration, row: Mapping[str, Any]) -> RowRejection | None:
        found = str(row.get("sentence", "")).count(str(task.mask))
        if found != 1:
            return RowRejection(
                "sentence", f"expected exactly one {task.mask}, found {found}", str(row.get("sentence"))
            )
        return None

    def row_context(self, task: TaskDeclaration, category_map: Mapping[str, str]) -> dict[str, str]:
        """Raw category text -> category: the declared names, then the user's map (checked here, once)."""
        order = category_order(task)
        lookup = {name: name for name in order}
        for source, target in category_map.items():
            name = normalize_text(target)
            category = name if name in lookup else _by_number(order, name)
            if category is None:
                raise NlueError(
                    f"--category-map maps {source!r} to {target!r}, which is not one of the paper's "
                    f"{len(order)} GMET categories; give an English name listed by "
                    f"`nlue tasks --gmet-categories` or its number 1-{len(order)}"
                )
            lookup[normalize_text(source)] = category
        return lookup

    def complete_row(
        self, task: TaskDeclaration, raw: Callable[[str], Any], context: Mapping[str, str]
    ) -> dict[str, Any] | RowRejection:
        """Category, theme and answers of a row (``raw(field)`` reads the source's value)."""
        raw_category = raw("category")
        category = None
        if raw_category is not None:
            key = normalize_text(label_key(raw_category))
            category = context.get(key) or _by_number(category_order(task), key)
        if category is None:
            shown = "" if raw_category is None else normalize_text(label_key(raw_category))
            return RowRejection("category", UNKNOWN_CATEGORY, shown)
        theme = category_theme(task)[category]
        given_theme = raw("theme")
        if given_theme not in (None, "") and normalize_text(str(given_theme)) != theme:
            return RowRejection("theme", f"category {category!r} belongs to theme {theme!r}", str(given_theme))
        answers = parse_answers(raw("answers"))
        if isinstance(answers, str):
            return RowRejection("answers", answers)
        return {"category": category, "theme": theme, "answers": answers}

    def score_features(self, task: TaskDeclaration | None) -> list[datasets.Features]:
        """Predicted words with answer lists, or predicted words with 0/1 human judgments."""
        word, category = datasets.Value("string"), datasets.Value("string")
        return [
            datasets.Features(
                {"predictions": word, "references": datasets.Sequence(datasets.Value("string")), "categories": category}
            ),
            datasets.Features({"predictions": word, "references": datasets.Value("int64"), "categories": category}),
        ]

    def scoring_problem(
        self, task: TaskDeclaration, predictions: Any, references: Any, categories: Sequence[str] | None
    ) -> tuple[ScoringProblem, tuple[str, ...]]:
        if references is None:
            raise NlueError("GMET needs references: each item's acceptable answers, or a 0/1 judgment per item")
        items = list(references)
        is_list = [not isinstance(item, str) and isinstance(item, Sequence | np.ndarray) for item in items]
        if all(is_list):
            correct = gmet_correctness(list(predictions), items, None)
        elif not any(is_list):
            correct = gmet_correctness(list(predictions), None, items)
        else:
            raise NlueError("GMET references mix answer lists and judgments; use one form for every item")
        return gmet_problem(categories, correct)


def _by_number(order: Sequence[str], key: str) -> str | None:
    """Category ``key`` of the declared list, counted from 1 (int() also reads Devanagari digits)."""
    try:
        number = int(key)
    except ValueError:
        return None
    return order[number - 1] if 1 <= number <= len(order) else None


def parse_answers(raw: Any) -> list[str] | str:
    """Answers as a list, a JSON list in text, or text separated by ``|``.

    No answers (null, an empty cell, an empty list) is an empty list: the paper's items
    have none, and such an item is scored by human judging only.
    """
    if raw is None:
        return []
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return []
        if text.startswith("["):
            try:
                raw = parse_json(text)
            except ValueError:  # not JSON, or nested too deep to read
                return "answers look like a JSON list but do not parse"
        else:
            raw = text.split("|")
    if not isinstance(raw, list | tuple):
        return "expected a list of acceptable words"
    words: list[str] = []
    for position, item in enumerate(raw, start=1):
        # A null or a list in the list is no word: str() would store "None" or "['x']" as an answer.
        if item is None:
            return f"answer {position} of the list is null; expected a word (leave it out of the list)"
        if not isinstance(item, str):
            try:
                item = source_text(item)
            except NotText as exc:
                return f"answer {position} of the list: {exc.reason} ({exc.shown})"
        word = normalize_answer(item)
        if word and word not in words:
            words.append(word)
    if raw and not words:
        return "answers were given but hold no word after normalisation; leave them empty for an item judged by people"
    return words


# What `nlue tasks new --kind mask_fill` starts a task file with (our own example task).
STARTER = StarterFile(
    title="Fill the masked word",
    description="Predict the word hidden behind the mask in a sentence.",
    body="""\
category: masked words
mask: "[MASK]"                   # the placeholder each sentence holds once
categories:                      # theme -> its categories (numbered from 1 across themes)
  Daily life: [Food, Home]
  Nature: [Animals, Weather]
# inputs are fixed by the kind: sentence, category, theme, answers (a list of accepted words)
""",
    data_columns="sentence: masked_sentence",
    data_labels="",
)


MASK_FILL = MaskFillKind(
    name="mask_fill",
    metrics=("accuracy", "combined"),
    primary_metric="combined",
    hub_task_category="fill-mask",
    evaluators=(MASKED_LM_FILL,),
    splits=("test",),
    how_to_score="score a masked LM with `nlue gmet --model ...`",
    declares=("mask", "categories"),
    fixed_fields=("sentence", "category", "theme", "answers"),
    labelled=False,
    starter=STARTER,
)
