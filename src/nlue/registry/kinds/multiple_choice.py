"""Multiple choice: native-language exam questions, four options A-D, one key (the UrduMMLU protocol).

An item is the paper's schema (``shared/mcq_facts.md`` §2) with the options as four
top-level text columns, so that the builder normalises, fingerprints and measures them
like any text field, ``datasets`` loads plain strings and lm-evaluation-harness reads
``doc_to_choice: "{{[A, B, C, D]}}"``: ``id``, ``question``, ``A``-``D``, ``correct_key``
(ClassLabel A-D), ``correct_option`` (the keyed option's text), ``domain``, ``subdomain``,
``level``, ``language`` and ``source`` (a list of ``{name, url}``). A source may give the
options as those columns or as the paper's ``options`` object (or a list of four).

Row rules (each failure names its field): four options, each non-empty after
normalisation and all four distinct; the key a letter A-D (any case, ``(B)``, ``B)`` and
``B.`` are read as B; numbers are refused: the paper dropped index answers because
sources order options differently, and 0- vs 1-based cannot be told apart);
``correct_option``, when given, equal to the keyed option after normalisation (filled
in from the key when absent); subdomain and level from the task's vocabularies (the
domain is derived from the subdomain; a given domain must agree); ``language`` equal to
the task's. In the ``demo`` split the builder rejects an exact repeat with another key
(label code: the key id); ``test`` is kept as released and such repeats are counted, so
curate first: :mod:`nlue.pipelines.mcq_curation` merges agreeing repeats (also with the
options in another order) and drops conflicting ones.

Text is normalised by :func:`nlue.registry.kinds.mcq_text.normalize_mcq_text` with the task's language profile
(``nepali``, or ``urdu``, whose rules fold the look-alike Arabic code points), the one normalisation of the
builder, the curation pipeline and the answer parser.

Scoring: predictions are key ids 0-3, or :data:`INVALID_PREDICTION` (-1) for an output
that does not parse. ``accuracy_all_items`` (the primary, an nlue convention) counts an
invalid output as wrong; ``accuracy_parseable`` divides by the parseable outputs only
(what the UrduMMLU paper's BLOOMZ-3B row implies it reports, ambiguity 12.1);
``invalid_rate`` is the paper's Inv% as a share. The splits are ``demo`` (the
demonstration pool of k-shot prompts, never overlapping ``test``) and ``test``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import datasets
import numpy as np

from nlue.errors import NlueError
from nlue.registry.kinds.base import (
    CAUSAL_LM_LOGLIKELIHOOD,
    GENERATION,
    BuiltSplit,
    CardText,
    RowRejection,
    TaskDeclaration,
    TaskKind,
)
from nlue.registry.kinds.mcq_text import (
    BLANK_NOTE,
    CARD_TEXT,
    KEY_LABEL,
    LETTERS,
    POOL_RULE,
    SAMPLE_STATEMENT,
    STARTER,
    ExamDeclarations,
    canonical_level,
    canonical_subdomain,
    domain_of,
    exam_of,
    exam_prompt,
    normalize_mcq_text,
    vocab_key,
)
from nlue.scoring.classification import accuracy_rows
from nlue.scoring.problem import ScoringProblem
from nlue.scoring.validation import check_not_empty, check_same_length, label_codes
from nlue.text.json_records import parse_json, repeated_key
from nlue.text.profiles import normalize_text, profile_of
from nlue.text.rules import LanguageProfile
from nlue.text.values import NotText, source_text

INVALID_PREDICTION = -1
MCQ_METRICS: tuple[str, ...] = ("accuracy_all_items", "accuracy_parseable", "invalid_rate")

# ------------------------------------------------------------------ row rules
_KEY = re.compile(r"^\(?\s*([A-Da-d])\s*\)?\s*[.)]?$")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.0*)?$")


def parse_key(raw: Any) -> int | str:
    """The key id (0-3) of a raw key, or a ``str`` saying what was expected."""
    if isinstance(raw, int | float) or _NUMBER.match(str(raw).strip()):
        return (
            "expected the key as a letter A-D; numbers are ambiguous (0- or 1-based) and the item schema "
            "stores letters: convert them first (`nlue mcq curate --numeric-keys 0|1`)"
        )
    found = _KEY.match(str(raw).strip())
    return LETTERS.index(found.group(1).upper()) if found else "expected correct_key A, B, C or D"


def key_letter(value: Any) -> str:
    """The letter of a key from a built row (ClassLabel id 0-3) or a source (a letter)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and 0 <= int(value) < len(LETTERS):
        return LETTERS[int(value)]
    parsed = parse_key(value)
    if isinstance(parsed, str):
        raise NlueError(f"correct_key {value!r}: {parsed}")
    return LETTERS[parsed]


