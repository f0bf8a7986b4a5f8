"""What the registry knows about one task: :class:`TaskSpec`, its input shape and the paper's facts.

A task is data. Everything that varies with the *kind* of task (how an item becomes model
input, its features, its row rules, its metrics, which evaluators apply) is decided by
its kind (:mod:`nlue.registry.kinds`), reading the fields declared here; nothing outside
the kinds tests a task's name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from nlue.errors import NlueError
from nlue.registry.label_prompts import ANSWER_LINES, NUMBER_LINES, AnswerLine
from nlue.registry.paper import PAPER_CITATION, PAPER_MODELS
from nlue.registry.paper_checks import PaperFlag

if TYPE_CHECKING:
    from nlue.registry.kinds import TaskKind


def _empty() -> MappingProxyType:
    return MappingProxyType({})


@dataclass(frozen=True)
class InputSpec:
    """How a task's fields become the text (or text pair) an encoder reads.

    * ``first`` and ``second`` name the fields joined (with ``joiner``) into the first and
      the second text; no ``second`` means a single text;
    * a *blank* task (WinoGrande) instead pairs the ``blank_field`` filled with each of
      its two ``options`` in turn: a cross-encoder over both readings that any sequence
      classifier can learn, label 0 meaning the first reading is right.
    """

    first: tuple[str, ...] = ()
    second: tuple[str, ...] = ()
    joiner: str = " "
    blank: str | None = None
    blank_field: str | None = None
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromptSpec:
    """How a task is put to a language model in one language: our own words, not the paper's.

    The kind renders the item from these (its ``llm_template``); ``label_words`` verbalise
    the labels in id order, each scored as a continuation of the prompt.
    """

    instruction: str
    field_labels: Mapping[str, str]
    answer_cue: str
    label_words: tuple[str, ...]


@dataclass(frozen=True)
class PromptWording:
    """Another wording of a task's prompt in one language (a task file's ``prompts.<lang>.wordings``): ours.

    Each key given replaces the main prompt's (``field_labels`` relabel only the fields they name); a key
    left out keeps the main prompt's. The label words are never reworded, so every wording is scored
    against the same words and a difference between wordings is the wording's alone
    (:mod:`nlue.registry.wordings` makes the task each wording asks).
    """

    name: str
    instruction: str | None = None
    instruction_without_idiom: str | None = None  # idiomaticity tasks only
    field_labels: Mapping[str, str] = field(default_factory=_empty)
    answer_cue: str | None = None
    answer_line: AnswerLine | None = None  # generation of a label word
    number_line: str | None = None  # generation of a number (regression)


@dataclass(frozen=True)
class IdiomPrompt:
    """How an idiomaticity task (neDIOM) is put to a language model in one language: our own words.

    The prompt is the instruction (one for the input variants that give the idiom, one for those
    that do not), the idiom on its own labelled line when given, the context on a labelled line,
    then the answer cue; each of ``label_words`` (label id order: idiomatic, literal) is scored as
    the continuation after the cue (causal LMs) or at a mask slot there (masked LMs). A task file
    declares it as a prompt with ``instruction_without_idiom`` and the field labels ``idiom`` and
    ``context`` (:mod:`nlue.idioms.zero_shot` renders it).
    """

    instruction_with_idiom: str
    instruction_without_idiom: str
    idiom_label: str
    context_label: str
    answer_cue: str
    label_words: tuple[str, str]


@dataclass(frozen=True)
class SplitSource:
    """Where one split of a task comes from, as its task file declares it: a local file or a Hub dataset.

    ``columns`` maps a task field to the source column that holds it; ``labels`` maps a raw
    source label (as text) to a label name, or to ``drop``. A local ``path`` is absolute
    (the task file's relative path resolved against the file's folder).
    """

    path: str | None = None
    format: str | None = None  # csv, tsv, json, jsonl or parquet; None: from the file's suffix
    hub_id: str | None = None
    config: str | None = None
    split: str | None = None  # the Hub split read (default: the split's own name)
    revision: str | None = None
    columns: Mapping[str, str] = field(default_factory=_empty)
    labels: Mapping[str, str] = field(default_factory=_empty)


@dataclass(frozen=True)
class HParams:
    """One best configuration reported in the paper's appendix E."""

    preset: str
    learning_rate: float
    epochs: int
    batch_size: int


