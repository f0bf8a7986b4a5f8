"""The interface every kind of task implements, and what the kinds share.

A kind is the one place that decides, for every task of that kind: how an item becomes
model input (in the spirit of lm-evaluation-harness's ``doc_to_text`` /
``doc_to_choice`` / ``output_type``), its ``datasets`` features, the rules a source row
must pass, the metrics and the primary one, and which evaluators apply. Everything
else (builder, card, trainers, scoring, Space) asks the task's kind and never tests a
task's name or kind by string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import datasets
import numpy as np

from nlue.errors import NlueError

if TYPE_CHECKING:
    from nlue.scoring.problem import ScoringProblem


class TaskDeclaration(Protocol):
    """What a kind reads of a task: the declaration's fields (:class:`nlue.registry.spec.TaskSpec` has them all).

    A protocol, not the class, because the declaration finds its behaviour here (``TaskSpec.kind``): the
    kinds read tasks, the tasks name their kind, and no import goes both ways (tests/test_layout.py).
    """

    @property
    def name(self) -> str: ...
    @property
    def input_fields(self) -> tuple[str, ...]: ...
    @property
    def label_field(self) -> str | None: ...
    @property
    def label_names(self) -> tuple[str, ...]: ...
    @property
    def primary_metric(self) -> str: ...
    @property
    def label_values(self) -> Mapping[str, int]: ...
    @property
    def score_range(self) -> tuple[float, float] | None: ...
    @property
    def mask(self) -> str | None: ...
    @property
    def categories(self) -> Mapping[str, tuple[str, ...]]: ...
    @property
    def prompts(self) -> Mapping[str, Any]: ...
    @property
    def input_spec(self) -> Any: ...  # nlue.registry.spec.InputSpec: which fields form the first and second text
    @property
    def id2label(self) -> dict[int, str]: ...
    @property
    def label2id(self) -> dict[str, int]: ...


class BuiltSplit(Protocol):
    """What a kind reads of one built split, for its card lines: the builder's report of the split
    (:class:`nlue.data.report.SplitReport`, one room up; the kinds never import the builder)."""

    @property
    def stats(self) -> Any:  # the split's measured statistics (nlue.data.stats.SplitStats), or None
        ...


# The evaluators a kind can name. Issue by issue more apply (causal-LM log-likelihood, generation).
FINE_TUNED_CLASSIFIER = "fine-tuned classifier"
MASKED_LM_FILL = "masked-LM fill"
CAUSAL_LM_LOGLIKELIHOOD = "causal-LM log-likelihood"
GENERATION = "generation"

ALL_SPLITS: tuple[str, ...] = ("train", "validation", "test")
# transformers names the labels of a fresh head LABEL_0, LABEL_1, ...: such a head names no task's labels.
_UNNAMED_LABEL = re.compile(r"LABEL_\d+")


def named_labels(id2label: Mapping[Any, Any] | None) -> dict[int, str] | None:
    """A checkpoint's ``id2label`` when it names its labels; None for none or transformers' defaults."""
    labels = {int(k): str(v) for k, v in (id2label or {}).items()}
    if not labels or all(_UNNAMED_LABEL.fullmatch(v) for v in labels.values()):
        return None
    return labels


@dataclass(frozen=True)
class RowRejection:
    """Why a row fails a kind's rules: the field and the reason (and the value, to show)."""

    field: str
    reason: str
    value: str = ""


@dataclass(frozen=True)
class CardText:
    """What a kind's configs say on a dataset card where NLUE's own paragraphs would not fit.

    ``intro`` opens the card, ``scoring`` says how to score the configs, ``limitations``
    what the data cannot tell; ``languages`` are the card's ISO 639-1 codes;
    ``sample_banner`` opens a build of the embedded sample.
    """

    intro: str
    scoring: str
    limitations: str
    languages: tuple[str, ...]
    sample_banner: str = ""  # what a sample build says first (empty: NLUE's banner)


@dataclass(frozen=True)
class StarterFile:
    """The kind's part of the commented task file `nlue tasks new --kind K` prints (:mod:`nlue.registry.task_file.
    template` adds what every task file has): a small working task of the kind, valid as it stands."""

    title: str
    description: str
    body: str  # the kind's keys as YAML lines, each explained in a comment
    data_columns: str  # an example ``columns:`` mapping for the commented ``data:`` lines
    data_labels: str = ""  # an example ``, labels: {...}`` map, for a kind whose labels are the user's values


