"""What a model is and what it can do: the typed description every command and results file reads.

A backend's ``describe()`` returns a :class:`ModelDescription`; its ``capabilities`` say which
evaluation modes the model can run. A command checks them before its first request
(:func:`nlue.lm.factory.require`), so a chat API asked for log-likelihoods is refused at once with
the mode or server that would work, instead of failing request after request.

The two evaluation modes:

* ``generate`` - the model writes an answer, which a strict parser reads (any chat or completions
  model, local or behind a server);
* ``loglik`` - each answer is scored as a continuation of the prompt (a local causal LM, a masked
  LM's pseudo-log-likelihood, or a server that returns the prompt's log-probabilities, as vLLM does
  with ``echo``; chat APIs and ``transformers serve`` do not).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

GENERATE, LOGLIK = "generate", "loglik"
MODES: tuple[str, ...] = (GENERATE, LOGLIK)


def run_locally_advice(model: str) -> str:
    """How to run a served model on this machine instead: a command that works, not a backend's internal name.

    The served name is the folder or Hub id the server was started with (``transformers serve ./my-model``,
    ``vllm serve Qwen/...``), so it is what ``--model`` takes locally.
    """
    return (
        f"run it locally: the same command without `--endpoint`, with `--model {shlex.quote(model)}` "
        "(the model's folder or Hub id)"
    )


@dataclass(frozen=True)
class Capabilities:
    """What a model can do. ``prompt_logprobs`` is known for a server only after its probe (None before)."""

    generate: bool = False
    loglikelihood: bool = False
    chat: bool = False  # chat messages are formatted (a tokenizer's chat template, a server's chat endpoint)
    prompt_logprobs: bool | None = None  # over HTTP: the prompt's token log-probabilities come back (echo)
    exact_loglikelihood: bool = True  # False: a masked LM's pseudo-log-likelihood
    fill_mask: bool = False  # whole words for a blank (GMET)
    classify: bool = False  # a fine-tuned classifier's labels

    def missing_for(self, mode: str) -> str | None:
        """Why ``mode`` cannot run on this model, or None when it can."""
        if mode == GENERATE and not self.generate:
            return "it does not generate text"
        if mode == LOGLIK:
            if not self.loglikelihood:
                return "it gives no log-likelihood of a continuation"
            if self.prompt_logprobs is False:
                return "the server returns no log-probabilities of the prompt's tokens (completions with echo)"
        return None

    def modes(self) -> list[str]:
        """The evaluation modes this model can run."""
        return [mode for mode in MODES if self.missing_for(mode) is None]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ModelDescription:
    """One model as a results file records it (no secret: an API key's variable name at most)."""

    backend: str  # the registered backend's name (nlue.lm.backends.BACKENDS)
    name: str  # a short identifier, also the journal's model key: hf:<model>, openai:<model>, mlm:<model>
    model: str  # the folder, Hub id or served name the user gave
    capabilities: Capabilities
    max_length: int | None = None  # the model's window in tokens, when it is known
    decoding: str = "greedy"
    settings: Mapping[str, Any] = field(default_factory=dict)  # the backend's own: device, dtype, URL, ...

    @property
    def chat(self) -> bool:
        """Whether chat messages are this model's natural input (a chat template, or a chat endpoint)."""
        return self.capabilities.chat

    def to_dict(self) -> dict[str, Any]:
        """The flat form a results file holds: the fields, the capabilities, then the backend's settings."""
        return {
            "backend": self.backend,
            "name": self.name,
            "model": self.model,
            "max_length": self.max_length,
            "decoding": self.decoding,
            "capabilities": self.capabilities.to_dict(),
            **dict(self.settings),
        }
