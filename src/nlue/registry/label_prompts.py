"""How a language model is asked to *write* one label (classification by generation: NLUE, neDIOM), or one
number (a similarity score by generation: STS-B): the lines a task file's prompt declares, and their defaults.

A log-likelihood prompt ends with an answer cue and scores each label word after it; a chat
model or API that cannot give log-likelihoods is instead told which words it may answer with.
That line is put just before the answer cue: a prompt's ``answer_line`` (:class:`AnswerLine`;
``{words}`` is the task's label words in the prompt's language, in label order, joined by
``separator``). A task that scores a number gets its ``number_line`` instead: ``{low}`` and
``{high}`` are its score range and ``{example}`` a number between them, written in the prompt
language's digits (:data:`DIGITS`).

Every shipped task writes its lines in its task file. A user's prompt that writes none gets the
default of its language, :data:`ANSWER_LINES` and :data:`NUMBER_LINES`: read-only views of
``task_file/prompt_defaults.yaml`` (our own words, English and Nepali).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import yaml

DEFAULTS_PATH = Path(__file__).resolve().parent / "task_file" / "prompt_defaults.yaml"
DEFAULT_SEPARATOR = ", "
# The placeholders each line's template may hold (str.format fields), the required ones first.
ANSWER_FIELDS: tuple[str, ...] = ("words",)
NUMBER_FIELDS: tuple[str, ...] = ("low", "high", "example")
NUMBER_FIELDS_REQUIRED: tuple[str, ...] = ("low", "high")


@dataclass(frozen=True)
class AnswerLine:
    template: str
    separator: str

    def render(self, words: tuple[str, ...] | list[str]) -> str:
        return self.template.format(words=self.separator.join(words))


_DEFAULTS = yaml.safe_load(DEFAULTS_PATH.read_text(encoding="utf-8"))

ANSWER_LINES: MappingProxyType[str, AnswerLine] = MappingProxyType(
    {
        language: AnswerLine(line["template"], line.get("separator", DEFAULT_SEPARATOR))
        for language, line in _DEFAULTS["answer_line"].items()
    }
)
"""Prompt language -> the answer line a prompt that declares none gets."""

NUMBER_LINES: MappingProxyType[str, str] = MappingProxyType(
    {language: line["template"] for language, line in _DEFAULTS["number_line"].items()}
)
"""Prompt language -> the number line a prompt that declares none gets."""

# The digits 0-9 as each prompt language writes them: the script the number parser reads back
# (nlue.evals.llm.number_generation), not a prompt's wording; numbers in a prompt (the range, a
# demonstration's score) are written so, and a number is read back in either script.
DIGITS: MappingProxyType[str, str] = MappingProxyType({"en": "0123456789", "ne": "०१२३४५६७८९"})
