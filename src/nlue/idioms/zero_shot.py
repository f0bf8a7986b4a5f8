"""neDIOM zero-shot: score each label word after a prompt, with a causal LM or at a mask slot of a masked LM.

The paper picks the label with the higher likelihood from the model's next-word
prediction and says no more (facts §5, §8 ambiguities 1 and 2). Our protocol:

* the prompt (declared in the task's file, :attr:`~nlue.registry.spec.TaskSpec.idiom_prompts`: for
  neDIOM in nediom.yaml, English or Nepali, our words; a user's idiomaticity task in its own words and
  languages) is an instruction, the idiom on its own line in the variants that give it,
  the variant's context (:func:`nlue.registry.kinds.idiomaticity.variant_input`, never a ``###``
  marker) and an answer cue; the gold label never enters it;
* every model is asked through the model layer's :class:`~nlue.lm.base.LanguageModel`
  interface: each label word is the continuation ``" " + word`` of the prompt and its
  log-likelihood the score. A causal LM (local, or a server that returns prompt
  log-probabilities) gives the summed token log-probability; a masked LM
  (:mod:`nlue.lm.masked.labels`) the left-to-right pseudo-log-likelihood at mask slots;
* two predictions per item: the argmax of the summed log-likelihood (**primary**: it is the
  paper's "label with the higher likelihood" read literally, and lm-eval's ``acc``) and of
  the log-likelihood divided by the word's length in characters (lm-eval's ``acc_norm``),
  reported beside it because the two label words differ in length and in pieces.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.evals.llm.nlue_llm import TARGET_DELIMITER, LabelScores
from nlue.lm.base import LanguageModel, LoglikelihoodRequest
from nlue.registry.kinds.idiomaticity import InputVariant, variant_input
from nlue.registry.nediom import NEDIOM_TASKS, IdiomPrompt
from nlue.registry.spec import TaskSpec

logger = logging.getLogger(__name__)


def prompt_spec(language: str, task: TaskSpec | None = None) -> IdiomPrompt:
    """``task``'s prompt in ``language`` (default: neDIOM's), or an error naming the languages there are."""
    task = task or NEDIOM_TASKS[0]
    if language not in task.idiom_prompts:
        offered = ", ".join(task.idiom_prompts) or "none (its task file declares no prompts)"
        raise NlueError(
            f"task {task.name!r} has no prompt in {language!r}; --prompt-language must be one of: {offered}"
        )
    return task.idiom_prompts[language]


def render_prompt(
    example: Mapping[str, Any], variant: InputVariant, language: str, task: TaskSpec | None = None
) -> str:
    """The prompt of one item in one input variant, ending with the answer cue (no label, no marker)."""
    spec = prompt_spec(language, task)
    first, second = variant_input(example, variant)
    if variant.with_idiom:
        lines = [spec.instruction_with_idiom, "", f"{spec.idiom_label}: {first}", f"{spec.context_label}: {second}"]
    else:
        lines = [spec.instruction_without_idiom, "", f"{spec.context_label}: {first}"]
    return "\n".join([*lines, spec.answer_cue])


def causal_scores(
    model: LanguageModel,
    items: Sequence[Mapping[str, Any]],
    variant: InputVariant,
    language: str,
    task: TaskSpec | None = None,
) -> LabelScores:
    """Summed log-probability of each label word after each item's prompt, asked of the engine in one batch."""
    words = prompt_spec(language, task).label_words
    requests = [
        LoglikelihoodRequest(render_prompt(item, variant, language, task), TARGET_DELIMITER + word)
        for item in items
        for word in words
    ]
    answers = model.loglikelihood(requests)
    values = np.array([a.logprob for a in answers], dtype=np.float64).reshape(len(items), len(words))
    return LabelScores(tuple(words), values)


class LabelScorer:
    """A language model (causal, served, or masked by pseudo-log-likelihood) asked for every label word at once."""

    mode = "loglik"

    def __init__(self, model: LanguageModel, task: TaskSpec | None = None) -> None:
        self.model = model
        self.name = model.name
        self.task = task  # whose prompts ask (None: neDIOM's)

    def scores(self, items: Sequence[Mapping[str, Any]], variant: InputVariant, language: str) -> LabelScores:
        return causal_scores(self.model, items, variant, language, self.task)

    def describe(self) -> dict[str, Any]:
        return self.model.describe().to_dict()


class LabelGenerator:
    """A language model that writes the label (``--mode generate``): chat APIs and servers without log-likelihoods.

    The prompt is the zero-shot prompt with the line listing the two label words before its cue
    (:mod:`nlue.evals.llm.label_generation`); the answers are parsed and scored by the caller, which
    alone holds the gold labels.
    """

    mode = "generate"

    def __init__(self, model: LanguageModel, chat: bool, max_new_tokens: int, task: TaskSpec | None = None) -> None:
        self.model = model
        self.name = model.name
        self.chat = chat
        self.max_new_tokens = max_new_tokens
        self.task = task  # whose prompts and answer lines ask (None: neDIOM's)

    def answers(
        self, items: Sequence[Mapping[str, Any]], variant: InputVariant, language: str
    ) -> tuple[list[str], list[Any], tuple[str, ...]]:
        """(each item's prompt, the model's answers, the label words) for one variant."""
        from nlue.evals.llm.label_generation import label_request, with_answer_line

        task = self.task or NEDIOM_TASKS[0]
        words = prompt_spec(language, task).label_words
        line = task.answer_line(language)  # as the task file declares it (or the language's default line)
        prompts = [with_answer_line(render_prompt(item, variant, language, task), words, language, line)
                   for item in items]  # fmt: skip
        outputs = self.model.generate([label_request(p, self.chat, self.max_new_tokens) for p in prompts])
        return prompts, outputs, tuple(words)

    def describe(self) -> dict[str, Any]:
        return {**self.model.describe().to_dict(), "chat": self.chat, "max_new_tokens": self.max_new_tokens}
