"""The GMET tab: the words a masked LM would put behind ``[MASK]``.

:func:`predict_blank` is the one place the Space asks a model for the blank. Today it is
transformers' fill-mask pipeline (one token per candidate, on the tokenizer's own mask
token); when the GMET evaluator's whole-word top-k predictor lands (``nlue.gmet``), this
function should call it instead, so that the Space shows what GMET scores.
"""

from __future__ import annotations

import logging
from typing import Any

from nlue.space.cache import LoadedModel
from nlue.space.inference import InputError
from nlue.tasks import MASK_PLACEHOLDER

logger = logging.getLogger(__name__)


def load_masked_lm(source: str) -> tuple[Any, Any]:
    """A masked LM and its tokenizer, never with remote code."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(source, trust_remote_code=False)
    tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False)
    model.eval()
    if tokenizer.mask_token is None:
        raise ValueError(f"{source}: its tokenizer has no mask token, so it cannot fill a blank")
    return model, tokenizer


def check_sentence(sentence: str | None, max_chars: int) -> str:
    """The sentence, stripped, with exactly one ``[MASK]``; InputError otherwise."""
    text = (sentence or "").strip()
    if not text:
        raise InputError(f"Type a Nepali sentence with one {MASK_PLACEHOLDER} where a word is missing.")
    if len(text) > max_chars:
        raise InputError(f"The sentence is {len(text):,} characters long; this Space accepts up to {max_chars:,}.")
    count = text.count(MASK_PLACEHOLDER)
    if count != 1:
        raise InputError(f"The sentence must hold exactly one {MASK_PLACEHOLDER}; it holds {count}.")
    return text


def predict_blank(loaded: LoadedModel, sentence: str, top_k: int) -> list[tuple[str, float]]:
    """The ``top_k`` most likely fillers of the sentence's ``[MASK]``, best first, with probabilities."""
    from transformers import pipeline

    with loaded.lock:
        fill = loaded.extra.get("fill_mask")
        if fill is None:
            fill = loaded.extra["fill_mask"] = pipeline("fill-mask", model=loaded.model, tokenizer=loaded.tokenizer)
        text = sentence.replace(MASK_PLACEHOLDER, loaded.tokenizer.mask_token)
        # Ask for extra candidates: sub-word pieces and punctuation are dropped below.
        candidates = fill(text, top_k=min(top_k * 2 + 5, loaded.tokenizer.vocab_size))
    words: dict[str, float] = {}
    for candidate in candidates:
        word = candidate["token_str"].strip()
        if not word or word.startswith("##") or not any(ch.isalnum() for ch in word):
            continue
        words[word] = words.get(word, 0.0) + float(candidate["score"])
    return sorted(words.items(), key=lambda pair: -pair[1])[:top_k]