@dataclass(frozen=True)
class TaskKind:
    """Base of the kinds; see the module docstring. Subclasses override what differs."""

    name: str
    metrics: tuple[str, ...]
    primary_metric: str
    hub_task_category: str
    evaluators: tuple[str, ...]
    splits: tuple[str, ...] = ALL_SPLITS
    how_to_score: str = ""  # for kinds not fine-tuned: the command that scores them
    # What a task file of this kind declares (nlue.registry.task_file checks it against these):
    declares: tuple[str, ...] = ()  # keys the kind needs beyond every task's (score_range, mask, exam...)
    fixed_fields: tuple[str, ...] = ()  # input fields the kind reads by name (empty: the task names its own)
    fixed_labels: tuple[str, ...] = ()  # labels in id order that the kind decides (empty: the task's own)
    labelled: bool = True  # whether an item has a label field (mask filling has answers instead)
    takes_prompts: bool = False  # whether the task's prompts are read (instruction, field labels, cue, words)
    prompt_keys: tuple[str, ...] = ()  # prompt keys the kind reads beyond those four (answer_line, number_line...)
    required_prompt_keys: tuple[str, ...] = ()  # of prompt_keys, those a prompt must give (no default)
    # (prompt key, value) pairs the kind fixes, because its parser or template reads that value and no other.
    fixed_prompt: tuple[tuple[str, Any], ...] = ()
    starter: StarterFile | None = None  # the starting task file `nlue tasks new --kind` prints (None: none offered)

    # ---------------------------------------------------------------- what the kind is
    @property
    def trainable(self) -> bool:
        """Whether tasks of this kind are fine-tuned as sequence classifiers."""
        return FINE_TUNED_CLASSIFIER in self.evaluators

    @property
    def has_classes(self) -> bool:
        return False

    @property
    def carves_validation(self) -> bool:
        """Whether a missing validation split is carved out of train (only kinds that train)."""
        return "train" in self.splits

    @property
    def apart_from_test(self) -> tuple[str, ...]:
        """Splits that must share no item with ``test`` (an exam's demonstration pool): the builder reads
        test first and rejects such a split's rows that are test items. Other kinds' test is the release's
        and is only compared with the splits before it."""
        return ()

    def num_labels(self, task: TaskDeclaration) -> int:
        return len(task.label_names)

    def prompt_fields(self, input_fields: tuple[str, ...]) -> tuple[str, ...]:
        """The fields a prompt must label (``field_labels``) for a task with these input fields."""
        return input_fields

    def text_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        """The fields holding free text, normalised by the builder."""
        return task.input_fields

    def identity_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        """The fields whose values identify an item (duplicates and leakage are judged on them)."""
        return task.input_fields

    def gold(self, task: TaskDeclaration, item: Mapping[str, Any]) -> Any:
        """An item's reference as per-item predictions record it (nlue.predictions): the label id, the score."""
        return item[str(task.label_field)]

    def required_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return (*task.input_fields, *((task.label_field,) if task.label_field else ()))

    def optional_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ()

    def features(self, task: TaskDeclaration) -> datasets.Features:
        """The typed columns of a built config."""
        raise NotImplementedError

    def describe_output(self, task: TaskDeclaration) -> str:
        """What a model returns for this task, in words (for pages and help)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- rows
    def parse_label(self, task: TaskDeclaration, raw: Any) -> Any:
        """The stored label of a raw source value, or a ``str`` saying what was expected."""
        raise NotImplementedError

    def check_row(self, task: TaskDeclaration, row: Mapping[str, Any]) -> RowRejection | None:
        """Rules on a normalised row beyond its label (a blank to fill, say); None when it passes."""
        return check_input_shape(task, row)

    def row_context(self, task: TaskDeclaration, category_map: Mapping[str, str]) -> Any:
        """What :meth:`complete_row` needs, prepared once per source (GMET: its category lookup)."""
        return None

    def complete_row(
        self, task: TaskDeclaration, raw: Callable[[str], Any], context: Any
    ) -> dict[str, Any] | RowRejection:
        """Fields a row gets beyond its normalised text and its label (``raw(field)`` reads the source)."""
        return {}

    def label_code_dtype(self, task: TaskDeclaration) -> np.dtype | None:
        """How a row's label is kept beside its fingerprint, to tell duplicates from conflicts."""
        return None

    def label_codes(self, task: TaskDeclaration, values: Sequence[Any]) -> np.ndarray | None:
        dtype = self.label_code_dtype(task)
        return None if dtype is None else np.array(values, dtype=dtype)

    def strata(self, task: TaskDeclaration, labels: np.ndarray) -> np.ndarray:
        """The strata a validation split is carved by: class ids (or score bands)."""
        return np.asarray(labels)

    # ---------------------------------------------------------------- model input
    def text_pair(self, task: TaskDeclaration, example: Mapping[str, Any]) -> tuple[str, str | None]:
        raise NlueError(f"task {task.name!r} is a {self.name} task; it has no classifier input")

    def batch_text_pairs(
        self, task: TaskDeclaration, batch: Mapping[str, Sequence[Any]]
    ) -> tuple[list[str], list[str] | None]:
        """Column-wise :meth:`text_pair` for ``datasets.map(batched=True)``."""
        size = len(next(iter(batch.values())))
        pairs = [self.text_pair(task, {k: v[i] for k, v in batch.items()}) for i in range(size)]
        firsts = [a for a, _ in pairs]
        if all(b is None for _, b in pairs):
            return firsts, None
        return firsts, [b or "" for _, b in pairs]

    def llm_template(self, task: TaskDeclaration, language: str) -> tuple[str, tuple[str, ...]]:
        """A Jinja template of the prompt (fields as ``{{ field }}``) and the verbalised labels, in id order.

        The doc_to_text / doc_to_choice of lm-evaluation-harness: our log-likelihood evaluator
        and the lm-eval export render the same template, so the two score the same strings.
        """
        raise NlueError(f"task {task.name!r} is a {self.name} task; it is not put to a language model by label")

    def classifier_config(self, task: TaskDeclaration) -> dict[str, Any]:
        """``num_labels``, ``problem_type``, ``id2label`` and ``label2id`` for a transformers config."""
        raise NlueError(f"task {task.name!r} is a {self.name} task; it is not fine-tuned as a classifier")

    def head_mismatch(self, task: TaskDeclaration, num_labels: int, labels: dict[int, str] | None) -> str | None:
        """Why a classifier head with ``num_labels`` outputs (named ``labels``, or None) cannot serve ``task``.

        The one label-compatibility rule of the trainers, the evaluator and the Space: a
        head must read out the task's labels in the registry's order; unnamed labels of the
        right number are a fresh head (or a LoRA base) and fit.
        """
        return f"task {task.name!r} is a {self.name} task; no classifier head serves it"

    def training_labels(self, task: TaskDeclaration, labels: Sequence[Any]) -> list[Any]:
        return list(labels)

    # ---------------------------------------------------------------- scoring
    def scoring_problem(
        self, task: TaskDeclaration, predictions: Any, references: Any, categories: Sequence[str] | None
    ) -> tuple[ScoringProblem, tuple[str, ...]]:
        """Validated inputs as a scoring problem (plus group names where the kind has groups)."""
        raise NotImplementedError

    def score_features(self, task: TaskDeclaration | None) -> datasets.Features | list[datasets.Features]:
        """What an evaluate module of this kind takes: its ``MetricInfo.features``."""
        raise NotImplementedError

    @property
    def score_format(self) -> str | None:
        """The ``MetricInfo.format`` evaluate hands inputs to ``_compute`` in (see nlue.scores.metric_modules)."""
        return None

    def primary_from(self, task: TaskDeclaration, metrics: Mapping[str, float]) -> float:
        name = task.primary_metric
        if name not in metrics:
            raise NlueError(
                f"results for task {task.name!r} lack its primary metric {name!r}; got: {', '.join(metrics)}"
            )
        return float(metrics[name])

    def format_label(self, task: TaskDeclaration, value: Any) -> Any:
        """A stored label as a page shows it."""
        return value

    def browse_row(self, task: TaskDeclaration, row: dict[str, Any]) -> dict[str, Any]:
        """A stored row as the data browser shows it (a kind may mark something up; labels go through
        :meth:`format_label` apart)."""
        return row

    # ---------------------------------------------------------------- dataset card
    def card_text(self, task: TaskDeclaration) -> CardText | None:
        """The card's opening, scoring and limitations paragraphs for this kind; None keeps NLUE's."""
        return None

    def card_lines(self, task: TaskDeclaration, splits: Mapping[str, BuiltSplit], is_sample: bool) -> list[str]:
        """Lines the card adds to a config's section from its measured splits (none by default)."""
        return []


def check_input_shape(task: TaskDeclaration, row: Mapping[str, Any]) -> RowRejection | None:
    """The declared input shape's rule: a blank task's field holds its blank exactly once."""
    spec = task.input_spec
    if spec.blank is None or spec.blank_field is None:
        return None
    text = str(row.get(spec.blank_field, ""))
    found = text.count(spec.blank)
    if found != 1:
        return RowRejection(spec.blank_field, f"expected exactly one blank {spec.blank!r}, found {found}", text)
    return None


def joined(example: Mapping[str, Any], fields: Sequence[str], joiner: str) -> str:
    return joiner.join(str(example[name]) for name in fields)
