"""The model layer: every way nlue loads or calls a model, and the one factory every command uses.

* :mod:`nlue.lm.spec` - :class:`~nlue.lm.spec.ModelSpec`, what a user asked for (folder, Hub id, endpoint);
* :mod:`nlue.lm.options` - :func:`~nlue.lm.options.add_model_options`, the model options of every command;
* :mod:`nlue.lm.backends` - the registered backends and the roles they serve (one line each);
* :mod:`nlue.lm.factory` - :func:`~nlue.lm.factory.load_model`, and :func:`~nlue.lm.factory.require` /
  :func:`~nlue.lm.factory.choose_mode`, which check a model's capabilities before the first request;
* :mod:`nlue.lm.description` - :class:`~nlue.lm.description.ModelDescription` and its
  :class:`~nlue.lm.description.Capabilities`, what a results file records about a model;
* :mod:`nlue.lm.base` - requests, results and the :class:`LanguageModel` protocol;
* the backends: :mod:`nlue.lm.local` (transformers causal LMs), :mod:`nlue.lm.http` (OpenAI-compatible
  servers), :mod:`nlue.lm.masked` (masked LMs: GMET's word predictor, pseudo-log-likelihood scoring),
  :mod:`nlue.lm.checkpoints` (fine-tuned classifiers, adapters), :mod:`nlue.lm.seq2seq` (translation
  models), :mod:`nlue.lm.baselines` (models that need no download);
* what they share: :mod:`nlue.lm.answer_cache` and :mod:`nlue.lm.journal` (answers asked once, resumable runs), :mod:`nlue.lm.cost`, :mod:`nlue.lm.progress`,
  :mod:`nlue.lm.families` (encoder layouts for the presets), :mod:`nlue.lm.tiny` (tiny local models).

The backends are imported from their modules, so that ``import nlue.lm`` needs neither torch nor openai.
"""

from __future__ import annotations

from nlue.lm.answer_cache import AnswerCache
from nlue.lm.base import (
    ChatMessage,
    Generation,
    GenerationRequest,
    LanguageModel,
    Loglikelihood,
    LoglikelihoodRequest,
)
from nlue.lm.description import Capabilities, ModelDescription
from nlue.lm.journal import Journal
from nlue.lm.spec import ModelSpec

__all__ = [
    "AnswerCache",
    "Capabilities",
    "ChatMessage",
    "Generation",
    "GenerationRequest",
    "Journal",
    "LanguageModel",
    "Loglikelihood",
    "LoglikelihoodRequest",
    "ModelDescription",
    "ModelSpec",
]
