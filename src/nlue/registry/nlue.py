"""NLUE's twelve tasks as data: names, fields, labels, kinds, sizes, sources and the paper's figures.

Facts come from the NLUE paper (arXiv:2411.19244); the descriptions are our own words.
Label order is fixed here once and never re-derived. Task-specific input shapes
(WinoGrande's two readings, QADSM's ad fields) are declared here as data; the kinds
(:mod:`nlue.registry.kinds`) turn them into model input.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from nlue.registry.kinds import get_kind
from nlue.registry.nlue_prompts import NLUE_PROMPTS
from nlue.registry.paper import HPARAM_TASKS, PAPER_CITATION, PAPER_MODELS, RESULT_COLUMNS
from nlue.registry.paper_checks import PaperFlag, paper_flags
from nlue.registry.spec import HParams, InputSpec, TaskSpec

CATEGORIES: tuple[str, ...] = (
    "single sentence",
    "similarity & paraphrase",
    "inference",
    "GMET",
)

NLUE_SCORE_NOTE = (
    "The NLUE score (the mean of the tasks' primary metrics) is an nlue convention: the paper defines no "
    "overall score and does not rank its models by one."
)
STSB_SCORE_RANGE: tuple[float, float] = (0.0, 5.0)
MASK_PLACEHOLDER = "[MASK]"
WG_BLANK = "_"
AD_JOINER = "। "

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


def _flags(
    task: str, class_balance: Mapping[str, float], label_names: tuple[str, ...]
) -> MappingProxyType[str, tuple[PaperFlag, ...]]:
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
    """A task of NLUE: metrics and primary from its kind, the paper's figures from nlue.registry.paper."""
    name = str(kwargs["name"])
    kind = get_kind(str(kwargs["problem_type"]))
    return TaskSpec(
        metrics=kind.metrics,
        primary_metric=kind.primary_metric,
        paper_results=_percent_results(name),
        paper_best_hparams=_best_hparams(name),
        paper_flags=_flags(name, kwargs["class_balance"], kwargs["label_names"]),  # type: ignore[arg-type]
        prompts=NLUE_PROMPTS.get(name, MappingProxyType({})),
        **kwargs,  # type: ignore[arg-type]
    )


NLUE_TASKS: tuple[TaskSpec, ...] = (
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
        # A cross-encoder over both readings: the blank filled with option 1, paired with it filled with option 2.
        inputs=InputSpec(blank=WG_BLANK, blank_field="sentence", options=("option1", "option2")),
        label_field="answer",
        label_values=MappingProxyType({"1": 0, "2": 1}),  # sources give the right option as 1 or 2
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
        score_range=STSB_SCORE_RANGE,
        description="Score how close in meaning two sentences are, from 0 (unrelated) to 5 (same meaning).",
        input_fields=("sentence1", "sentence2"),
        field_hints=MappingProxyType(
            {"sentence2": "The model scores similarity from 0 (unrelated) to 5 (same meaning)."}
        ),
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
        inputs=InputSpec(first=("query",), second=("ad_title", "ad_description"), joiner=AD_JOINER),
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
        field_hints=MappingProxyType({"sentence2": "The first sentence with the pronoun replaced by a candidate."}),
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
        mask=MASK_PLACEHOLDER,
        categories=GMET_THEMES,
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


NLUE_CITATION = PAPER_CITATION
