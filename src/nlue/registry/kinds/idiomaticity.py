"""Idiomaticity: is an idiom used in its idiomatic or its literal sense in this context? (neDIOM)

An item (``shared/nediom_facts.md`` §2) is an ``idiom`` in citation form, the sentence
that holds it (``S2``), the sentences before and after it (``S1``, ``S3``), a ``label``
(ClassLabel ``idiomatic`` = 0, ``literal`` = 1) and where the idiom sits in S2. A source
gives that as the paper does, a ``position`` field with the span between ``###`` markers;
the built dataset stores it as character offsets ``span_start``/``span_end`` into S2
(:mod:`nlue.text.idiom_position`) and ``prefix_match``, whether the span starts with the
idiom's truncated prefix (:mod:`nlue.text.idiom_prefix`); a span that does not is kept and
flagged (``prefix_match`` false), since an annotator may mark a form the rule misses.

Row rules (each failure names its field): the idiom has at least two words; S2 and the
idiom are non-empty; no ``###`` in S1, S2 or S3 (markers belong in ``position``); the
position field has exactly one marked span, and without its markers it is S2; labels
``I``/``L`` (any case; the Greek capital iota ``Ι`` that text extraction puts for ``I``
is read as ``I``), ``idiomatic``/``literal`` or the ids 0/1; ``NA`` (an incoherent
context) is refused with a hint: NA items are not part of the dataset. S1 and S3 may be
empty (a hit in a document's first or last sentence).

The 8 input variants (facts §5) are built here and nowhere else: :data:`VARIANTS`,
:func:`variant_input`. Decisions (our own; the paper states none): the context sentences
are joined with one space in document order, empty ones left out; "with idiom" gives the
idiom in citation form as a separate first segment (the first text of a text pair for an
encoder); the ``###`` markers are never shown to a model (the context is built from S1,
S2 and S3, which hold none).

Scoring: macro-F1 over the two labels (the paper's only metric, our primary) and
accuracy. Splits: ``train`` (the few-shot pool, 10 per label; the 5-shot set is the first
5 per label of it in stored order) and ``test``; no idiom occurs in both
(:mod:`nlue.idioms.split` draws them). No validation split is carved from 20 items.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import datasets

from nlue.errors import NlueError
from nlue.registry.kinds.base import (
    CAUSAL_LM_LOGLIKELIHOOD,
    BuiltSplit,
    CardText,
    RowRejection,
    StarterFile,
    TaskDeclaration,
)
from nlue.registry.kinds.classification import ClassificationKind, label_key
from nlue.text.idiom_position import MARKER, Span, parse_position
from nlue.text.idiom_prefix import prefix_matches
from nlue.text.profiles import normalize_text, profile_of
from nlue.text.values import NotText, source_text

CONTEXT_FIELDS: tuple[str, ...] = ("S1", "S2", "S3")
CONTEXTS: Mapping[str, tuple[str, ...]] = {
    "S2": ("S2",),
    "S1+S2": ("S1", "S2"),
    "S2+S3": ("S2", "S3"),
    "S1+S2+S3": ("S1", "S2", "S3"),
}
CONTEXT_JOINER = " "
POSITION_FIELD = "position"
# Raw label values, compared case-folded; the Greek capital iota (an OCR stand-in for I) folds to "ι".
_LABEL_VALUES: Mapping[str, int] = {"i": 0, "ι": 0, "idiomatic": 0, "0": 0, "l": 1, "literal": 1, "1": 1}
_NA_VALUES = frozenset({"na", "n/a", "n.a."})


@dataclass(frozen=True)
class InputVariant:
    """One of the paper's 8 inputs: a context window, with or without the idiom (numbered as in the paper)."""

    number: int
    context: str
    with_idiom: bool

    @property
    def name(self) -> str:
        return f"{self.context}/{'with' if self.with_idiom else 'without'}-idiom"


VARIANTS: tuple[InputVariant, ...] = tuple(
    InputVariant(2 * i + (0 if with_idiom else 1) + 1, context, with_idiom)
    for i, context in enumerate(CONTEXTS)
    for with_idiom in (True, False)
)


