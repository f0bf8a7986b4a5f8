"""Similarity scores by generation: the model writes a number, a strict parser reads it (STS-B, ``--mode generate``).

The regression counterpart of :mod:`nlue.evals.llm.label_generation`, so that STS-B is scored like
every other NLUE task when a model gives no log-likelihoods or ``--mode generate`` is asked.
Our protocol; the NLUE paper prompts no language model.

**Prompt.** The task's prompt (instruction, the two sentences, answer cue; our own words in
English and Nepali, declared in its task file) with one line before the cue that asks for one
number in the task's score range (the task file's ``number_line``, or the default of
:data:`nlue.registry.label_prompts.NUMBER_LINES`),
its digits in the prompt's script. A k-shot demonstration ends with its gold score written the
same way (:func:`number_text`). The gold score never enters an item's own prompt.

**Strict parse** (the numbers): after thinking traces and surrounding whitespace are removed, and
one final full stop, danda or exclamation mark, the answer must be one number and nothing else,
in ASCII (``0-9``) or Devanagari (``०-९``) digits with at most one decimal point (``3``, ``2.5``,
``४.२``), inside the score range (0-5 for STS-B). Anything else is invalid, in one of
:data:`INVALID_CATEGORIES`. **Lenient parse** (a diagnostic, never in the numbers): the one number
inside the range found in the answer's text, when there is exactly one.

**Scores** (:func:`number_scores`): Pearson, Spearman, their mean (the task's primary, an nlue
convention) and R² over the items whose answer parsed, with 95% bootstrap intervals over those
items. An invalid answer is left out of them: it is not read as 0 or as any other score, so a
model is scored on the items it answered, and the correlations are read with ``invalid_rate``
and ``parseable_items``, which the results file keeps beside them (:data:`INVALID_POLICY`).
Fewer than two parsed answers, or parsed answers that are all the same number, leave the
correlations undefined (NaN), with the reason in ``details.undefined_metrics``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlue.errors import NlueError
from nlue.evals.llm.label_generation import API_ERROR, EMPTY, FINAL_MARK, prompt_hash
from nlue.evals.mcq.parse import strip_thinking
from nlue.lm.base import Generation
from nlue.registry.label_prompts import DIGITS, NUMBER_LINES

NOT_A_NUMBER, OUT_OF_RANGE = "not_a_number", "out_of_range"
INVALID_CATEGORIES: Mapping[str, str] = {
    API_ERROR: "the request failed after its retries",
    EMPTY: "nothing but whitespace or a thinking trace",
    NOT_A_NUMBER: "anything but one number alone (the lenient parse may find one inside it)",
    OUT_OF_RANGE: "one number, outside the score range",
}
INVALID_POLICY = (
    "pearson, spearman, pearson_spearman_mean and r2 are computed over the parseable items only "
    "(parseable_items of items); an invalid answer is left out, not read as any score, so read them with "
    "invalid_rate: a model that answers few items validly is scored on those few"
)
_ASCII, _DEVANAGARI = DIGITS["en"], DIGITS["ne"]
_NUMBER = rf"[0-9]+(?:\.[0-9]+)?|[{_DEVANAGARI}]+(?:\.[{_DEVANAGARI}]+)?"
_STRICT = re.compile(rf"[+-]?(?:{_NUMBER})")
_INSIDE = re.compile(rf"(?<![\w.+-])(?:{_NUMBER})(?![\w]|\.\w)")  # unsigned: "-1" is no score
_TO_ASCII = str.maketrans(_DEVANAGARI, _ASCII)


def number_text(value: float, language: str) -> str:
    """``value`` as a prompt in ``language`` writes it: ``3``, ``2.5``, ``३.२`` (two decimals at most)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text.translate(str.maketrans(_ASCII, DIGITS.get(language, _ASCII)))


def with_number_line(prompt: str, score_range: tuple[float, float], language: str, line: str | None = None) -> str:
    """``prompt`` (ending with its answer cue) with the line asking for one number put before the cue.

    ``line`` is the task's template (:meth:`nlue.registry.spec.TaskSpec.number_line`); without one, the
    default of ``language``.
    """
    if line is None and language not in NUMBER_LINES:
        raise NlueError(f"no number line for prompt language {language!r}; expected one of {', '.join(NUMBER_LINES)}")
    low, high = score_range
    example = number_text((low + high) / 2, language)
    line = (line or NUMBER_LINES[language]).format(
        low=number_text(low, language), high=number_text(high, language), example=example
    )
    body, _, cue = prompt.rpartition("\n")
    return f"{body}\n{line}\n{cue}" if body else f"{line}\n{cue}"


@dataclass(frozen=True)
class NumberParse:
    value: float | None  # the score read, None when the answer is invalid
    category: str | None = None  # why it is invalid (INVALID_CATEGORIES), None when valid

    @property
    def valid(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.value, "category": self.category}


def _value(text: str) -> float:
    return float(text.translate(_TO_ASCII))


