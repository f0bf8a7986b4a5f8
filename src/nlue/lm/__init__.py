"""The language-model engine: one interface, a local transformers backend and an OpenAI-compatible HTTP one.

* :mod:`nlue.lm.base` - requests, results, the :class:`LanguageModel` protocol;
* :mod:`nlue.lm.local` - :class:`~nlue.lm.local.LocalCausalLM` (transformers; needs the ``train`` extra);
* :mod:`nlue.lm.http` - :class:`~nlue.lm.http.OpenAICompatibleLM` (the ``openai`` client; the ``llm`` extra);
* :mod:`nlue.lm.journal` - the JSONL journal that makes every run resumable.

The backends are imported from their modules, so that ``import nlue.lm`` needs neither torch nor openai.
"""

from __future__ import annotations

from nlue.lm.base import (
    ChatMessage,
    Generation,
    GenerationRequest,
    LanguageModel,
    Loglikelihood,
    LoglikelihoodRequest,
)
from nlue.lm.journal import Journal

__all__ = [
    "ChatMessage",
    "Generation",
    "GenerationRequest",
    "Journal",
    "LanguageModel",
    "Loglikelihood",
    "LoglikelihoodRequest",
]
