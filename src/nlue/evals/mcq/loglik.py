"""Multiple-choice exams scored by log-likelihood (``nlue llm mcq --mode loglik``), the way lm-eval scores MMLU.

No text is generated and nothing is parsed: each option is a continuation of the prompt and
the model's choice is the option with the highest summed log-probability. Two ways to put
the options (``choices``):

* ``"letters"`` (the default, lm-evaluation-harness's ``mmlu`` way and what ``nlue export
  lm-eval`` writes): the prompt ends with ``Answer key:`` and the continuations are
  ``" A"`` ... ``" D"``. Zero-shot, the prompt is exactly the kind's lm-eval template
  (:meth:`~nlue.registry.kinds.multiple_choice.MultipleChoiceKind.llm_template`), so our
  per-item log-likelihoods and accuracy equal lm-eval's ``hf`` backend on the exported YAML
  (tests/test_mcq_run.py runs both). All four letters are one character and one byte, so
  ``acc_norm`` equals ``acc`` here.
* ``"texts"`` (ours): the prompt ends with ``Answer text:`` and the continuations are
  ``" " + option text``. Options differ in length, so the two normalisations matter:
  ``acc_norm_chars`` divides each option's log-likelihood by its length in characters
  (lm-eval's ``acc_norm``), ``acc_norm_bytes`` by its UTF-8 length (a Devanagari or Urdu
  letter is 2-3 bytes, a Latin one 1, so the two can rank options differently).

k-shot (ours; lm-eval draws its own demonstrations, so only zero-shot is compared with it):
the instruction once, then k demonstrations drawn per item with seed 42 exactly as the
generation prompts draw them (:func:`nlue.evals.mcq.prompts.draw_demonstrations`), each its
item lines followed by its answer line, then the item. Plain text always: lm-eval applies
no chat template to log-likelihood tasks by default, and neither do we.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.evals.mcq.parse import ParseResult
from nlue.evals.mcq.prompts import SEED, draw_demonstrations, item_body, system_prompt
from nlue.lm.base import LanguageModel, LoglikelihoodRequest
from nlue.registry.kinds.mcq_text import KEY_LABEL, LETTERS, TEXT_LABEL
from nlue.registry.kinds.multiple_choice import item_options, key_letter
from nlue.registry.spec import TaskSpec

CHOICE_MODES: tuple[str, ...] = ("letters", "texts")
TARGET_DELIMITER = " "  # between the prompt and each option, as lm-eval's target_delimiter
NORMALISATIONS: tuple[str, ...] = ("chars", "bytes")


def _check_mode(choices: str) -> None:
    if choices not in CHOICE_MODES:
        raise NlueError(f"choices must be one of {', '.join(CHOICE_MODES)}, got {choices!r}")


def option_strings(item: Mapping[str, Any], choices: str) -> tuple[str, ...]:
    """What is scored for each of A-D (without the delimiter): the letters, or the options' texts."""
    _check_mode(choices)
    if choices == "letters":
        return LETTERS
    options = item_options(item)
    return tuple(options[letter] for letter in LETTERS)


def _answer_label(choices: str) -> str:
    return KEY_LABEL if choices == "letters" else TEXT_LABEL


def _solved(demo: Mapping[str, Any], language: str, choices: str, task: TaskSpec | None = None) -> str:
    """A demonstration: its lines, then its answer (the pool's key, never the scored item's)."""
    letter = key_letter(demo["correct_key"])
    answer = letter if choices == "letters" else item_options(demo)[letter]
    return f"{item_body(demo, language, task)}\n{_answer_label(choices)}{TARGET_DELIMITER}{answer}"


def loglik_context(
    item: Mapping[str, Any],
    language: str,
    shots: int = 0,
    pool: Sequence[Mapping[str, Any]] = (),
    choices: str = "letters",
    seed: int = SEED,
    task: TaskSpec | None = None,
) -> str:
    """The text every option of ``item`` continues (see the module docstring), in ``task``'s prompt words
    (default: the shipped exams')."""
    _check_mode(choices)
    demos = [_solved(demo, language, choices, task) for demo in draw_demonstrations(item, pool, shots, seed)]
    blocks = [system_prompt(language, task), *demos, f"{item_body(item, language, task)}\n{_answer_label(choices)}"]
    return "\n\n".join(blocks)


@dataclass(frozen=True)
class OptionScores:
    """Every item's log-likelihood of each option, and the choices they make."""

    options: tuple[tuple[str, ...], ...]  # per item, the scored strings of A-D
    loglikelihoods: np.ndarray  # (items, 4)

    def choice(self, normalisation: str | None = None) -> np.ndarray:
        """Index 0-3 of the chosen option: by raw log-likelihood, or per character / per byte."""
        if normalisation is None:
            return self.loglikelihoods.argmax(axis=1)
        if normalisation not in NORMALISATIONS:
            raise NlueError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, got {normalisation!r}")
        sizes = np.array(
            [[len(o) if normalisation == "chars" else len(o.encode("utf-8")) for o in row] for row in self.options],
            dtype=np.float64,
        )
        return (self.loglikelihoods / sizes).argmax(axis=1)

    def parses(self, items: Sequence[Mapping[str, Any]]) -> list[ParseResult]:
        """The raw choice of each item as a (always valid) parse, so that the generation scoring applies."""
        return [
            ParseResult(LETTERS[int(i)], item_options(item)[LETTERS[int(i)]])
            for item, i in zip(items, self.choice(), strict=True)
        ]

    def normalised_accuracy(self, references: Sequence[int]) -> dict[str, float]:
        """``acc_norm_chars`` and ``acc_norm_bytes`` against the gold key ids."""
        gold = np.asarray(references, dtype=np.int64)
        return {f"acc_norm_{unit}": float((self.choice(unit) == gold).mean()) for unit in NORMALISATIONS}


def score_options(
    model: LanguageModel,
    items: Sequence[Mapping[str, Any]],
    language: str,
    shots: int = 0,
    pool: Sequence[Mapping[str, Any]] = (),
    choices: str = "letters",
    seed: int = SEED,
    task: TaskSpec | None = None,
) -> tuple[list[str], OptionScores]:
    """Ask ``model`` for each option's log-likelihood after each item's context; (contexts, scores)."""
    contexts = [loglik_context(item, language, shots, pool, choices, seed, task) for item in items]
    options = [option_strings(item, choices) for item in items]
    requests = [
        LoglikelihoodRequest(context, TARGET_DELIMITER + option)
        for context, row in zip(contexts, options, strict=True)
        for option in row
    ]
    answers = model.loglikelihood(requests)
    values = np.array([a.logprob for a in answers], dtype=np.float64).reshape(len(items), len(LETTERS))
    return contexts, OptionScores(tuple(options), values)