def get_variant(context: str, with_idiom: bool) -> InputVariant:
    """The variant of a context window (``S2``, ``S1+S2``, ``S2+S3``, ``S1+S2+S3``) with or without the idiom."""
    for variant in VARIANTS:
        if variant.context == context and variant.with_idiom == with_idiom:
            return variant
    raise NlueError(f"unknown context {context!r}; expected one of {', '.join(CONTEXTS)}")


def context_text(example: Mapping[str, Any], context: str) -> str:
    """The context window's sentences joined with one space, empty ones left out; never any marker."""
    return CONTEXT_JOINER.join(str(example[f]) for f in CONTEXTS[context] if example.get(f))


def variant_input(example: Mapping[str, Any], variant: InputVariant) -> tuple[str, str | None]:
    """The text (pair) a model reads: (idiom, context) with the idiom, (context, None) without."""
    context = context_text(example, variant.context)
    return (str(example["idiom"]), context) if variant.with_idiom else (context, None)


# ------------------------------------------------------------------ row rules
def parse_idiom_label(raw: Any) -> int | str:
    """0 (idiomatic) or 1 (literal) from a raw label, or what was expected."""
    key = unicodedata.normalize("NFC", label_key(raw)).casefold()
    if key in _LABEL_VALUES:
        return _LABEL_VALUES[key]
    if key in _NA_VALUES:
        return (
            "NA (incoherent context) items are not part of the dataset: drop them "
            "(`nlue idioms annotate-import` does, or `--label-map NA=drop`)"
        )
    return "expected I or L (idiomatic or literal; ids 0 or 1)"


def _optional_text(field: str, value: Any, normalize: Callable[[str], str]) -> str | RowRejection:
    if value is None:
        return ""
    if not isinstance(value, str):
        try:
            value = source_text(value)
        except NotText as exc:
            return RowRejection(field, exc.reason, exc.shown)
    return normalize(value)


def check_idiom_item(
    raw: Callable[[str], Any], id_prefix: str, normalize: Callable[[str], str] = normalize_text
) -> dict[str, Any] | RowRejection:
    """The fields an item gets beyond its normalised idiom, S2 and label (module docstring's rules).

    ``normalize`` is the task's language profile's normaliser (``nepali`` for neDIOM).
    """
    texts: dict[str, str] = {}
    for field in ("idiom", *CONTEXT_FIELDS, POSITION_FIELD):
        text = _optional_text(field, raw(field), normalize)
        if isinstance(text, RowRejection):
            return text
        if field != POSITION_FIELD and MARKER in text:
            return RowRejection(field, f"{field} holds the plain text; mark the idiom in `position`, not here", text)
        texts[field] = text
    if len(texts["idiom"].split()) < 2:
        return RowRejection("idiom", "expected an idiom of at least two words (the paper's are 2-4)", texts["idiom"])
    if not texts[POSITION_FIELD]:
        return RowRejection(POSITION_FIELD, "missing: expected S2 with the idiom's span marked ###...###")
    span = parse_position(texts[POSITION_FIELD], texts["S2"])
    if not isinstance(span, Span):
        return RowRejection(POSITION_FIELD, span, texts[POSITION_FIELD])
    item_id = normalize(str(raw("id") or ""))
    if not item_id:  # from the content, so the same item gets the same id in every build
        content = "\x1f".join(texts[f] for f in ("idiom", *CONTEXT_FIELDS)).encode()
        item_id = f"{id_prefix}-{hashlib.blake2b(content, digest_size=6).hexdigest()}"
    return {
        "id": item_id,
        "S1": texts["S1"],
        "S3": texts["S3"],
        "span_start": span.start,
        "span_end": span.end,
        "prefix_match": prefix_matches(texts["idiom"], texts["S2"], span.start),
    }


