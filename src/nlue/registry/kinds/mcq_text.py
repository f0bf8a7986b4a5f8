"""Text of multiple-choice exams: one normalisation for builder, curation and parser; vocabularies; prompt lines.

:func:`normalize_mcq_text` decides what "the same text" means for an exam item, its
curation and a model's answer:

* the task's language profile (:func:`nlue.text.profiles.profile_of`: ``urdu`` for the Urdu
  exam, ``nepali`` for the Nepali one; any registered profile for a declared task), whose rules
  the dataset card lists;
* Every language: a fill-in blank, a run of underscores, dots and ellipses that weighs at
  least 2 (an underscore or an ellipsis 1, a dot ½: ``__``, ``....``, ``……``, ``_..``),
  becomes ``____``, so one blank is written one way; ``...`` and a lone ``…`` stay.

Vocabularies: a task declares its domains -> subdomains, levels, aliases and grade
numbers (:class:`ExamDeclarations`, implemented by :class:`nlue.registry.spec.ExamSpec`);
names match ignoring case, spacing and underscores.

Prompt lines: :func:`exam_prompt` writes one item as the model reads it, shared by the
generation prompts (:mod:`nlue.evals.mcq.prompts`) and the log-likelihood template.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

from nlue.errors import NlueError
from nlue.registry.kinds.base import CardText, StarterFile
from nlue.text.profiles import URDU, fallback_profile_name, get_profile
from nlue.text.rules import LanguageProfile

LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
# The two answer lines stay in English in every prompt language, so that one parser reads them all.
KEY_LABEL = "Answer key:"
TEXT_LABEL = "Answer text:"

BLANK = "____"
_BLANK_RUN = re.compile(r"[_.…]{2,}")
_URDU = URDU.normalizer()


def normalize_urdu(text: str) -> str:
    """Urdu text by the ``urdu`` language profile (:data:`nlue.text.profiles.URDU`)."""
    return _URDU(text)


def normalize_mcq_text(text: str, language: str | None = None, *, profile: str | LanguageProfile | None = None) -> str:
    """An MCQ text field normalised by ``profile`` (the task's: :func:`nlue.text.profiles.profile_of`),
    or, when only the exam's ``language`` (ISO 639-1) is known, by the profile that language falls back
    to; then a blank is written one way (module docstring)."""
    chosen = get_profile(profile if profile is not None else fallback_profile_name(language))
    text = chosen.normalize(text)
    return _BLANK_RUN.sub(_blank, text) if ("_" in text or "." in text or "…" in text) else text


def _blank(match: re.Match[str]) -> str:
    """A run of underscores, dots and ellipses is a blank when it weighs 2 (``_`` and ``…`` 1, ``.`` ½)."""
    run = match.group()
    weight = run.count("_") + run.count("…") + run.count(".") / 2
    return BLANK if weight >= 2 else run


class ExamDeclarations(Protocol):
    """What a multiple-choice task declares beyond a TaskSpec (see :class:`nlue.registry.spec.ExamSpec`)."""

    name: str
    language: str
    subjects: Mapping[str, tuple[str, ...]]  # domain -> its subdomains
    levels: tuple[str, ...]
    level_aliases: Mapping[str, str]
    subject_aliases: Mapping[str, str]
    grade_levels: Mapping[int, str]


def exam_of(task: Any) -> ExamDeclarations:
    """The task's exam declarations; a ValueError for a task that does not declare them."""
    missing = [a for a in ("language", "subjects", "levels", "level_aliases", "subject_aliases", "grade_levels")
               if not hasattr(task, a)]  # fmt: skip
    if missing:
        raise NlueError(
            f"task {task.name!r} is a multiple_choice task but does not declare {', '.join(missing)}; "
            "declare its `exam:` vocabularies in its task file (nlue.registry.spec.ExamSpec)"
        )
    return task


def vocab_key(text: str) -> str:
    """How names of subjects and levels are compared: case, spacing, underscores and Urdu look-alikes ignored."""
    return " ".join(normalize_urdu(text).casefold().replace("_", " ").split())


_GRADE = re.compile(r"^(?:grade|class|कक्षा|جماعت|کلاس)?\s*(\d{1,2})\s*(?:st|nd|rd|th)?$")


def canonical_subdomain(exam: ExamDeclarations, raw: Any) -> str | None:
    """The vocabulary's subdomain for a raw subject name or alias (case and spacing ignored), or None."""
    key = vocab_key(str(raw))
    names = {vocab_key(s): s for subs in exam.subjects.values() for s in subs}
    names.update({vocab_key(alias): target for alias, target in exam.subject_aliases.items()})
    return names.get(key)


def canonical_level(exam: ExamDeclarations, raw: Any) -> str | None:
    """The vocabulary's level for a raw level, alias or grade number ("Grade 9", "कक्षा १०"), or None."""
    key = vocab_key(str(raw))
    names = {vocab_key(level): level for level in exam.levels}
    names.update({vocab_key(alias): target for alias, target in exam.level_aliases.items()})
    if key in names:
        return names[key]
    grade = _GRADE.match(key)
    return exam.grade_levels.get(int(grade.group(1))) if grade else None


def domain_of(exam: ExamDeclarations, subdomain: str) -> str:
    return next(domain for domain, subs in exam.subjects.items() if subdomain in subs)


def exam_prompt(labels: Mapping[str, str], values: Mapping[str, str]) -> str:
    """One item as the model reads it (facts §6): subject, level, question, the options; no answer lines.

    ``labels`` are a prompt language's ``subject``, ``level`` and ``question`` labels; ``values``
    the item's fields (or Jinja placeholders, for the log-likelihood template).
    """
    lines = [
        f"{labels['subject']}: {values['domain']} – {values['subdomain']}",  # an EN DASH, as the paper prints it
        f"{labels['level']}: {values['level']}",
        f"{labels['question']}: {values['question']}",
    ]
    return "\n".join([*lines, *(f"{letter}) {values[letter]}" for letter in LETTERS)])


# The dataset card's words for exam configs (the kind adds the measured counts).
POOL_RULE = (
    "The `demo` split is the demonstration pool: k-shot prompts draw their examples from it (seed 42) and "
    "never from `test`; it must share no item with `test` (`nlue mcq split` draws it that way)."
)
SAMPLE_STATEMENT = (
    "**This config is sample data.** Every question, option and key was written by the nlue developers "
    "(our own questions, answers checked by hand) to try the tools end to end; it is not an official exam "
    "and holds no item of UrduMMLU or of any exam paper."
)
SAMPLE_BANNER = (
    "> **This is the nlue SAMPLE data, not an exam release.** Every question was written by the nlue "
    "developers to try the tools end to end (a few dozen items per config). Scores on it say nothing about a "
    "model; build a real exam from released items (UrduMMLU: `MBZUAI/UrduMMLU`) with "
    "`nlue build --source <folder> --configs mcq_ur`."
)
BLANK_NOTE = "A fill-in blank (a run of 2+ underscores or ellipses, or 4+ dots) is written `____`."
CARD_TEXT = CardText(
    intro=(
        "Native-language multiple-choice exams in the protocol of UrduMMLU (Tabassum et al., 2026): each item "
        "is a question with four options A-D, one correct key and its option text, and the subject "
        "(domain - subdomain) and school level it comes from. A model answers in two lines, `Answer key:` and "
        "`Answer text:`, which a strict parser reads; k-shot demonstrations come from the `demo` split."
    ),
    scoring=(
        "Score with `nlue llm mcq` (generation and strict parsing) or with the `nlue` evaluate module on key ids "
        "(0-3, and -1 for an output that does not parse). `accuracy_all_items`, the primary metric, counts an "
        "invalid output as wrong (an nlue convention); `accuracy_parseable` is accuracy over the parseable "
        "outputs only, which is what the UrduMMLU paper's numbers appear to be (it does not state its "
        "denominator); `invalid_rate` is the paper's Inv%. Compare `accuracy_parseable` and `invalid_rate` "
        "with the paper's Table 4, never `accuracy_all_items`."
    ),
    limitations=(
        "The paper's figures are on UrduMMLU's 26,431 items, not on this data. Exam questions are "
        "time- and curriculum-bound (current affairs, syllabus changes); options are shown in stored order, "
        "so a model's preference for a letter is not controlled for."
    ),
    languages=(),
    sample_banner=SAMPLE_BANNER,
)


# What `nlue tasks new --kind multiple_choice` starts a task file with (our own example task).
STARTER = StarterFile(
    title="A school exam",
    description="Answer an exam question by choosing one of four options (A-D).",
    body="""\
category: multiple-choice exam
label_field: correct_key         # a letter A-D; the options are the columns A, B, C, D
# inputs (question, A-D) and labels (A-D) are fixed by the kind
exam:                            # the vocabularies each item's subject and level are checked against
  subjects:                      # domain -> its subdomains
    STEM: [mathematics, general science]
    Humanities: [language]
  levels: [Grade 9, Grade 10]
  grade_levels: {9: Grade 9, 10: Grade 10}   # grade numbers read as levels
  # level_aliases: {SEE: Grade 10}
  # subject_aliases: {maths: mathematics}
prompts:                         # the instruction is the system prompt; it ends with the two answer lines
  en:
    instruction: |-
      Choose the one correct option. Reply in exactly these two lines and nothing else:
      Answer key: <A, B, C or D>
      Answer text: <the chosen option's text, copied exactly>
    field_labels: {subject: Subject, level: Level, question: Question}
    answer_cue: "Answer key:"      # fixed, as are the letters: the strict parser reads them
    label_words: [A, B, C, D]      # log-likelihood scores these after the cue
    # wordings:                    # other wordings, asked by --wordings all; keep the two answer lines in each
    # - name: plain
    #   instruction: |-
    #     Answer the question with its one right option, in these two lines only:
    #     Answer key: <A, B, C or D>
    #     Answer text: <the chosen option's text, copied exactly>
""",
    data_columns="question: q, correct_key: answer",
    data_labels="",
)
