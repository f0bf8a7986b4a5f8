"""The commented starting file `nlue tasks new --kind K` prints: valid as it stands, for every kind.

Each template declares a small working task of its kind, says in comments what every key
is for, and shows the optional keys commented out (data sources, licence, citation), so
that a user edits rather than writes from nothing. ``tests/test_task_file.py`` loads each
one for every kind.
"""

from __future__ import annotations

import re
from string import Template

from nlue.errors import NlueError
from nlue.registry.kinds import KINDS
from nlue.registry.profiles import default_profile

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")

_HEAD = """\
# An nlue task file: one task, declared for every nlue command.
# Check it with `nlue tasks validate $file_hint`; every key: docs/reference/task-file.md.
# name: the dataset config, lower-case letters, digits and _.
name: $name
version: 1.0.0
title: $title
description: $description
# languages: ISO 639 codes of the text, the first the main one. The profile (text rules: nepali, urdu or
# plain) follows the first language unless given: $profile for $language.
languages: [$language]
# profile: $profile
kind: $kind
"""

_TAIL = """\
# license: cc-by-4.0             # the data's licence (a Hub licence id)
# citation: |                    # BibTeX of the data's paper or release
#   @misc{my_task, title = {...}}
# sizes: {train: 1000, test: 200, total: 1200}   # the published sizes, for the card
# domains: [news]
# sources: [where the items come from]
"""

_DATA = """\
# data:                          # where each split comes from; paths are relative to this file
#   train: {path: train.csv, columns: {$column_example}$label_example}
#   test: {hub: owner/dataset, config: default, split: test, revision: main}
"""

_BODIES = {
    "classification": """\
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
""",
    "regression": """\
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
""",
    "mask_fill": """\
category: masked words
mask: "[MASK]"                   # the placeholder each sentence holds once
categories:                      # theme -> its categories (numbered from 1 across themes)
  Daily life: [Food, Home]
  Nature: [Animals, Weather]
# inputs are fixed by the kind: sentence, category, theme, answers (a list of accepted words)
""",
    "multiple_choice": """\
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
""",
    "idiomaticity": """\
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
""",
}
_TITLES = {
    "classification": ("A three-class sentiment task", "Decide whether a short text is negative, neutral or positive."),
    "regression": ("A similarity score", "Score how close in meaning two sentences are, from 0 to 5."),
    "mask_fill": ("Fill the masked word", "Predict the word hidden behind the mask in a sentence."),
    "multiple_choice": ("A school exam", "Answer an exam question by choosing one of four options (A-D)."),
    "idiomaticity": ("Idioms in context", "Decide whether an idiom is used in its idiomatic or its literal sense."),
}
_COLUMNS = {
    "classification": ("text: review", ', labels: {"-1": negative, "0": neutral, "1": positive}'),
    "regression": ("sentence1: first, sentence2: second", ""),
    "mask_fill": ("sentence: masked_sentence", ""),
    "multiple_choice": ("question: q, correct_key: answer", ""),
    "idiomaticity": ("S2: sentence", ", labels: {I: idiomatic, L: literal}"),
}


def task_file_template(kind: str, name: str | None = None, language: str = "en") -> str:
    """The commented starting file for a task of ``kind`` (named ``name``, text in ``language``)."""
    if kind not in KINDS:
        raise NlueError(f"unknown task kind {kind!r}; expected one of: {', '.join(KINDS)}")
    name = name or f"my_{kind}"
    if not _NAME.match(name):
        raise NlueError(f"--name {name!r}: expected lower-case letters, digits and _, starting with a letter")
    if not _LANGUAGE.match(language):
        raise NlueError(f"--language {language!r}: expected an ISO 639-1 or 639-3 code such as ne, ur or si")
    column, labels = _COLUMNS[kind]
    if kind == "idiomaticity":  # the kind reads labels I/L itself; a label map is not for it
        labels = ""
    title, description = _TITLES[kind]
    values = {"name": name, "title": title, "description": description, "language": language, "kind": kind,
              "profile": default_profile([language]), "file_hint": f"{name}.yaml", "column_example": column,
              "label_example": labels}  # fmt: skip
    text = _HEAD + _BODIES[kind] + _DATA + _TAIL
    return Template(text).substitute(values)
