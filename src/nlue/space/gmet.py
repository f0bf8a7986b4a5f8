"""The GMET tab: the words a masked LM would put behind ``[MASK]``.

:func:`predict_blank` is the one place the Space asks a model for the blank, and it uses
the GMET evaluator's own predictor (:class:`nlue.lm.masked.predictor.MaskedLMPredictor`, built by the model layer): whole
words, multi-piece ones included, ranked by pseudo-log-likelihood, so the Space shows
exactly what `nlue gmet` scores. The shares shown are the candidates' likelihoods
normalised over the top k (a softmax of their scores), not probabilities over all words.
"""

from __future__ import annotations

import logging

from nlue.errors import NlueError
from nlue.registry.tasks import MASK_PLACEHOLDER
from nlue.space.cache import LoadedModel
from nlue.space.inference import InputError, checked_text, is_blank

logger = logging.getLogger(__name__)


def check_sentence(sentence: str | None, max_chars: int) -> str:
    """The sentence, stripped, with exactly one ``[MASK]``; InputError otherwise (the Try tab's text checks)."""
    text = checked_text(sentence, "The sentence")
    if len(text) > max_chars:
        raise InputError(f"The sentence is {len(text):,} characters long; this Space accepts up to {max_chars:,}.")
    if is_blank(text):
        raise InputError(f"Type a Nepali sentence with one {MASK_PLACEHOLDER} where a word is missing.")
    count = text.count(MASK_PLACEHOLDER)
    if count != 1:
        raise InputError(f"The sentence must hold exactly one {MASK_PLACEHOLDER}; it holds {count}.")
    return text


def predict_blank(loaded: LoadedModel, sentence: str, top_k: int) -> list[tuple[str, float]]:
    """The ``top_k`` best whole-word fillers of the sentence's ``[MASK]``, best first, with relative shares."""
    import math

    from nlue.gmet.items import GmetItem

    with loaded.lock:
        predictor = loaded.model  # the model layer's word predictor (nlue.space.service loads it)
        predictor.top_k = top_k
        try:
            ranked = predictor.predict([GmetItem(0, sentence, "", "", ())])[0]
        except NlueError as exc:  # e.g. a sentence longer than the model's input: the visitor can fix it
            raise InputError(str(exc).replace("GMET item 0: ", "")) from None
    if not ranked.top_k:
        return []
    best = max(ranked.scores)
    weights = [math.exp(score - best) for score in ranked.scores]
    total = sum(weights)
    return [(word, weight / total) for word, weight in zip(ranked.top_k, weights, strict=True)]
