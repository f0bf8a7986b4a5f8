"""The NLUE task registry: the single source of truth for every task.

The builder, dataset card, metrics, trainers, Space and README tables all read the
:data:`TASKS` mapping. Facts come from the NLUE paper (arXiv:2411.19244); the
descriptions are our own words. Label order is fixed here once and never re-derived.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from nlue.registry.paper import HPARAM_TASKS, PAPER_CITATION, PAPER_MODELS, RESULT_COLUMNS
from nlue.registry.paper_checks import PaperFlag, paper_flags

ProblemType = Literal["classification", "regression", "mask_fill"]

CATEGORIES: tuple[str, ...] = (
    "single sentence",
    "similarity & paraphrase",
    "inference",
    "GMET",
)

CLASSIFICATION_METRICS: tuple[str, ...] = ("accuracy", "macro_f1")
REGRESSION_METRICS: tuple[str, ...] = ("pearson", "spearman", "r2")
GMET_METRICS: tuple[str, ...] = ("accuracy", "combined")

# What the paper defines and what this package adds, said the same way everywhere (README, cards, Space, results).
NLUE_SCORE_NOTE = (
    "The NLUE score (the mean of the tasks' primary metrics) is an nlue convention: the paper defines no "
    "overall score and does not rank its models by one."
)
PRIMARY_METRIC_NOTES: MappingProxyType[str, str] = MappingProxyType(
    {
        "macro_f1": "macro-F1, reported by the paper beside accuracy; making it the primary is an nlue convention",
        "pearson_spearman_mean": (
            "the mean of Pearson and Spearman, an nlue convention: the paper reports Spearman, Pearson and R² "
            "and computes no mean"
        ),
        "combined": "the GMET combined score C = A·exp(-σ), the paper's own headline score (appendix F.2)",
    }
)
PAPER_DEFINED_PRIMARIES: frozenset[str] = frozenset({"combined"})

STSB_SCORE_RANGE: tuple[float, float] = (0.0, 5.0)
MASK_PLACEHOLDER = "[MASK]"
WG_BLANK = "_"

# GMET: the 75 categories of appendix F.1, grouped by their 7 thematic areas.
GMET_THEMES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "Daily Life & Home": (
            "Family", "House", "Kitchen", "Food", "Clothing", "Market", "Shop",
            "Daily Routine", "Furniture", "Health", "Dream", "Cleanliness", "Medicine",
        ),
        "Nature & Environment": (
            "Weather", "Animals", "Birds", "Insects", "Fruits", "Vegetables", "Trees",
            "Flowers", "Nature", "Water", "River", "Mountain", "Forest", "Sky", "Earth",
            "Ocean/Sea", "Weather Conditions",
        ),
        "Society & Culture": (
            "School", "Village", "City", "Sports", "Festivals", "Music", "Art",
            "Friendship", "Society", "Language", "Nepali Culture", "Movies", "Books",
        ),
        "Concepts & Knowledge": (
            "Colors", "Body Parts", "Time", "Numbers", "Days of the Week", "Months",
            "Feelings", "Shapes", "Directions", "Senses", "Opposites", "Geography",
            "Science",
        ),
        "Work & Activities": (
            "Work", "Professions", "Agriculture", "Learning", "Cooking", "Hobbies",
            "Communication", "Travel",
        ),
        "Broader World": (
            "Transportation", "Money", "History", "Government", "Technology",
            "Space (sun, moon)", "Tools", "Materials (wood, metal)",
        ),
        "Nepal Specific": (
            "Geography of Nepal", "Animals of Nepal", "Festivals of Nepal",
        ),
    }
)  # fmt: skip
GMET_CATEGORY_THEME: MappingProxyType[str, str] = MappingProxyType(
    {category: theme for theme, cats in GMET_THEMES.items() for category in cats}
)


@dataclass(frozen=True)
class HParams:
    """One best configuration reported in the paper's appendix E."""

    preset: str
    learning_rate: float
    epochs: int
    batch_size: int


