"""A dry run of a model command: the requests it would send, counted, and what they would cost, live and as batches.

:class:`DryRunLM` stands in for the model: the command builds its requests as it always does and
hands them over, and gets placeholder answers back (log-likelihood 0, an empty generation), so what
is counted is exactly what a run would ask. No request is sent and no probe is made (a served model's
``--mode auto`` is counted as log-likelihood; the probe decides at run time). A served model's request
bodies are the ones the run would send (:mod:`nlue.lm.http_bodies`).

Tokens are estimated, not counted: a served model's tokenizer is not here. The estimate is one token
per :data:`BYTES_PER_TOKEN` UTF-8 bytes of the prompt text, about a token per character for Devanagari
and Arabic script (three bytes each), and more than most tokenizers give English: an estimate on the
high side. Answer tokens are the most a request may take: its token cap for a generation, one for a
log-likelihood request (``max_tokens=1``); a model that stops early costs less.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.cost import UsageMeter

BYTES_PER_TOKEN = 3


def estimated_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


@dataclass
class RequestTally:
    loglikelihood: int = 0
    generation: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0  # at most

    @property
    def requests(self) -> int:
        return self.loglikelihood + self.generation


class DryRunLM:
    """Takes a model's place in a dry run: counts the requests, sends nothing, answers placeholders."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.name
        self.tally = RequestTally()

    def describe(self) -> Any:
        return self.model.describe()

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        self.tally.loglikelihood += len(requests)
        self.tally.prompt_tokens += sum(estimated_tokens(r.context + r.continuation) for r in requests)
        self.tally.completion_tokens += len(requests)
        return [Loglikelihood(0.0, False) for _ in requests]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.tally.generation += len(requests)
        for r in requests:
            text = "".join(m.content for m in r.messages) if r.messages else r.prompt
            self.tally.prompt_tokens += estimated_tokens(text)
            self.tally.completion_tokens += r.max_new_tokens
        return [Generation("", 0, 0, "stop") for _ in requests]


def cost_lines(
    tally: RequestTally, prompt_price: float | None, completion_price: float | None, batch_discount: float | None
) -> list[str]:
    """What a dry run says of the requests and their cost; ``batch_discount``: a ``--batch-api`` run's discount."""
    lines = [
        f"requests: {tally.requests:,} ({tally.loglikelihood:,} log-likelihood, {tally.generation:,} generation)",
        f"tokens (estimated, one per {BYTES_PER_TOKEN} UTF-8 bytes of prompt): ~{tally.prompt_tokens:,} prompt, at "
        f"most {tally.completion_tokens:,} answer",
    ]
    if prompt_price is None and completion_price is None:
        lines.append("cost: give --prompt-price-per-1k and --completion-price-per-1k for an estimate")
        return lines
    meter = UsageMeter(prompt_price, completion_price, tally.prompt_tokens, tally.completion_tokens)
    live = meter.estimated_cost or 0.0
    lines.append(f"estimated cost at the listed price: at most ~{live:.4f}")
    if batch_discount is not None:
        lines.append(f"estimated cost as batches (--batch-api, {batch_discount:.0%} off): at most "
                     f"~{live * (1 - batch_discount):.4f}")  # fmt: skip
    return lines
