"""The registered model backends: every way nlue can load or call a model, in one table.

A backend is one module with a ``from_spec(spec, **context)`` function, plus one
:class:`Backend` entry below. The entry says which *role* the model plays (what the caller
gets back) and when auto-selection picks it; :func:`nlue.lm.factory.load_model` does the rest.
Adding a backend is that module and that line, nothing else.

Roles (what a built model offers):

* ``language-model`` - the :class:`~nlue.lm.base.LanguageModel` protocol (generate, log-likelihood):
  the exams, NLUE and neDIOM with LLMs;
* ``word-predictor`` - ranked whole words for a sentence with one blank (GMET);
* ``classifier`` - a fine-tuned sequence classifier and its tokenizer (``nlue evaluate``, the Space);
* ``baseline-classifier`` - a model fitted per task from the data (the TF-IDF baseline);
* ``translator`` - a sequence-to-sequence translation model (``nlue translate --mt-model``).

This module imports neither torch nor transformers; the backends load them when they build.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

from nlue.errors import NlueError
from nlue.lm.spec import AUTO, ModelSpec

logger = logging.getLogger(__name__)

LANGUAGE_MODEL = "language-model"
WORD_PREDICTOR = "word-predictor"
CLASSIFIER = "classifier"
BASELINE_CLASSIFIER = "baseline-classifier"
TRANSLATOR = "translator"
ROLES: tuple[str, ...] = (LANGUAGE_MODEL, WORD_PREDICTOR, CLASSIFIER, BASELINE_CLASSIFIER, TRANSLATOR)

WORD_BASELINES = {
    "baseline:unigram": "most frequent words of the sample corpus (no context)",
    "baseline:bigram": "bigram model (left and right neighbour words) over the sample corpus",
    "baseline:tiny-mlm": "tiny BERT-style masked LM trained for seconds on the sample corpus",
}
CLASSIFIER_BASELINES = {"baseline:tfidf": "TF-IDF character n-grams and a linear model, fitted per task"}


@functools.lru_cache(maxsize=64)
def model_family(model: str) -> str | None:
    """``causal`` or ``masked`` from a checkpoint's config (architectures, else model type); None if unreadable."""
    try:
        from transformers import AutoConfig
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    except ImportError:
        return None
    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError):  # not there, or no config: the backend that loads it says so
        return None
    for architecture in getattr(config, "architectures", None) or ():
        if architecture.endswith("ForMaskedLM"):
            return "masked"
        if architecture.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
    if getattr(config, "is_decoder", False) or config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    return "masked"


def _served(spec: ModelSpec) -> bool:
    return bool(spec.endpoint)


def _local_causal(spec: ModelSpec) -> bool:
    return not spec.endpoint and not spec.is_baseline and model_family(spec.model) != "masked"


def _local_masked(spec: ModelSpec) -> bool:
    return not spec.endpoint and not spec.is_baseline and model_family(spec.model) == "masked"


def _named(*names: str) -> Callable[[ModelSpec], bool]:
    return lambda spec: spec.model in names


def _local_checkpoint(spec: ModelSpec) -> bool:
    return not spec.endpoint and not spec.is_baseline


@dataclass(frozen=True)
class Backend:
    name: str
    role: str
    target: str  # "module:function" that builds the model from (spec, **context)
    summary: str
    accepts: Callable[[ModelSpec], bool]  # auto-selection: the first backend of the role that accepts the spec


# The order is auto-selection's: within a role, the first backend that accepts a spec is used.
BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend("openai-compatible", LANGUAGE_MODEL, "nlue.lm.http:from_spec",
                "any OpenAI-compatible server (vLLM, TGI, llama.cpp, transformers serve, a hosted API)", _served),
        Backend("transformers", LANGUAGE_MODEL, "nlue.lm.local:from_spec",
                "a local transformers causal LM (folder or Hub id)", _local_causal),
        Backend("masked-lm", LANGUAGE_MODEL, "nlue.lm.masked.labels:from_spec",
                "a local masked LM, scoring continuations by pseudo-log-likelihood (no generation)", _local_masked),
        Backend("ngram", WORD_PREDICTOR, "nlue.lm.baselines.ngram:from_spec",
                "unigram or bigram word baseline on the sample corpus", _named("baseline:unigram", "baseline:bigram")),
        Backend("tiny-mlm", WORD_PREDICTOR, "nlue.lm.baselines.tiny_mlm:from_spec",
                "a tiny masked LM trained on the sample corpus, ranked like any checkpoint",
                _named("baseline:tiny-mlm")),
        Backend("fill-mask", WORD_PREDICTOR, "nlue.lm.masked.predictor:from_spec",
                "a masked LM ranking whole words for a blank (PLL-word-l2r)", _local_checkpoint),
        Backend("tfidf", BASELINE_CLASSIFIER, "nlue.lm.baselines.tfidf:from_spec",
                CLASSIFIER_BASELINES["baseline:tfidf"], _named("baseline:tfidf")),
        Backend("sequence-classifier", CLASSIFIER, "nlue.lm.checkpoints:classifier_from_spec",
                "a fine-tuned transformers classifier, or a LoRA adapter folder", _local_checkpoint),
        Backend("seq2seq", TRANSLATOR, "nlue.lm.seq2seq:from_spec",
                "a local sequence-to-sequence translation model (Marian, M2M-100, NLLB)", _local_checkpoint),
    )
}  # fmt: skip


def backends_for(role: str) -> list[Backend]:
    if role not in ROLES:
        raise ValueError(f"unknown model role {role!r}; expected one of {', '.join(ROLES)}")
    return [b for b in BACKENDS.values() if b.role == role]


def choose_backend(spec: ModelSpec, role: str) -> Backend:
    """The backend ``spec`` names, or the first of ``role`` that accepts it; a clear error otherwise."""
    offered = backends_for(role)
    if spec.backend != AUTO:
        chosen = BACKENDS.get(spec.backend)
        if chosen is None or chosen.role != role:
            names = ", ".join(b.name for b in offered)
            raise NlueError(f"--backend {spec.backend!r} cannot serve here; choose one of: {AUTO}, {names}")
        return chosen
    for backend in offered:
        if backend.accepts(spec):
            return backend
    if spec.is_baseline:
        known = {**WORD_BASELINES, **CLASSIFIER_BASELINES} if role != LANGUAGE_MODEL else {}
        here = [name for name in known if any(b.accepts(ModelSpec(name)) for b in offered)]
        listed = ", ".join(here) if here else "none for this command"
        raise NlueError(f"unknown baseline {spec.model!r} here; baselines this command takes: {listed}")
    if spec.endpoint:
        raise NlueError(f"--endpoint serves language models only; this command needs a {role} (leave out --endpoint)")
    raise NlueError(f"no backend can load {spec.model!r} as a {role}")
