"""Classification by generation: the model writes a label word, a strict parser reads it, a lenient one beside it.

This is ``--mode generate`` for the NLUE classification tasks and neDIOM, so that a model that
gives no log-likelihoods (a chat API, ``transformers serve``) runs every benchmark. Our protocol;
neither paper generates labels.

**Prompt.** The log-likelihood prompt of the task (instruction, fields, answer cue), with one line
added just before the cue that lists the label words allowed, in the prompt's language (the task
file's ``answer_line``, or the default of :data:`nlue.registry.label_prompts.ANSWER_LINES`). Chat models get it as one user message;
base models get it as plain text, continue after the cue, and stop at the end of the line. The
gold label never enters a prompt.

**Strict parse** (the numbers): after thinking traces (``<think>...</think>``) and surrounding
whitespace are removed, and one final full stop, danda or exclamation mark, the answer must be
exactly one of the label words (Unicode NFC, case-folded). Anything else is invalid, in one of
:data:`INVALID_CATEGORIES`. **Lenient parse** (reported apart, never in the numbers): the label
word found among the answer's words when exactly one label is there (a longer label such as
``not duplicate`` takes its words from a shorter one inside it).

**Scores** (:func:`label_scores`): ``macro_f1`` over all items (the task's primary; an invalid
answer is wrong for its gold class and counts for no other), ``accuracy_all_items``,
``accuracy_parseable`` and ``macro_f1_parseable`` over the items whose answer parsed,
``invalid_rate``, each with a 95% bootstrap interval, and invalid counts by category.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlue.errors import NlueError, ServiceError
from nlue.evals.mcq.parse import strip_thinking
from nlue.lm.base import ChatMessage, Generation, GenerationRequest
from nlue.registry.label_prompts import ANSWER_LINES, AnswerLine

DEFAULT_LABEL_TOKENS = 48  # a label word, even at three tokens per Devanagari letter; --max-new-tokens for more
PLAIN_STOP = ("\n",)  # a base model writes the word on the cue's line; the next line starts another item
API_ERROR, EMPTY, WITH_OTHER_TEXT, SEVERAL, NO_LABEL = (
    "api_error", "empty", "label_with_other_text", "several_labels", "no_label",
)  # fmt: skip
INVALID_CATEGORIES: Mapping[str, str] = {
    API_ERROR: "the request failed after its retries",
    EMPTY: "nothing but whitespace or a thinking trace",
    WITH_OTHER_TEXT: "one label word with other text around it (the lenient parse reads it)",
    SEVERAL: "two or more different label words",
    NO_LABEL: "text without any label word",
}
METRICS: tuple[str, ...] = (
    "macro_f1", "accuracy_all_items", "accuracy_parseable", "macro_f1_parseable", "invalid_rate",
)  # fmt: skip
FINAL_MARK = re.compile(r"[.।!]\s*$")
_WORD = re.compile(r"[^\s.,;:!?।॥\"'“”‘’()\[\]{}*_`#>|/\\=+~-]+")


def with_answer_line(prompt: str, words: Sequence[str], language: str, line: AnswerLine | None = None) -> str:
    """``prompt`` (ending with its answer cue) with the line that lists the allowed words put before the cue.

    ``line`` is the task's (:meth:`nlue.registry.spec.TaskSpec.answer_line`, as its task file declares it);
    without one, the default line of ``language``.
    """
    if line is None and language not in ANSWER_LINES:
        raise NlueError(f"no answer line for prompt language {language!r}; expected one of {', '.join(ANSWER_LINES)}")
    body, _, cue = prompt.rpartition("\n")
    text = (line or ANSWER_LINES[language]).render(list(words))
    return f"{body}\n{text}\n{cue}" if body else f"{text}\n{cue}"


def label_request(prompt: str, chat: bool, max_new_tokens: int) -> GenerationRequest:
    """One generation request: the prompt as one user message (chat) or as text to continue (plain)."""
    if chat:
        return GenerationRequest(messages=(ChatMessage("user", prompt),), max_new_tokens=max_new_tokens)
    return GenerationRequest(prompt=prompt, stop=PLAIN_STOP, max_new_tokens=max_new_tokens)


def require_answers(outputs: Sequence[Generation], what: str) -> None:
    """Stop a run whose every request failed: there is nothing to score, and it is not a score of zero."""
    if outputs and all(output.finish_reason == "error" for output in outputs):
        raise ServiceError(
            f"every one of the {len(outputs)} requests for {what} failed (first: {outputs[0].error}); answers that "
            "came back are journalled, so the same command run again asks only for the rest"
        )


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LabelParse:
    label: int | None  # the label id, None when the answer is invalid
    category: str | None = None  # why it is invalid (INVALID_CATEGORIES), None when valid

    @property
    def valid(self) -> bool:
        return self.label is not None

    def to_dict(self, words: Sequence[str]) -> dict[str, Any]:
        word = None if self.label is None else words[self.label]
        return {"label": word, "label_id": self.label, "category": self.category}


def _norm(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def _found_labels(text: str, words: Sequence[str]) -> list[int]:
    """Distinct labels whose words occur in ``text`` as whole words; longer labels claim their words first."""
    tokens = _WORD.findall(_norm(text))
    claimed = [False] * len(tokens)
    found: list[int] = []
    for label in sorted(range(len(words)), key=lambda i: -len(_WORD.findall(_norm(words[i])))):
        target = _WORD.findall(_norm(words[label]))
        for start in range(len(tokens) - len(target) + 1):
            span = range(start, start + len(target))
            if target and tokens[start : start + len(target)] == target and not any(claimed[i] for i in span):
                for i in span:
                    claimed[i] = True
                if label not in found:
                    found.append(label)
    return found


def parse_label(
    output: str | None, words: Sequence[str], *, lenient: bool = False, error: str | None = None
) -> LabelParse:
    """The label an answer names, strictly (the numbers) or leniently (a diagnostic); see the module docstring."""
    if error is not None:
        return LabelParse(None, API_ERROR)
    text = strip_thinking(output or "").strip()
    if not text:
        return LabelParse(None, EMPTY)
    if not lenient:
        answer = _norm(FINAL_MARK.sub("", text).strip())
        for label, word in enumerate(words):
            if answer == _norm(word):
                return LabelParse(label)
    found = _found_labels(text, words)
    if len(found) == 1:
        return LabelParse(found[0]) if lenient else LabelParse(None, WITH_OTHER_TEXT)
    return LabelParse(None, SEVERAL if found else NO_LABEL)


# ------------------------------------------------------------------ scores
def _statistic(num_labels: int) -> Any:
    """Row-wise scores of label codes, ``num_labels`` standing for an invalid answer (see the module docstring)."""

    def statistic(outputs: np.ndarray, references: np.ndarray | None) -> dict[str, np.ndarray]:
        assert references is not None  # generation scores always carry the gold labels
        outputs, references = np.broadcast_arrays(outputs, references)
        rows, width = outputs.shape[0], num_labels + 1
        cells = (np.arange(rows)[:, None] * width + references) * width + outputs
        confusion = np.bincount(cells.ravel(), minlength=rows * width * width).reshape(rows, width, width)
        confusion = confusion[:, :num_labels, :]  # references are real labels; predictions may be invalid
        hits = np.diagonal(confusion[:, :, :num_labels], axis1=1, axis2=2)
        predicted = confusion[:, :, :num_labels].sum(axis=1)  # an invalid answer is no class's prediction

        def macro(gold_counts: np.ndarray) -> np.ndarray:
            denominator = predicted + gold_counts
            f1 = np.divide(2.0 * hits, denominator, out=np.zeros(hits.shape), where=denominator > 0)
            return f1.mean(axis=1)

        valid = outputs != num_labels
        parseable = valid.sum(axis=1)
        correct = (outputs == references).sum(axis=1)
        rate = np.full(rows, np.nan)
        np.divide(correct, parseable, out=rate, where=parseable > 0)
        return {
            "macro_f1": macro(confusion.sum(axis=2)),  # gold counts include the items answered invalidly
            "accuracy_all_items": correct / outputs.shape[1],
            "accuracy_parseable": rate,
            "macro_f1_parseable": np.where(parseable > 0, macro(confusion[:, :, :num_labels].sum(axis=2)), np.nan),
            "invalid_rate": 1.0 - valid.mean(axis=1),
        }

    return statistic


def generation_problem(labels: Sequence[int | None], references: Sequence[int], num_labels: int) -> Any:
    """Label ids (None: an invalid answer) against gold ids, as a scoring problem (intervals, paired tests)."""
    from nlue.scoring import ScoringProblem

    outputs = np.asarray([num_labels if label is None else label for label in labels], dtype=np.int64)
    gold = np.asarray(references, dtype=np.int64)
    if gold.shape != outputs.shape or gold.min() < 0 or gold.max() >= num_labels:
        raise NlueError(f"gold labels must be {len(labels)} ids from 0 to {num_labels - 1}")
    return ScoringProblem(outputs, gold, _statistic(num_labels), METRICS, value_range=(0.0, 1.0))


def label_scores(
    parses: Sequence[LabelParse],
    references: Sequence[int],
    num_labels: int,
    bootstrap_resamples: int | None,
    seed: int | None,
) -> dict[str, float]:
    """The scores of strictly parsed answers against the gold labels, with 95% intervals and invalid counts."""
    from nlue.scoring.bootstrap import scores_with_intervals

    if not parses:
        raise NlueError("no answers to score")
    problem = generation_problem([p.label for p in parses], references, num_labels)
    scores = scores_with_intervals(problem, None, bootstrap_resamples, seed=seed)
    counts = dict.fromkeys(INVALID_CATEGORIES, 0)
    for parse in parses:
        if parse.category is not None:
            counts[parse.category] += 1
    scores.update({f"invalid_count_{name}": float(n) for name, n in counts.items()})
    scores["parseable_items"] = float(sum(p.valid for p in parses))
    return {k: float(v) for k, v in scores.items()}


def answer_rows(
    ids: Sequence[Any],
    prompts: Sequence[str],
    outputs: Sequence[Generation],
    words: Sequence[str],
    references: Sequence[int],
) -> tuple[list[LabelParse], list[LabelParse], list[dict[str, Any]]]:
    """Strict and lenient parses of each answer, and the raw-output rows (the gold written last, after scoring)."""
    strict, lenient, rows = [], [], []
    for item_id, prompt, output, gold in zip(ids, prompts, outputs, references, strict=True):
        error = (output.error or "request failed") if output.finish_reason == "error" else None
        first = parse_label(output.text, words, error=error)
        second = parse_label(output.text, words, lenient=True, error=error)
        strict.append(first)
        lenient.append(second)
        verdict = "invalid" if not first.valid else ("correct" if first.label == gold else "wrong")
        rows.append({
            "id": item_id, "prompt_sha256": prompt_hash(prompt), "output": output.text,
            "finish_reason": output.finish_reason, "error": output.error, "completion_tokens": output.completion_tokens,
            "strict": first.to_dict(words), "lenient": second.to_dict(words), "verdict": verdict,
            "gold_label_id": int(gold), "gold_label": words[int(gold)],
        })  # fmt: skip
    return strict, lenient, rows


def lenient_summary(lenient: Sequence[LabelParse], references: Sequence[int]) -> dict[str, float]:
    """The lenient parse's own accuracy and invalid rate: a diagnostic, kept out of the numbers."""
    correct = sum(p.label == gold for p, gold in zip(lenient, references, strict=True))
    return {
        "accuracy_all_items": correct / len(lenient),
        "invalid_rate": sum(not p.valid for p in lenient) / len(lenient),
    }


def write_rows(path: Any, rows: Sequence[Mapping[str, Any]]) -> Any:
    """The raw outputs as JSON lines, written whole or not at all."""
    from pathlib import Path

    from nlue.strict_json import dumps_lines

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(dumps_lines(rows, where=str(path)), encoding="utf-8")
    tmp.replace(path)
    return path
