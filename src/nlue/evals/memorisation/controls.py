"""Shuffled controls (``--controls shuffled``), and how an item is laid out as one text.

A shuffled control holds exactly the item's words (so the same script, the same rare names and numbers, the
same length in words), shuffled across its fields and laid out again in fields of the same word counts; its
tokens are then cut to the item's token count where the shuffle made more. A model cannot have read the
shuffled text as such; but it is no longer fluent, and any trained model prefers words in a real order, so
items score above their shuffled controls whether they were seen or not. It is a floor (what a model that
knows the words and nothing of their order gives), not a stand-in for unseen text: the default controls are
natural texts (:mod:`.control_pools`). The shuffle is drawn from a generator seeded by the run's seed, the task and the item's id, so a rerun
(or another model) sees the same controls, and one item's control does not depend on which others are run.
An item of fewer than ``min_words`` words has too few orders to tell apart and gets no control.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

DEFAULT_MIN_WORDS = 4


def item_text(texts: Sequence[str]) -> str:
    """An item's fields as one text, as the probe scores it: one line per field, in the task's order."""
    return "\n".join(texts)


def item_rng(seed: int, task: str, item_id: object) -> np.random.Generator:
    """A generator for one item, the same on every machine and in every run with ``seed``."""
    digest = hashlib.sha256(f"{seed}\x1f{task}\x1f{item_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def control_fields(texts: Sequence[str], rng: np.random.Generator) -> tuple[str, ...] | None:
    """The item's words shuffled across its fields (each field keeps its word count); None when every order
    of the words is the same text (one distinct word)."""
    fields = [text.split() for text in texts]
    words = [word for field in fields for word in field]
    if len(set(words)) < 2:
        return None
    order = rng.permutation(len(words))
    if all(words[i] == word for i, word in zip(order, words, strict=True)):
        order = np.roll(order, 1)  # the draw gave the item back: move every word on by one
    shuffled = [words[i] for i in order]
    out, start = [], 0
    for field in fields:
        out.append(" ".join(shuffled[start : start + len(field)]))
        start += len(field)
    return tuple(out)


def word_count(texts: Sequence[str]) -> int:
    return sum(len(text.split()) for text in texts)