def parse_number(
    output: str | None, score_range: tuple[float, float], *, lenient: bool = False, error: str | None = None
) -> NumberParse:
    """The score an answer gives, strictly (the numbers) or leniently (a diagnostic); see the module docstring."""
    if error is not None:
        return NumberParse(None, API_ERROR)
    text = strip_thinking(output or "").strip()
    if not text:
        return NumberParse(None, EMPTY)
    low, high = score_range
    if lenient:
        inside = {value for value in map(_value, _INSIDE.findall(text)) if low <= value <= high}
        if len(inside) == 1:
            return NumberParse(inside.pop())
        return NumberParse(None, NOT_A_NUMBER)
    answer = FINAL_MARK.sub("", text).strip()
    if not _STRICT.fullmatch(answer):
        return NumberParse(None, NOT_A_NUMBER)
    value = _value(answer)
    if not (math.isfinite(value) and low <= value <= high):
        return NumberParse(None, OUT_OF_RANGE)
    return NumberParse(value)


def number_answer_rows(
    ids: Sequence[Any],
    prompts: Sequence[str],
    outputs: Sequence[Generation],
    score_range: tuple[float, float],
    references: Sequence[float],
) -> tuple[list[NumberParse], list[NumberParse], list[dict[str, Any]]]:
    """Strict and lenient parses of each answer, and the raw-output rows (the gold score written last)."""
    strict, lenient, rows = [], [], []
    for item_id, prompt, output, gold in zip(ids, prompts, outputs, references, strict=True):
        error = (output.error or "request failed") if output.finish_reason == "error" else None
        first = parse_number(output.text, score_range, error=error)
        second = parse_number(output.text, score_range, lenient=True, error=error)
        strict.append(first)
        lenient.append(second)
        rows.append({
            "id": item_id, "prompt_sha256": prompt_hash(prompt), "output": output.text,
            "finish_reason": output.finish_reason, "error": output.error, "completion_tokens": output.completion_tokens,
            "strict": first.to_dict(), "lenient": second.to_dict(), "verdict": "scored" if first.valid else "invalid",
            "gold_score": float(gold),
        })  # fmt: skip
    return strict, lenient, rows


def _correlations(
    task: str, pairs: Sequence[tuple[float, float]], bootstrap_resamples: int | None, seed: int | None
) -> tuple[dict[str, float], dict[str, str]]:
    """The regression metrics of the parsed (prediction, gold) pairs, and why any of them is undefined."""
    from nlue.scores import score_task
    from nlue.scoring.regression import REGRESSION_METRICS

    if len(pairs) < 2:
        reason = f"{len(pairs)} parseable answer(s): a correlation needs at least 2"
        return dict.fromkeys(REGRESSION_METRICS, math.nan), dict.fromkeys(REGRESSION_METRICS, reason)
    scores = score_task(task, [p for p, _ in pairs], [g for _, g in pairs], bootstrap_resamples=bootstrap_resamples,
                        seed=seed)  # fmt: skip
    metrics = {k: float(v) for k, v in scores.items() if isinstance(v, float | int)}
    undefined = {}
    if len({p for p, _ in pairs}) == 1:
        reason = "every parseable answer is the same number: a correlation with a constant is undefined"
        undefined = {m: reason for m in ("pearson", "spearman", "pearson_spearman_mean")}
    return metrics, undefined


def number_scores(
    task: str,
    parses: Sequence[NumberParse],
    references: Sequence[float],
    bootstrap_resamples: int | None,
    seed: int | None,
) -> tuple[dict[str, float], dict[str, str]]:
    """(metrics, undefined metrics with their reasons): correlations over the parsed answers, invalid counts."""
    if not parses:
        raise NlueError("no answers to score")
    pairs = [(p.value, float(g)) for p, g in zip(parses, references, strict=True) if p.value is not None]
    metrics, undefined = _correlations(task, pairs, bootstrap_resamples, seed)
    counts = dict.fromkeys(INVALID_CATEGORIES, 0)
    for parse in parses:
        if parse.category is not None:
            counts[parse.category] += 1
    metrics.update({f"invalid_count_{name}": float(n) for name, n in counts.items()})
    metrics["invalid_rate"] = 1.0 - len(pairs) / len(parses)
    metrics["parseable_items"] = float(len(pairs))
    return metrics, undefined


def lenient_number_summary(lenient: Sequence[NumberParse], references: Sequence[float]) -> dict[str, float | None]:
    """The lenient parse's invalid rate and Pearson over what it read: a diagnostic, kept out of the numbers."""
    import numpy as np

    from nlue.scoring.regression import pearson_rows

    pairs = np.asarray([(p.value, float(g)) for p, g in zip(lenient, references, strict=True) if p.value is not None])
    pearson = float(pearson_rows(pairs[None, :, 0], pairs[None, :, 1])[0]) if len(pairs) >= 2 else math.nan
    # Undefined (fewer than two numbers read, or one side constant): null, as results files hold it (strict JSON).
    return {"invalid_rate": 1.0 - len(pairs) / len(lenient), "pearson": pearson if math.isfinite(pearson) else None}