def item_options(item: Mapping[str, Any]) -> dict[str, str]:
    """An item's options by letter, from the columns A-D or the paper's ``options`` object."""
    nested = item.get("options")
    if isinstance(nested, Mapping):
        return {letter: str(nested[letter]) for letter in LETTERS}
    return {letter: str(item[letter]) for letter in LETTERS}


def parse_sources(raw: Any, profile: LanguageProfile | None = None) -> list[dict[str, str]] | str:
    """Provenance as a list of ``{name, url}``: from such a list, one object, JSON text, a name or a URL.

    Names are normalised by ``profile`` (the exam's; default ``nepali``).
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return []
    if isinstance(raw, str) and raw.strip().startswith(("[", "{")):
        try:
            raw = parse_json(raw)
        except ValueError:  # not JSON, or nested too deep to read
            return "source looks like JSON but does not parse"
    entries = [raw] if isinstance(raw, str | Mapping) else raw
    if not isinstance(entries, list | tuple):
        return "expected a list of {name, url} objects, a name or a URL"
    out: list[dict[str, str]] = []
    for entry in entries:
        if isinstance(entry, str):
            text = normalize_text(entry, profile)
            pair = {"name": "", "url": text} if text.startswith(("http://", "https://")) else {"name": text, "url": ""}
        elif isinstance(entry, Mapping):
            pair = {
                "name": normalize_text(str(entry.get("name") or ""), profile),
                "url": str(entry.get("url") or "").strip(),
            }
        else:
            return "expected each source to be a {name, url} object or a text"
        if (pair["name"] or pair["url"]) and pair not in out:
            out.append(pair)
    return out


def _raw_options(raw: Callable[[str], Any]) -> dict[str, Any] | RowRejection:
    nested = raw("options")
    if isinstance(nested, str) and nested.strip().startswith(("{", "[")):
        try:
            nested = parse_json(nested)
        except ValueError:  # not JSON, or nested too deep to read
            return RowRejection("options", "options look like JSON but do not parse", nested[:80])
        if repeated_key(nested) is not None:
            return RowRejection("options", f"the options name {repeated_key(nested)!r} twice; name each option once")
    if isinstance(nested, Mapping):
        given = {str(k).strip().upper(): v for k, v in nested.items()}
        if set(given) != set(LETTERS):
            return RowRejection(
                "options", f"expected exactly the options A, B, C, D; found {', '.join(given) or 'none'}"
            )
        return given
    if isinstance(nested, list | tuple):
        if len(nested) != len(LETTERS):
            return RowRejection("options", f"expected 4 options, found {len(nested)}")
        return dict(zip(LETTERS, nested, strict=True))
    if nested is not None:
        return RowRejection("options", "expected an object {A, B, C, D} or a list of four options", str(nested))
    flat = {letter: raw(letter) for letter in LETTERS}
    if all(value is None for value in flat.values()):
        return RowRejection("options", "no options: expected columns A, B, C, D or an `options` object {A, B, C, D}")
    if raw("E") not in (None, ""):
        return RowRejection("E", "expected 4 options (A-D); this row has a fifth")
    return flat


def _text(field: str, value: Any, profile: LanguageProfile) -> str | RowRejection:
    if value is None:
        return RowRejection(field, "missing value")
    if not isinstance(value, str):
        try:
            value = source_text(value)
        except NotText as exc:
            return RowRejection(field, exc.reason, exc.shown)
    text = normalize_mcq_text(value, profile=profile)
    return text if text else RowRejection(field, "empty text after normalisation", value)


def check_item(exam: ExamDeclarations, raw: Callable[[str], Any], name: str) -> dict[str, Any] | RowRejection:
    """An item's fields normalised and checked by the rules of the module docstring (the key excepted).

    ``raw(field)`` reads the source's value; ``name`` prefixes an id made for an item without one.
    """
    language = exam.language
    profile = profile_of(exam)
    given_language = raw("language")
    if given_language not in (None, "") and str(given_language).strip().casefold() != language:
        return RowRejection("language", f"task {exam.name!r} holds items in {language!r}", str(given_language))
    question = _text("question", raw("question"), profile)
    if isinstance(question, RowRejection):
        return question
    options = _raw_options(raw)
    if isinstance(options, RowRejection):
        return options
    row: dict[str, Any] = {"question": question}
    for letter in LETTERS:
        text = _text(letter, options[letter], profile)
        if isinstance(text, RowRejection):
            return text
        first = next((other for other in LETTERS if row.get(other) == text), None)
        if first is not None:
            return RowRejection(letter, f"options {first} and {letter} are the same after normalisation", text)
        row[letter] = text
    key = parse_key(raw("correct_key")) if raw("correct_key") is not None else "missing"
    given_option = raw("correct_option")
    if isinstance(key, int):
        keyed = row[LETTERS[key]]
        if given_option not in (None, ""):
            text = _text("correct_option", given_option, profile)
            if isinstance(text, RowRejection) or text != keyed:
                shown = text.value if isinstance(text, RowRejection) else text
                return RowRejection(
                    "correct_option",
                    f"expected the text of option {LETTERS[key]} ({keyed!r}) after normalisation",
                    shown,
                )
        row["correct_option"] = keyed
    subdomain_raw = raw("subdomain")
    subdomain = canonical_subdomain(exam, subdomain_raw) if subdomain_raw not in (None, "") else None
    if subdomain is None:
        known = "; ".join(f"{d}: {', '.join(s)}" for d, s in exam.subjects.items())
        return RowRejection("subdomain", f"unknown or missing subdomain; expected one of {known}", str(subdomain_raw))
    domain = domain_of(exam, subdomain)
    given_domain = raw("domain")
    if given_domain not in (None, "") and vocab_key(str(given_domain)) != vocab_key(domain):
        return RowRejection("domain", f"subdomain {subdomain!r} belongs to domain {domain!r}", str(given_domain))
    level_raw = raw("level")
    level = canonical_level(exam, level_raw) if level_raw not in (None, "") else None
    if level is None:
        return RowRejection(
            "level", f"unknown or missing level; expected one of {', '.join(exam.levels)}", str(level_raw)
        )
    sources = parse_sources(raw("source"), profile)
    if isinstance(sources, str):
        return RowRejection("source", sources)
    item_id = normalize_text(str(raw("id") or ""), profile)
    if not item_id:  # an id from the content, so the same item gets the same id in every build
        digest = hashlib.blake2b("\x1f".join(row[f] for f in ("question", *LETTERS)).encode(), digest_size=6)
        item_id = f"{name}-{digest.hexdigest()}"
    row.update(id=item_id, domain=domain, subdomain=subdomain, level=level, language=language, source=sources)
    return row


# ------------------------------------------------------------------ scoring
def prediction_ids(values: Any, name: str) -> np.ndarray:
    """Key ids from ids, letters, or None (an invalid output, -1)."""
    out = []
    for position, value in enumerate(values):
        if value is None:
            out.append(INVALID_PREDICTION)
        elif isinstance(value, str):
            parsed = parse_key(value)
            if isinstance(parsed, str):
                raise NlueError(f"{name} position {position}: {value!r}; expected a key A-D, an id 0-3 or -1")
            out.append(parsed)
        else:
            out.append(value)
    return np.asarray(out)


def _mcq_statistic(outputs: np.ndarray, references: np.ndarray | None) -> dict[str, np.ndarray]:
    assert references is not None
    valid = outputs != len(LETTERS)  # label_codes put INVALID_PREDICTION last
    parseable = valid.sum(axis=-1)
    correct = (outputs == references).sum(axis=-1)
    rate = np.full(parseable.shape, np.nan)
    np.divide(correct, parseable, out=rate, where=parseable > 0)  # undefined when nothing parsed
    return {"accuracy_all_items": accuracy_rows(outputs, references), "accuracy_parseable": rate,
            "invalid_rate": 1.0 - valid.mean(axis=-1)}  # fmt: skip


def multiple_choice_problem(predictions: Any, references: Any, owner: str) -> ScoringProblem:
    """Key ids (-1 = invalid output) against gold ids, as a scoring problem with bootstrap intervals."""
    check_same_length(predictions=predictions, references=references)
    check_not_empty(len(predictions))
    return ScoringProblem(
        outputs=label_codes(prediction_ids(predictions, "predictions"), (0, 1, 2, 3, INVALID_PREDICTION),
                            "predictions", owner),
        references=label_codes(prediction_ids(references, "references"), (0, 1, 2, 3), "references", owner),
        statistic=_mcq_statistic,
        metrics=MCQ_METRICS,
        value_range=(0.0, 1.0),
    )  # fmt: skip


# ------------------------------------------------------------------ the kind
@dataclass(frozen=True)
class MultipleChoiceKind(TaskKind):
    @property
    def apart_from_test(self) -> tuple[str, ...]:
        return ("demo",)  # k-shot examples drawn from demo must never show a test item with its key

    def text_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("question",)  # the options are normalised with it by check_item, from a column or an object

    def identity_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("question", *LETTERS)

    def gold(self, task: TaskDeclaration, item: Mapping[str, Any]) -> Any:
        return key_letter(item[str(task.label_field)])  # the key as a letter, as the parsed answers are

    def required_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("question", str(task.label_field))

    def optional_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("id", *LETTERS, "options", "correct_option", "domain", "subdomain", "level", "language", "source")

    def features(self, task: TaskDeclaration) -> datasets.Features:
        text = datasets.Value("string")
        return datasets.Features(
            {"id": text, "question": text, **{letter: text for letter in LETTERS},
             str(task.label_field): datasets.ClassLabel(names=list(task.label_names)), "correct_option": text,
             "domain": text, "subdomain": text, "level": text, "language": text,
             "source": datasets.List({"name": text, "url": text}), "idx": datasets.Value("int32")}
        )  # fmt: skip

    def llm_template(self, task: TaskDeclaration, language: str) -> tuple[str, tuple[str, ...]]:
        """The prompt up to ``Answer key:`` as Jinja, and the letters A-D scored after it (log-likelihood)."""
        prompt = task.prompts.get(language)
        if prompt is None:
            offered = ", ".join(task.prompts) or "none"
            raise NlueError(f"task {task.name!r} has no {language!r} prompt for language models; it has: {offered}")
        fields = {name: f"{{{{ {name} }}}}" for name in ("domain", "subdomain", "level", "question", *LETTERS)}
        return f"{prompt.instruction}\n\n{exam_prompt(prompt.field_labels, fields)}\n{KEY_LABEL}", LETTERS

    def prompt_fields(self, input_fields: tuple[str, ...]) -> tuple[str, ...]:
        return ("subject", "level", "question")  # the lines exam_prompt labels; options are lettered

    def describe_output(self, task: TaskDeclaration) -> str:
        return (
            "two lines, `Answer key: <A-D>` and `Answer text: <the chosen option's text>` (generation), "
            "or the option with the highest log-likelihood"
        )

    def parse_label(self, task: TaskDeclaration, raw: Any) -> int | str:
        return parse_key(raw)

    def complete_row(
        self, task: TaskDeclaration, raw: Callable[[str], Any], context: Any
    ) -> dict[str, Any] | RowRejection:
        return check_item(exam_of(task), raw, task.name)

    def label_code_dtype(self, task: TaskDeclaration) -> np.dtype | None:
        return np.dtype(np.uint8)

    def strata(self, task: TaskDeclaration, labels: np.ndarray) -> np.ndarray:
        return np.asarray(labels).astype(np.int8)  # the demonstration pool is drawn balanced over keys

    def scoring_problem(
        self, task: TaskDeclaration, predictions: Any, references: Any, categories: Sequence[str] | None
    ) -> tuple[ScoringProblem, tuple[str, ...]]:
        if categories is not None:
            raise NlueError(f"task {task.name!r} takes predictions and references alone, no categories")
        return multiple_choice_problem(predictions, references, f"task {task.name!r}"), ()

    def score_features(self, task: TaskDeclaration | None) -> datasets.Features:
        return datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")})

    @property
    def score_format(self) -> str | None:
        return "numpy"

    def format_label(self, task: TaskDeclaration, value: Any) -> Any:
        return key_letter(value) if isinstance(value, int | np.integer) else value

    def card_text(self, task: TaskDeclaration) -> CardText | None:
        return replace(CARD_TEXT, languages=(exam_of(task).language,))

    def card_lines(self, task: TaskDeclaration, splits: Mapping[str, BuiltSplit], is_sample: bool) -> list[str]:
        """Items per subject and per level in each split, the pool rule, and the sample-data statement."""
        exam = exam_of(task)
        names = list(splits)
        stats = {name: report.stats for name, report in splits.items()}
        subjects = {name: s.subject_counts if s is not None else {} for name, s in stats.items()}
        lines = ["", "#### Items per subject", "", "| domain | subdomain | " + " | ".join(names) + " |",
                 "|---|---|" + "---|" * len(names)]  # fmt: skip
        for domain, subdomains in exam.subjects.items():
            for subdomain in subdomains:
                cells = [str(subjects[name].get((domain, subdomain), 0)) for name in names]
                if any(cell != "0" for cell in cells):
                    lines.append(f"| {domain} | {subdomain} | " + " | ".join(cells) + " |")
        for name, split_stats in stats.items():
            if split_stats is not None and split_stats.level_counts:
                counts = ", ".join(f"{level} {split_stats.level_counts[level]}" for level in exam.levels
                                   if level in split_stats.level_counts)  # fmt: skip
                lines += ["", f"Items per level in `{name}`: {counts}."]
        lines += ["", BLANK_NOTE, "", POOL_RULE]  # the language profile's rules are the card's build section
        if is_sample:
            lines += ["", SAMPLE_STATEMENT]
        return lines


MULTIPLE_CHOICE = MultipleChoiceKind(
    name="multiple_choice",
    metrics=MCQ_METRICS,
    primary_metric="accuracy_all_items",
    hub_task_category="multiple-choice",
    evaluators=(GENERATION, CAUSAL_LM_LOGLIKELIHOOD),
    splits=("demo", "test"),
    how_to_score="prompt a causal LM with `nlue llm mcq --model ...` (generation, strict two-line answers)",
    declares=("exam",),
    fixed_fields=("question", *LETTERS),
    fixed_labels=LETTERS,
    takes_prompts=True,
    fixed_prompt=(("answer_cue", KEY_LABEL), ("label_words", LETTERS)),  # what the strict parser reads
    starter=STARTER,
)
