"""neDIOM zero-shot: score each label word after a prompt, with a causal LM or at a mask slot of a masked LM.

The paper picks the label with the higher likelihood from the model's next-word
prediction and says no more (facts §5, §8 ambiguities 1 and 2). Our protocol:

* the prompt (:data:`nlue.registry.nediom.NEDIOM_PROMPTS`, English or Nepali, our words) is
  an instruction, the idiom on its own line in the variants that give it, the variant's
  context (:func:`nlue.registry.kinds.idiomaticity.variant_input`, never a ``###`` marker)
  and an answer cue; the gold label never enters it;
* causal LMs (through the engine, :class:`~nlue.lm.base.LanguageModel`, so a local model
  or an OpenAI-compatible server): each label word is the continuation ``" " + word`` of
  the prompt, its summed token log-probability the score;
* masked LMs: the word's n pieces go into n mask slots after the cue and are scored left
  to right (piece i given pieces before it, the later ones still masked), the
  pseudo-log-likelihood GMET uses for multi-piece words; the sum is the score;
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
from nlue.evals.nlue_llm import TARGET_DELIMITER, LabelScores
from nlue.lm.base import LanguageModel, LoglikelihoodRequest
from nlue.registry.kinds.idiomaticity import InputVariant, variant_input
from nlue.registry.nediom import NEDIOM_PROMPTS, IdiomPrompt

logger = logging.getLogger(__name__)

SCORERS: tuple[str, ...] = ("causal", "masked")


def prompt_spec(language: str) -> IdiomPrompt:
    """The registry's prompt in ``language``, or an error naming the languages there are."""
    if language not in NEDIOM_PROMPTS:
        raise NlueError(f"--prompt-language must be one of {', '.join(NEDIOM_PROMPTS)}, got {language!r}")
    return NEDIOM_PROMPTS[language]


def render_prompt(example: Mapping[str, Any], variant: InputVariant, language: str) -> str:
    """The prompt of one item in one input variant, ending with the answer cue (no label, no marker)."""
    spec = prompt_spec(language)
    first, second = variant_input(example, variant)
    if variant.with_idiom:
        lines = [spec.instruction_with_idiom, "", f"{spec.idiom_label}: {first}", f"{spec.context_label}: {second}"]
    else:
        lines = [spec.instruction_without_idiom, "", f"{spec.context_label}: {first}"]
    return "\n".join([*lines, spec.answer_cue])


def causal_scores(
    model: LanguageModel, items: Sequence[Mapping[str, Any]], variant: InputVariant, language: str
) -> LabelScores:
    """Summed log-probability of each label word after each item's prompt, asked of the engine in one batch."""
    words = prompt_spec(language).label_words
    requests = [
        LoglikelihoodRequest(render_prompt(item, variant, language), TARGET_DELIMITER + word)
        for item in items
        for word in words
    ]
    answers = model.loglikelihood(requests)
    values = np.array([a.logprob for a in answers], dtype=np.float64).reshape(len(items), len(words))
    return LabelScores(tuple(words), values)


class CausalLabelScorer:
    """A causal LM behind the engine, asked for every label word of every item of a variant at once."""

    def __init__(self, model: LanguageModel) -> None:
        self.model = model
        self.name = model.name

    def scores(self, items: Sequence[Mapping[str, Any]], variant: InputVariant, language: str) -> LabelScores:
        return causal_scores(self.model, items, variant, language)

    def describe(self) -> dict[str, Any]:
        return self.model.describe()


