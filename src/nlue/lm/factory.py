"""The one factory: a :class:`~nlue.lm.spec.ModelSpec` becomes a model, and a model is checked before use.

Every command and the Space build models here, and nowhere else (``tests/test_layout.py`` keeps it
so): :func:`load_model` picks the backend (:mod:`nlue.lm.backends`) and builds it;
:func:`require` asks a language model, before the first request of a run, whether it can do what
the evaluation mode needs (a server answers one small probe request), and refuses with the mode,
server or model that would work.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from nlue.errors import NlueError
from nlue.lm.backends import LANGUAGE_MODEL, choose_backend
from nlue.lm.description import GENERATE, LOGLIK, Capabilities, ModelDescription, run_locally_advice
from nlue.lm.spec import ModelSpec

logger = logging.getLogger(__name__)


def load_model(spec: ModelSpec, role: str = LANGUAGE_MODEL, **context: Any) -> Any:
    """Build ``spec`` as a model of ``role`` (see :mod:`nlue.lm.backends`); ``context``: what the backend needs."""
    backend = choose_backend(spec, role)
    module, _, function = backend.target.partition(":")
    build = getattr(importlib.import_module(module), function)
    logger.debug("%s: %s backend (%s)", spec.model, backend.name, backend.summary)
    return build(spec, **context)


def capabilities(model: Any, mode: str | None = None) -> Capabilities:
    """What ``model`` can do; a server's backend sends one probe request for ``mode`` first (once per mode)."""
    probe = getattr(model, "probe", None)
    if probe is not None and mode is not None:
        return probe(mode)
    return model.describe().capabilities


def require(model: Any, mode: str, what: str = "this evaluation") -> Capabilities:
    """Refuse, before any request, a model that cannot run ``mode``; say which mode or server would work."""
    found = capabilities(model, mode)
    problem = found.missing_for(mode)
    if problem is None:
        return found
    description: ModelDescription = model.describe()
    advice = _what_would_work(description, found, mode)
    raise NlueError(f"{description.model} ({description.backend}) cannot run {what} in --mode {mode}: {problem}" +
                    (f"; {advice}" if advice else "."))  # fmt: skip


def _what_would_work(description: ModelDescription, found: Capabilities, mode: str) -> str:
    others = [m for m in found.modes() if m != mode]
    advice = [f"it can run --mode {' or '.join(others)}"] if others else []
    if mode == LOGLIK and description.backend == "openai-compatible":
        advice.append(
            "for log-likelihoods, serve the model with a server that returns prompt log-probabilities "
            f"(vLLM: `vllm serve MODEL`, then the same --endpoint), or {run_locally_advice(description.model)}"
        )
    if mode == GENERATE and not found.generate:
        advice.append("generation needs a causal LM (a local folder or Hub id) or a server (--endpoint)")
    return "; ".join(advice) + "." if advice else ""


AUTO_MODE = "auto"


def choose_mode(model: Any, requested: str, what: str = "this evaluation", preferred: str = LOGLIK) -> str:
    """The evaluation mode to run: ``requested``, checked; or, for ``auto``, ``preferred`` when the model can
    (log-likelihood stays the default where it is supported), else the other mode, said once in the log."""
    if requested != AUTO_MODE:
        require(model, requested, what)
        return requested
    found = capabilities(model, preferred)
    if found.missing_for(preferred) is None:
        return preferred
    other = GENERATE if preferred == LOGLIK else LOGLIK
    found = capabilities(model, other)
    if found.missing_for(other) is not None:
        require(model, preferred, what)  # neither works: the error says why and what would
    logger.warning("%s cannot run --mode %s (%s): running %s in --mode %s", model.describe().model, preferred,
                   capabilities(model).missing_for(preferred), what, other)  # fmt: skip
    return other
