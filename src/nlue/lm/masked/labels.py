"""A masked LM behind the :class:`~nlue.lm.base.LanguageModel` interface: continuations scored at mask slots.

A masked LM has no next-word distribution, so a continuation's score is its left-to-right
pseudo-log-likelihood after the context (the PLL-word-l2r of :mod:`nlue.lm.masked.predictor`):
the continuation's n pieces go into n mask slots after the context, and piece i is scored given
the pieces before it, the later ones still masked. The sum over the pieces is the score. This is
how neDIOM's zero-shot protocol reads "the label with the higher likelihood" for masked models,
and it lets a masked LM answer the NLUE tasks and the exams by log-likelihood too. It cannot
generate: its capabilities say so, and commands refuse ``--mode generate`` before the first request.

Context longer than the model's input is cut from the left (the end of the prompt, nearest the
answer, is kept), and a call says once how many contexts it cut.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.description import Capabilities, ModelDescription
from nlue.lm.journal import JournalledCall, open_journal

logger = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 16


class MaskedLMScorer:
    """Log-likelihood requests answered by a masked LM's left-to-right pseudo-log-likelihood."""

    def __init__(
        self, model: str, device: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, journal: Any = None
    ) -> None:
        import torch

        from nlue.lm.checkpoints import load_masked_lm

        self.model, self.tokenizer = load_masked_lm(model)
        self.model_id = str(model)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        self.journal = journal  # the answer cache (nlue.lm.answer_cache), a path to one, or None
        positions = getattr(self.model.config, "max_position_embeddings", None) or 512
        self.max_length = min(positions, self.tokenizer.model_max_length or positions)
        self.truncated = 0  # contexts cut by the last call
        # The special tokens around a text, read off the tokenizer itself (fast tokenizers keep no builder for them).
        probe = self.tokenizer(self.tokenizer.mask_token, add_special_tokens=True)["input_ids"]
        at = probe.index(self.tokenizer.mask_token_id)
        self.head, self.tail = list(probe[:at]), list(probe[at + 1 :])

    @property
    def name(self) -> str:
        return f"mlm:{self.model_id}"

    def describe(self) -> ModelDescription:
        return ModelDescription(
            backend="masked-lm",
            name=self.name,
            model=self.model_id,
            capabilities=Capabilities(loglikelihood=True, exact_loglikelihood=False),
            max_length=self.max_length,
            decoding="none (pseudo-log-likelihood at mask slots)",
            settings={"device": self.device, "batch_size": self.batch_size, "scoring": "PLL-word-l2r"},
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        raise NlueError(f"{self.model_id} is a masked LM: it scores text but does not generate; use --mode loglik")

    def _sequence(self, context: list[int], pieces: list[int], filled: int) -> tuple[list[int], int]:
        """Special tokens around context + pieces (the first ``filled`` shown, the rest masked); the scored slot."""
        slots = pieces[:filled] + [self.tokenizer.mask_token_id] * (len(pieces) - filled)
        room = self.max_length - len(self.head) - len(self.tail) - len(slots)
        if room < 1:
            raise NlueError(f"a continuation of {len(pieces)} pieces does not fit the model's {self.max_length} tokens")
        if len(context) > room:  # keep the end: the cue and the text nearest the answer
            context = context[-room:]
        ids = self.head + context + slots + self.tail
        return ids, len(self.head) + len(context) + filled

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Each continuation's summed PLL after its context (``is_greedy`` is not defined here: always False).

        Through the answer cache like every backend's requests: a rerun computes nothing it computed before.
        """
        journal, owned = open_journal(self.journal)
        try:
            params = {"scoring": "PLL-word-l2r", "max_length": self.max_length}
            call = JournalledCall(journal, self, "loglikelihood", params, [r.to_dict() for r in requests])
            if call.pending:
                scores = self._score([requests[i] for i in call.pending])
                call.record((i, s.to_dict()) for i, s in zip(call.pending, scores, strict=True))
            return [Loglikelihood.from_dict(r) for r in call.results()]
        finally:
            if owned and journal is not None:
                journal.close()

    def _score(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        asks: list[tuple[list[int], int, int]] = []  # (ids, position, token): one per piece
        spans: list[tuple[int, int]] = []
        contexts: dict[str, list[int]] = {}
        self.truncated = 0
        for request in requests:
            if request.context not in contexts:
                contexts[request.context] = self.tokenizer(request.context, add_special_tokens=False)["input_ids"]
            context = contexts[request.context]
            pieces = self.tokenizer(request.continuation, add_special_tokens=False)["input_ids"]
            if not pieces:
                raise NlueError(f"the continuation {request.continuation!r} tokenizes to nothing")
            room = self.max_length - len(self.head) - len(self.tail) - len(pieces)
            self.truncated += len(context) > room
            start = len(asks)
            for filled, token in enumerate(pieces):
                ids, slot = self._sequence(context, pieces, filled)
                asks.append((ids, slot, token))
            spans.append((start, len(asks)))
        if self.truncated:
            logger.warning("%d of %d contexts cut from the left to fit %s's %d tokens", self.truncated, len(requests),
                           self.model_id, self.max_length)  # fmt: skip
        logps = self._log_probs(asks)
        return [Loglikelihood(float(np.sum(logps[a:b])), False) for a, b in spans]

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


def from_spec(spec: Any, **context: Any) -> MaskedLMScorer:
    """The ``masked-lm`` backend (:mod:`nlue.lm.backends`)."""
    return MaskedLMScorer(
        spec.model, device=spec.device, batch_size=spec.batch_size or DEFAULT_BATCH_SIZE, journal=spec.journal
    )