def detect_scorer(model: str) -> str:
    """``causal`` or ``masked`` from a checkpoint's config (its architectures, else its model type)."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError) as exc:
        raise NlueError(f"--model {model!r}: cannot read a model config ({exc})") from None
    for architecture in getattr(config, "architectures", None) or ():
        if architecture.endswith("ForMaskedLM"):
            return "masked"
        if architecture.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
    if getattr(config, "is_decoder", False) or config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    return "masked"


class MaskedLabelScorer:
    """Label words scored at mask slots after the prompt, left to right (module docstring)."""

    def __init__(self, model: str, device: str | None = None, batch_size: int = 16) -> None:
        import torch
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model)
            self.model = AutoModelForMaskedLM.from_pretrained(model)
        except (OSError, ValueError) as exc:
            raise NlueError(f"--model {model!r}: cannot load a masked LM and its tokenizer ({exc})") from None
        if self.tokenizer.mask_token_id is None:
            raise NlueError(f"--model {model!r}: its tokenizer has no mask token; a masked LM needs one")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        self.name = f"mlm:{model}"
        positions = getattr(self.model.config, "max_position_embeddings", None) or 512
        self.max_length = min(positions, self.tokenizer.model_max_length or positions)
        self.truncated = 0  # prompts cut by the last call of scores()
        # The special tokens around a text, read off the tokenizer itself (fast tokenizers keep no builder for them).
        probe = self.tokenizer(self.tokenizer.mask_token, add_special_tokens=True)["input_ids"]
        at = probe.index(self.tokenizer.mask_token_id)
        self.head, self.tail = list(probe[:at]), list(probe[at + 1 :])

    def _sequence(self, prompt_ids: list[int], pieces: list[int], filled: int) -> tuple[list[int], int]:
        """Special tokens around prompt + pieces (the first ``filled`` shown, the rest masked); the scored slot."""
        slots = pieces[:filled] + [self.tokenizer.mask_token_id] * (len(pieces) - filled)
        room = self.max_length - len(self.head) - len(self.tail) - len(slots)
        if room < 1:
            raise NlueError(f"a label word of {len(pieces)} pieces does not fit the model's {self.max_length} tokens")
        if len(prompt_ids) > room:  # keep the end: the cue and the context nearest the answer
            prompt_ids = prompt_ids[-room:]
        ids = self.head + prompt_ids + slots + self.tail
        return ids, len(self.head) + len(prompt_ids) + filled

    def scores(self, items: Sequence[Mapping[str, Any]], variant: InputVariant, language: str) -> LabelScores:
        """Pseudo-log-likelihood of each label word at the mask slots after each item's prompt."""
        words = prompt_spec(language).label_words
        pieces = [self.tokenizer(TARGET_DELIMITER + w, add_special_tokens=False)["input_ids"] for w in words]
        self.truncated = 0
        room = self.max_length - len(self.head) - len(self.tail) - max(map(len, pieces))
        asks: list[tuple[list[int], int, int]] = []  # (ids, position, token) ; one per piece
        for item in items:
            prompt_ids = self.tokenizer(render_prompt(item, variant, language), add_special_tokens=False)["input_ids"]
            self.truncated += len(prompt_ids) > room
            for word_pieces in pieces:
                for filled, token in enumerate(word_pieces):
                    ids, slot = self._sequence(prompt_ids, word_pieces, filled)
                    asks.append((ids, slot, token))
        if self.truncated:
            logger.warning("%s: %d prompts cut from the left to fit %d tokens", variant.name, self.truncated,
                           self.max_length)  # fmt: skip
        logps = self._log_probs(asks)
        per_word = [len(p) for p in pieces]
        values = np.zeros((len(items), len(words)), dtype=np.float64)
        cursor = 0
        for i in range(len(items)):
            for j, count in enumerate(per_word):
                values[i, j] = float(np.sum(logps[cursor : cursor + count]))
                cursor += count
        return LabelScores(tuple(words), values)

    def _log_probs(self, asks: list[tuple[list[int], int, int]]) -> np.ndarray:
        import torch

        out = np.zeros(len(asks), dtype=np.float64)
        order = sorted(range(len(asks)), key=lambda k: len(asks[k][0]))  # similar lengths, little padding
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                width = max(len(asks[k][0]) for k in batch)
                ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, k in enumerate(batch):
                    ids[row, : len(asks[k][0])] = torch.tensor(asks[k][0])
                    mask[row, : len(asks[k][0])] = 1
                logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
                rows = torch.arange(len(batch), device=logits.device)
                slots = torch.tensor([asks[k][1] for k in batch], device=logits.device)
                tokens = torch.tensor([asks[k][2] for k in batch], device=logits.device)
                logp = torch.log_softmax(logits[rows, slots].float(), dim=-1)[rows, tokens]
                out[batch] = logp.cpu().numpy()
        return out

    def describe(self) -> dict[str, Any]:
        return {"backend": "masked LM (transformers)", "max_length": self.max_length, "device": self.device}