# ------------------------------------------------------------------ the card
CARD_TEXT = CardText(
    intro=(
        "neDIOM asks whether a Nepali idiom is used in its idiomatic or its literal sense, given the sentence that "
        "holds it and, in some input variants, the sentences around it and the idiom itself. Contexts were mined "
        "from web text with a truncated-prefix search and labelled by native speakers."
    ),
    scoring=(
        'Score predictions (label ids, 0 = idiomatic, 1 = literal) with `evaluate.load("nlue", config)`: macro-F1 '
        "over the two labels, the paper's metric and our primary, and accuracy. Always answering `idiomatic` gives "
        "macro-F1 of about 0.44 on the paper's test set, always `literal` about 0.18: compare with those floors."
    ),
    limitations=(
        "Contexts come from web text and may contain offensive content; some idioms belong to one region or "
        "culture. Labels are skewed towards idiomatic (the paper: 408 idiomatic, 118 literal), most idioms have one "
        "or two contexts, and the few-shot pool holds 20 items, so single few-shot runs are noisy."
    ),
    languages=("ne",),
    sample_banner=(
        "This build holds SAMPLE data written by the nlue developers (our own Nepali sentences around real idioms) "
        "to try the tools; it is not the neDIOM release and scores on it mean nothing about a model."
    ),
)
CARD_NOTES: tuple[str, ...] = (
    "**Fields.** `idiom` (citation form), `S1`/`S2`/`S3` (the sentence before, the sentence holding the idiom, "
    "the sentence after; `S1` or `S3` is empty when S2 opens or closes its document), `label`, `span_start`/"
    "`span_end` (character offsets of the idiom's inflected form in `S2`, read from the paper's `###` position "
    "field) and `prefix_match` (false flags a span that does not start with the idiom's truncated prefix; such "
    "items are kept). `S2[:span_start] + '###' + S2[span_start:span_end] + '###' + S2[span_end:]` gives the "
    "paper's position field back.",
    "**Splits (our decisions).** `train` is the few-shot pool: 10 items per label drawn with a seed over whole "
    "idioms, so that no idiom occurs in both `train` and `test`; the 5-shot set is the first 5 items per label of "
    "`train` in stored order (nested in the 10-shot set). Everything else is `test`. The paper's pool had 20 "
    "items and its test set 506; it states neither the draw nor whether idioms were kept apart.",
    "**Spans, mining and labels (our decisions).** A span runs from the idiom's first word through the "
    "inflected form of its last word (`###डाँडो काट्यो### सक्छ`); words after it stay outside. Candidates were "
    "found with the paper's truncated prefix, generalised: every word but the last in full, the last cut to its "
    "first letter (a conjunct or a nukta letter kept whole; हुनु and जानु also by their suppletive initials), "
    "whole words only (`nlue idioms mine`). The paper's NA items are not part of the dataset, and labels are "
    "stored as ids. The paper's prompts, verbalisers, fine-tuning settings and checkpoints are the evaluators' "
    "to decide, not the data's.",
    "**Inputs (our decisions).** Context sentences are joined with one space in document order; with the idiom, "
    "the idiom in citation form is a separate first segment (an encoder reads the pair idiom, context); the `###` "
    "markers are never shown to a model. The eight variants, numbered as in the paper:",
)