@dataclass(frozen=True)
class TaskSpec:
    """Everything the package knows about one NLUE config."""

    name: str
    title: str
    category: str
    problem_type: ProblemType
    description: str
    input_fields: tuple[str, ...]
    label_field: str | None
    label_names: tuple[str, ...]
    metrics: tuple[str, ...]
    primary_metric: str
    paper_train_size: int | None
    paper_test_size: int
    paper_total_size: int
    class_balance: MappingProxyType[str, float]
    domains: tuple[str, ...]
    sources: tuple[str, ...]
    label_notes: str
    hub_task_id: str  # the Hub's task_ids vocabulary, for dataset and model cards
    version: str = "1.0.0"
    citation: str = PAPER_CITATION
    paper_results: MappingProxyType[str, MappingProxyType[str, float]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    paper_best_hparams: MappingProxyType[str, HParams] = field(default_factory=lambda: MappingProxyType({}))
    # Cells of the paper's table for this task that fail a consistency check (nlue.registry.paper_checks), by model.
    paper_flags: MappingProxyType[str, tuple[PaperFlag, ...]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def primary_note(self) -> str:
        """Where this task's primary metric comes from: the paper, or an nlue convention."""
        return PRIMARY_METRIC_NOTES[self.primary_metric]

    @property
    def primary_is_paper_defined(self) -> bool:
        """Whether the paper itself computes this primary metric (GMET's combined score) or we chose it."""
        return self.primary_metric in PAPER_DEFINED_PRIMARIES

    @property
    def is_classification(self) -> bool:
        return self.problem_type == "classification"

    @property
    def num_labels(self) -> int:
        """Outputs a classifier head needs (1 for regression, 0 for mask filling)."""
        if self.problem_type == "regression":
            return 1
        return len(self.label_names)

    @property
    def id2label(self) -> dict[int, str]:
        return dict(enumerate(self.label_names))

    @property
    def label2id(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.label_names)}

    @property
    def text_fields(self) -> tuple[str, ...]:
        """Fields holding free text that the builder normalises."""
        if self.name == "gmet":
            return ("sentence",)
        return self.input_fields

    def primary_from(self, metrics: Mapping[str, float]) -> float:
        """This task's primary metric from a dict of its metrics.

        STS-B's primary, the mean of Pearson and Spearman, is derived when a result lists
        only the two correlations (as the paper's tables do).
        """
        name = self.primary_metric
        if name in metrics:
            value = float(metrics[name])
        elif name == "pearson_spearman_mean" and {"pearson", "spearman"} <= metrics.keys():
            value = (float(metrics["pearson"]) + float(metrics["spearman"])) / 2.0
        else:
            raise ValueError(
                f"results for task {self.name!r} lack its primary metric {name!r}; got: {', '.join(metrics)}"
            )
        if not math.isfinite(value):
            raise ValueError(f"results for task {self.name!r} hold a non-finite {name}: {value!r}")
        return value

    def paper_primary_score(self, model: str) -> float | None:
        """The paper's reported primary metric (0-1) for ``model`` on this task, if any."""
        scores = self.paper_results.get(model)
        return self.primary_from(scores) if scores else None

    def paper_reference(self, model_id: str) -> dict[str, object] | None:
        """The paper's figures on this task for ``model_id`` when it is one of the paper's Hub checkpoints."""
        for model in PAPER_MODELS:
            if model.hub_id.lower() == str(model_id).lower():
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

    @property
    def hub_task_category(self) -> str:
        return "fill-mask" if self.problem_type == "mask_fill" else "text-classification"

    @property
    def splits(self) -> tuple[str, ...]:
        """Splits the benchmark publishes (GMET is a test-only, zero-shot task)."""
        if self.problem_type == "mask_fill":
            return ("test",)
        return ("train", "validation", "test")


def _percent_results(task: str) -> MappingProxyType[str, MappingProxyType[str, float]]:
    """Per-model reported scores of one task, converted from percent to 0-1."""
    out: dict[str, MappingProxyType[str, float]] = {}
    for model in PAPER_MODELS:
        if len(model.results_percent) != len(RESULT_COLUMNS):
            raise ValueError(
                f"paper results row for {model.name!r} has {len(model.results_percent)} "
                f"numbers, expected {len(RESULT_COLUMNS)}"
            )
        scores = {
            metric: round(value / 100.0, 6)
            for (col_task, metric), value in zip(RESULT_COLUMNS, model.results_percent, strict=True)
            if col_task == task
        }
        out[model.name] = MappingProxyType(scores)
    return MappingProxyType(out)


def _best_hparams(task: str) -> MappingProxyType[str, HParams]:
    if task not in HPARAM_TASKS:
        return MappingProxyType({})
    position = HPARAM_TASKS.index(task)
    out: dict[str, HParams] = {}
    for model in PAPER_MODELS:
        cells = model.best_hparams.split("|")
        if len(cells) != len(HPARAM_TASKS):
            raise ValueError(f"appendix E row for {model.name!r} has {len(cells)} cells")
        preset, lr, epochs, batch = cells[position].split(",")
        out[model.name] = HParams(preset, float(lr), int(epochs), int(batch))
    return MappingProxyType(out)


def _flags(task: str, class_balance: MappingProxyType[str, float], label_names: tuple[str, ...]):
    """This task's flagged cells of the paper's tables, by model (see nlue.registry.paper_checks)."""
    shares = {task: class_balance[label_names[0]]} if len(label_names) == 2 and class_balance else None
    out: dict[str, list[PaperFlag]] = {}
    for flag in paper_flags(PAPER_MODELS, shares):
        if flag.task == task:
            out.setdefault(flag.model, []).append(flag)
    return MappingProxyType({model: tuple(flags) for model, flags in out.items()})


def _balance(**fractions: float) -> MappingProxyType[str, float]:
    return MappingProxyType(dict(fractions))


_ENTAIL = ("entailment", "not_entailment")


def _spec(**kwargs: object) -> TaskSpec:
    name = str(kwargs["name"])
    problem_type = kwargs["problem_type"]
    metrics = {
        "classification": CLASSIFICATION_METRICS,
        "regression": REGRESSION_METRICS,
        "mask_fill": GMET_METRICS,
    }[str(problem_type)]
    primary = {
        "classification": "macro_f1",
        "regression": "pearson_spearman_mean",
        "mask_fill": "combined",
    }[str(problem_type)]
    return TaskSpec(
        metrics=metrics,
        primary_metric=primary,
        paper_results=_percent_results(name),
        paper_best_hparams=_best_hparams(name),
        paper_flags=_flags(name, kwargs["class_balance"], kwargs["label_names"]),  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


_SPECS: tuple[TaskSpec, ...] = (
    _spec(
        name="sa",
        hub_task_id="sentiment-classification",
        title="Sentiment Analysis",
        category="single sentence",
        problem_type="classification",
        description="Decide whether a review or short post expresses a positive or a negative opinion.",
        input_fields=("text",),
        label_field="label",
        label_names=("negative", "positive"),
        paper_train_size=65_100,
        paper_test_size=16_300,
        paper_total_size=81_400,
        class_balance=_balance(negative=0.5, positive=0.5),
        domains=("movie reviews", "COVID-19 tweets"),
        sources=(
            "SST from GLUE (Socher et al. 2013), machine-translated",
            "NepCOV19Tweets (Sitaula et al. 2021)",
        ),
        label_notes="1 = positive, 0 = negative.",
    ),
    _spec(
        name="cola",
        hub_task_id="acceptability-classification",
        title="Corpus of Linguistic Acceptability",
        category="single sentence",
        problem_type="classification",
        description="Judge whether a sentence is grammatically acceptable Nepali.",
        input_fields=("text",),
        label_field="label",
        label_names=("unacceptable", "acceptable"),
        paper_train_size=7_800,
        paper_test_size=1_950,
        paper_total_size=9_750,
        class_balance=_balance(unacceptable=0.3, acceptable=0.7),
        domains=("books", "journals"),
        sources=("CoLA (Warstadt et al. 2019)",),
        label_notes="1 = acceptable, 0 = unacceptable.",
    ),
    _spec(
        name="wg",
        hub_task_id="coreference-resolution",
        title="WinoGrande",
        category="single sentence",
        problem_type="classification",
        description=(
            "Fill the blank (`_`) of a sentence with the one of two options that common "
            "sense supports; a test of pronoun-style coreference."
        ),
        input_fields=("sentence", "option1", "option2"),
        label_field="answer",
        label_names=("option1", "option2"),
        paper_train_size=32_500,
        paper_test_size=8_140,
        paper_total_size=40_700,
        class_balance=_balance(option1=0.5, option2=0.5),
        domains=("miscellaneous",),
        sources=("WinoGrande (Sakaguchi et al. 2019)",),
        label_notes=(
            "Sources give `answer` as 1 or 2 (the correct option); the dataset stores it "
            "as a ClassLabel, 0 = option1, 1 = option2."
        ),
    ),
    _spec(
        name="qqp",
        hub_task_id="semantic-similarity-classification",
        title="Quora Question Pairs",
        category="similarity & paraphrase",
        problem_type="classification",
        description="Decide whether two questions ask the same thing.",
        input_fields=("question1", "question2"),
        label_field="label",
        label_names=("not_duplicate", "duplicate"),
        paper_train_size=26_000,
        paper_test_size=6_500,
        paper_total_size=32_500,
        class_balance=_balance(not_duplicate=0.6, duplicate=0.4),
        domains=("social question answering",),
        sources=("Quora Question Pairs (Iyer et al. 2017)",),
        label_notes="1 = duplicate (paraphrase), 0 = not.",
    ),
    _spec(
        name="mrpc",
        hub_task_id="semantic-similarity-classification",
        title="Microsoft Research Paraphrase Corpus",
        category="similarity & paraphrase",
        problem_type="classification",
        description="Decide whether two news sentences are paraphrases of each other.",
        input_fields=("sentence1", "sentence2"),
        label_field="label",
        label_names=("not_equivalent", "equivalent"),
        paper_train_size=4_190,
        paper_test_size=1_050,
        paper_total_size=5_230,
        class_balance=_balance(not_equivalent=0.3, equivalent=0.7),
        domains=("news",),
        sources=("MRPC (Dolan & Brockett 2005)",),
        label_notes="1 = paraphrase, 0 = not.",
    ),
    _spec(
        name="stsb",
        hub_task_id="semantic-similarity-scoring",
        title="Semantic Textual Similarity Benchmark",
        category="similarity & paraphrase",
        problem_type="regression",
        description="Score how close in meaning two sentences are, from 0 (unrelated) to 5 (same meaning).",
        input_fields=("sentence1", "sentence2"),
        label_field="label",
        label_names=(),
        paper_train_size=5_450,
        paper_test_size=1_360,
        paper_total_size=6_820,
        class_balance=_balance(),
        domains=("news", "video captions"),
        sources=("STS Benchmark (Cer et al. 2017)",),
        label_notes="A float score from 0.0 to 5.0.",
    ),
    _spec(
        name="qadsm",
        hub_task_id="semantic-similarity-classification",
        title="Query-Ad Matching",
        category="similarity & paraphrase",
        problem_type="classification",
        description="Decide whether an advertisement (title and description) is relevant to a search query.",
        input_fields=("query", "ad_title", "ad_description"),
        label_field="relevance_label",
        label_names=("irrelevant", "relevant"),
        paper_train_size=59_400,
        paper_test_size=14_900,
        paper_total_size=74_300,
        class_balance=_balance(irrelevant=0.5, relevant=0.5),
        domains=("search queries and advertisements",),
        sources=("QADSM from XGLUE (Liang et al. 2020)",),
        label_notes="1 = relevant, 0 = irrelevant.",
    ),
    _spec(
        name="mnli",
        hub_task_id="natural-language-inference",
        title="Multi-Genre Natural Language Inference",
        category="inference",
        problem_type="classification",
        description="Decide whether a premise entails, is neutral towards, or contradicts a hypothesis.",
        input_fields=("premise", "hypothesis"),
        label_field="label",
        label_names=("entailment", "neutral", "contradiction"),
        paper_train_size=40_800,
        paper_test_size=10_200,
        paper_total_size=51_000,
        class_balance=_balance(entailment=1 / 3, neutral=1 / 3, contradiction=1 / 3),
        domains=("miscellaneous",),
        sources=(
            "multi-genre NLI data in the style of MultiNLI (Williams et al. 2018), as the paper describes it; "
            "its source table also cites SNLI (Bowman et al. 2015)",
        ),
        label_notes="0 = entailment, 1 = neutral, 2 = contradiction.",
    ),
    _spec(
        name="qnli",
        hub_task_id="natural-language-inference",
        title="Question-answering NLI",
        category="inference",
        problem_type="classification",
        description="Decide whether a sentence contains the answer to a question.",
        input_fields=("question", "sentence"),
        label_field="label",
        label_names=_ENTAIL,
        paper_train_size=28_000,
        paper_test_size=7_000,
        paper_total_size=35_000,
        class_balance=_balance(entailment=0.5, not_entailment=0.5),
        domains=("Wikipedia",),
        sources=("SQuAD (Rajpurkar et al. 2016)",),
        label_notes="0 = entailment (the sentence answers the question), 1 = not entailment.",
    ),
    _spec(
        name="rte",
        hub_task_id="natural-language-inference",
        title="Recognizing Textual Entailment",
        category="inference",
        problem_type="classification",
        description="Decide whether a passage entails a short claim.",
        input_fields=("sentence1", "sentence2"),
        label_field="label",
        label_names=_ENTAIL,
        paper_train_size=2_010,
        paper_test_size=503,
        paper_total_size=2_510,
        class_balance=_balance(entailment=0.5, not_entailment=0.5),
        domains=("news", "Wikipedia"),
        sources=("RTE1, RTE2, RTE3 and RTE5",),
        label_notes="0 = entailment, 1 = not entailment.",
    ),
    _spec(
        name="cr",
        hub_task_id="coreference-resolution",
        title="Coreference Resolution (Winograd schema)",
        category="inference",
        problem_type="classification",
        description=(
            "Given a sentence with an ambiguous pronoun and the same sentence with the "
            "pronoun replaced by a candidate, decide whether the substitution is right."
        ),
        input_fields=("sentence1", "sentence2"),
        label_field="label",
        label_names=("incorrect", "correct"),
        paper_train_size=564,
        paper_test_size=142,
        paper_total_size=706,
        class_balance=_balance(incorrect=0.5, correct=0.5),
        domains=("fiction books",),
        sources=("Winograd Schema Challenge (Levesque et al. 2011), translated by hand",),
        label_notes="1 = the substituted sentence is correct, 0 = not.",
    ),
    _spec(
        name="gmet",
        hub_task_id="masked-language-modeling",
        title="General Masked Evaluation Task",
        category="GMET",
        problem_type="mask_fill",
        description=(
            "Zero-shot mask filling: predict the word hidden behind `[MASK]`; scored by "
            "accuracy and the combined score that rewards even accuracy across 75 categories."
        ),
        input_fields=("sentence", "category", "theme", "answers"),
        label_field=None,
        label_names=(),
        paper_train_size=None,
        paper_test_size=1_500,
        paper_total_size=1_500,
        class_balance=_balance(),
        domains=("books", "news"),
        sources=(
            "authentic Nepali sentences collected by the paper's authors from books and news, "
            "20 in each of 75 categories, one word masked",
        ),
        label_notes="No label: `answers` lists the acceptable words for the blank.",
    ),
)  # fmt: skip

TASKS: MappingProxyType[str, TaskSpec] = MappingProxyType({t.name: t for t in _SPECS})
TASK_NAMES: tuple[str, ...] = tuple(TASKS)


def get_task(name: str) -> TaskSpec:
    """Return the spec of ``name``; raise a ValueError listing the valid names."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown NLUE task {name!r}; expected one of: {', '.join(TASK_NAMES)}") from None


def tasks_in_category(category: str) -> tuple[TaskSpec, ...]:
    return tuple(t for t in TASKS.values() if t.category == category)