@dataclass(frozen=True)
class TaskSpec:
    """Everything the package knows about one task.

    ``problem_type`` names the task's kind (``classification``, ``regression``,
    ``mask_fill``); :attr:`kind` is the kind itself, the one place that decides how the
    task is built, fed to a model and scored.
    """

    name: str
    title: str
    category: str
    problem_type: str
    description: str
    input_fields: tuple[str, ...]
    label_field: str | None
    label_names: tuple[str, ...]
    metrics: tuple[str, ...]
    primary_metric: str
    paper_train_size: int | None
    paper_test_size: int
    paper_total_size: int
    class_balance: Mapping[str, float]
    domains: tuple[str, ...]
    sources: tuple[str, ...]
    label_notes: str
    hub_task_id: str  # the Hub's task_ids vocabulary, for dataset and model cards
    version: str = "1.0.0"
    citation: str = PAPER_CITATION
    benchmark: str = "nlue"
    inputs: InputSpec | None = None  # None: the input fields in order (one text, or a pair)
    # Raw source values that name a label, beside its name and id (WinoGrande's answer 1 or 2).
    label_values: Mapping[str, int] = field(default_factory=_empty)
    score_range: tuple[float, float] | None = None  # regression: the label's range
    mask: str | None = None  # mask filling: the placeholder of the blank
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)  # mask filling: theme -> categories
    field_hints: Mapping[str, str] = field(default_factory=_empty)  # what to type into a field, where not obvious
    prompts: Mapping[str, PromptSpec] = field(default_factory=_empty)  # language code -> how to ask an LLM
    paper_results: Mapping[str, Mapping[str, float]] = field(default_factory=_empty)
    paper_best_hparams: Mapping[str, HParams] = field(default_factory=_empty)
    # Cells of the paper's table for this task that fail a consistency check (nlue.registry.paper_checks), by model.
    paper_flags: Mapping[str, tuple[PaperFlag, ...]] = field(default_factory=_empty)
    # Declared by task files (issue 30); the defaults are what the Python declarations meant.
    languages: tuple[str, ...] = ("ne",)  # ISO 639-1 (or 639-3) codes of the task's text
    profile: str = "nepali"  # the language profile that normalises the text (nlue.registry.profiles)
    license: str | None = None
    # Prompt language -> how a generating model is told which words it may answer with (default: ANSWER_LINES).
    answer_lines: Mapping[str, AnswerLine] = field(default_factory=_empty)
    # Prompt language -> the line asking a generating model for one number in score_range (default: NUMBER_LINES).
    number_lines: Mapping[str, str] = field(default_factory=_empty)
    # Prompt language -> an idiomaticity task's prompt, in the shape its evaluators read (not in ``prompts``).
    idiom_prompts: Mapping[str, IdiomPrompt] = field(default_factory=_empty)
    # Prompt language -> the prompt's other wordings (the main one is ``prompts``/``idiom_prompts``); asked only
    # by ``--wordings all``, so they are not in the declaration fingerprint of a run that asks the main one alone.
    prompt_wordings: Mapping[str, tuple[PromptWording, ...]] = field(default_factory=_empty)
    data: Mapping[str, SplitSource] = field(default_factory=_empty)  # split -> where it comes from
    primary_metric_note: str = ""  # where the primary metric comes from, when not the kind's note
    primary_from_paper: bool | None = None  # whether the source paper computes the primary (None: the kind says)
    task_file: str | None = field(default=None, compare=False)  # the file it was loaded from (not its identity)

    @property
    def kind(self) -> TaskKind:
        from nlue.registry.kinds import get_kind

        return get_kind(self.problem_type)

    @property
    def primary_note(self) -> str:
        """Where this task's primary metric comes from: the paper, or an nlue convention."""
        from nlue.registry.kinds import PRIMARY_METRIC_NOTES

        if self.primary_metric_note:
            return self.primary_metric_note
        return PRIMARY_METRIC_NOTES.get(self.primary_metric, f"{self.primary_metric}, as the task file declares")

    @property
    def primary_is_paper_defined(self) -> bool:
        """Whether the paper itself computes this primary metric (GMET's combined score) or we chose it."""
        from nlue.registry.kinds import PAPER_DEFINED_PRIMARIES

        if self.primary_from_paper is not None:
            return self.primary_from_paper
        return self.primary_metric in PAPER_DEFINED_PRIMARIES

    def answer_line(self, language: str) -> AnswerLine:
        """How a generating model is told the label words in ``language``: the task's own line, or the default one."""
        line = self.answer_lines.get(language) or ANSWER_LINES.get(language)
        if line is None:
            offered = ", ".join(dict.fromkeys([*self.answer_lines, *ANSWER_LINES]))
            raise NlueError(
                f"task {self.name!r} has no answer line for prompt language {language!r}; it has: {offered} "
                f"(a task file declares one as prompts.{language}.answer_line)"
            )
        return line

    def number_line(self, language: str) -> str:
        """How a generating model is asked for one number in ``language``: the task's own line, or the default one."""
        line = self.number_lines.get(language) or NUMBER_LINES.get(language)
        if line is None:
            offered = ", ".join(dict.fromkeys([*self.number_lines, *NUMBER_LINES]))
            raise NlueError(
                f"task {self.name!r} has no number line for prompt language {language!r}; it has: {offered} "
                f"(a task file declares one as prompts.{language}.number_line)"
            )
        return line

    @property
    def is_classification(self) -> bool:
        return self.kind.has_classes

    @property
    def num_labels(self) -> int:
        """Outputs a classifier head needs (1 for regression, 0 for mask filling)."""
        return self.kind.num_labels(self)

    @property
    def id2label(self) -> dict[int, str]:
        return dict(enumerate(self.label_names))

    @property
    def label2id(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.label_names)}

    @property
    def text_fields(self) -> tuple[str, ...]:
        """Fields holding free text that the builder normalises."""
        return self.kind.text_fields(self)

    @property
    def input_spec(self) -> InputSpec:
        """The declared input shape, or the input fields in order (one text, or the first two as a pair)."""
        if self.inputs is not None:
            return self.inputs
        fields = self.input_fields
        return InputSpec(first=fields[:1], second=fields[1:2])

    @property
    def splits(self) -> tuple[str, ...]:
        """Splits the benchmark publishes (zero-shot kinds are test-only)."""
        return self.kind.splits

    @property
    def hub_task_category(self) -> str:
        return self.kind.hub_task_category

    def primary_from(self, metrics: Mapping[str, float]) -> float:
        """This task's primary metric from a dict of its metrics (derived by the kind when it is a mean)."""
        value = self.kind.primary_from(self, metrics)
        if not math.isfinite(value):
            raise NlueError(f"results for task {self.name!r} hold a non-finite {self.primary_metric}: {value!r}")
        return value

    def paper_primary_score(self, model: str) -> float | None:
        """The paper's reported primary metric (0-1) for ``model`` on this task, if any."""
        scores = self.paper_results.get(model)
        return self.primary_from(scores) if scores else None

    def paper_reference(self, model_id: str) -> dict[str, object] | None:
        """The paper's figures on this task for ``model_id`` when it is one of the paper's Hub checkpoints."""
        for model in PAPER_MODELS:
            if model.hub_id.lower() == str(model_id).lower() and model.name in self.paper_results:
                return {
                    "model": model.name,
                    "metrics": dict(self.paper_results[model.name]),
                    "primary_score": self.paper_primary_score(model.name),
                    "primary_note": self.primary_note,
                    "hub_id_confirmed": model.hub_id_confirmed,
                    "hub_id_note": model.hub_id_note,
                    "flags": [flag.as_dict() for flag in self.paper_flags.get(model.name, ())],
                }
        return None

    def paper_best_model(self) -> tuple[str, float] | None:
        """The paper's best model on this task by the primary metric."""
        ranked = [(m, self.paper_primary_score(m)) for m in self.paper_results]
        scored = [(m, s) for m, s in ranked if s is not None]
        return max(scored, key=lambda pair: pair[1]) if scored else None


@dataclass(frozen=True)
class ExamSpec(TaskSpec):
    """A multiple-choice exam task: a TaskSpec plus its language and vocabularies (see kinds.mcq_text)."""

    language: str = "ne"
    subjects: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)  # domain -> subdomains
    levels: tuple[str, ...] = ()
    level_aliases: Mapping[str, str] = field(default_factory=_empty)
    subject_aliases: Mapping[str, str] = field(default_factory=_empty)
    grade_levels: Mapping[int, str] = field(default_factory=_empty)


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: its tasks, in order, and how to cite it."""

    name: str
    title: str
    citation: str
    tasks: tuple[TaskSpec, ...]
    task_file: str | None = field(default=None, compare=False)  # the benchmark file it was loaded from

    @property
    def task_names(self) -> tuple[str, ...]:
        return tuple(task.name for task in self.tasks)