# ------------------------------------------------------------------ the kind
@dataclass(frozen=True)
class IdiomaticityKind(ClassificationKind):
    def browse_row(self, task: TaskDeclaration, row: dict[str, Any]) -> dict[str, Any]:
        """S2 with the idiom's span between 【 and 】, so a reader sees what was marked (never shown to a model)."""
        start, end, sentence = row.get("span_start"), row.get("span_end"), row.get("S2")
        if isinstance(start, int) and isinstance(end, int) and isinstance(sentence, str) and 0 <= start < end:
            row = {**row, "S2": f"{sentence[:start]}【{sentence[start:end]}】{sentence[end:]}"}
        return row

    @property
    def carves_validation(self) -> bool:
        return False  # the pool is 20 items; a validation split carved from it would leave too few to learn from

    def text_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("S2", "idiom")  # S1 and S3 may be empty: normalised by check_idiom_item

    def identity_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("idiom", *CONTEXT_FIELDS)

    def required_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("idiom", *CONTEXT_FIELDS, str(task.label_field), POSITION_FIELD)

    def optional_fields(self, task: TaskDeclaration) -> tuple[str, ...]:
        return ("id",)

    def features(self, task: TaskDeclaration) -> datasets.Features:
        text = datasets.Value("string")
        return datasets.Features(
            {"id": text, "idiom": text, "S1": text, "S2": text, "S3": text,
             str(task.label_field): datasets.ClassLabel(names=list(task.label_names)),
             "span_start": datasets.Value("int32"), "span_end": datasets.Value("int32"),
             "prefix_match": datasets.Value("bool"), "idx": datasets.Value("int32")}
        )  # fmt: skip

    def describe_output(self, task: TaskDeclaration) -> str:
        return "`idiomatic` or `literal`: the sense in which the idiom is used in the context"

    def parse_label(self, task: TaskDeclaration, raw: Any) -> int | str:
        return parse_idiom_label(raw)

    def complete_row(
        self, task: TaskDeclaration, raw: Callable[[str], Any], context: Any
    ) -> dict[str, Any] | RowRejection:
        return check_idiom_item(raw, task.name, profile_of(task).normalizer())

    def text_pair(self, task: TaskDeclaration, example: Mapping[str, Any]) -> tuple[str, str | None]:
        return variant_input(example, VARIANTS[0])  # S2 with the idiom; the other variants by name

    def card_text(self, task: TaskDeclaration) -> CardText | None:
        return CARD_TEXT

    def prompt_fields(self, input_fields: tuple[str, ...]) -> tuple[str, ...]:
        return ("idiom", "context")  # the idiom's line and the variant's context line (S1-S3 joined)

    def card_lines(self, task: TaskDeclaration, splits: Mapping[str, BuiltSplit], is_sample: bool) -> list[str]:
        lines = []
        for note in CARD_NOTES:
            lines += ["", note]
        lines += ["", "| # | context | idiom given |", "|---|---|---|"]
        lines += [f"| {v.number} | {v.context} | {'yes' if v.with_idiom else 'no'} |" for v in VARIANTS]
        return lines


# What `nlue tasks new --kind idiomaticity` starts a task file with (our own example task).
STARTER = StarterFile(
    title="Idioms in context",
    description="Decide whether an idiom is used in its idiomatic or its literal sense.",
    body="""\
category: idiomaticity
label_field: label
# inputs (idiom, S1, S2, S3; the span in a `position` field) and labels (idiomatic, literal) are fixed by the kind
prompts:                         # the idiom's line and the context's line; label words scored after the cue
  en:
    instruction: Is the idiom in this text used figuratively (idiomatic) or literally (literal)?
    instruction_without_idiom: Is the multiword expression in this text used figuratively (idiomatic) or literally?
    field_labels: {idiom: Idiom, context: Text}
    answer_cue: "Answer:"
    label_words: [idiomatic, literal]
    # answer_line: {template: "Reply with one of these words only: {words}.", separator: ", "}
    # wordings:                  # other wordings, each asked by --wordings all beside this one (named main)
    # - name: plain
    #   instruction: Is the idiom here meant for its figurative sense (idiomatic) or word for word (literal)?
    #   instruction_without_idiom: Is the expression here meant figuratively (idiomatic) or word for word (literal)?
""",
    data_columns="S2: sentence",
    data_labels="",
)


IDIOMATICITY = IdiomaticityKind(
    name="idiomaticity",
    metrics=("accuracy", "macro_f1"),
    primary_metric="macro_f1",
    hub_task_category="text-classification",
    evaluators=(CAUSAL_LM_LOGLIKELIHOOD,),
    splits=("train", "test"),
    fixed_fields=("idiom", *CONTEXT_FIELDS),
    fixed_labels=("idiomatic", "literal"),  # parse_idiom_label: I = 0, L = 1
    takes_prompts=True,  # read by nlue.idioms.zero_shot as TaskDeclaration.idiom_prompts
    prompt_keys=("answer_line", "instruction_without_idiom"),
    required_prompt_keys=("instruction_without_idiom",),
    starter=STARTER,
)
