"""Normalisation as the builder applies it: texts by a language profile, GMET answers, near-duplicate keys.

:func:`normalize_text` is :func:`nlue.text.profiles.normalize_text`: a text by the rules of a
language profile (:mod:`nlue.text.profiles`), the ``nepali`` profile unless another is named;
the builder normalises each task's text fields with the task's profile
(:func:`nlue.text.profiles.profile_of`). :func:`normalize_answer` adds the GMET answer rules,
and :func:`loose_texts` the looser fold behind near-duplicate counts.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from nlue.text.profiles import normalize_text

__all__ = ["NEAR_DUPLICATE_RULES", "fold_rule", "loose_text", "loose_texts", "normalize_answer", "normalize_text"]


def normalize_answer(word: str) -> str:
    """Normalise one GMET answer word: the text rules plus surrounding punctuation/dandas.

    Shared by the builder (answers stored in the dataset) and the GMET metric
    (comparing predictions), so both sides agree on what "the same word" means.
    """
    # Stripping can strand what the text rules remove (a joiner that stood beside a danda,
    # a space): apply both until nothing changes, so that normalising twice changes nothing.
    # Each round but the last shortens the word, so this ends.
    while True:
        stripped = normalize_text(word).strip(_ANSWER_STRIP).strip()
        if stripped == word:
            return stripped
        word = stripped


# Punctuation that may cling to a predicted word: ASCII and Unicode punctuation, dandas.
_ANSWER_STRIP = "".join(
    chr(c) for c in range(0x20, 0x3000) if unicodedata.category(chr(c)).startswith(("P", "Z")) or chr(c) in "।॥"
)


# --- the looser key behind near-duplicate counts ---------------------------------------------

NEAR_DUPLICATE_RULES = (
    "Two items are near-duplicates when their normalised inputs agree once each text is folded "
    "further: letters casefolded, Devanagari digits (०-९) read as ASCII digits, and punctuation "
    "(dandas included), spaces, ZWJ/ZWNJ and the emoji variation selectors U+FE0E/U+FE0F removed."
)


def loose_texts(texts: Sequence[str]) -> list[str]:
    """Each of ``texts`` (already normalised) folded by :data:`NEAR_DUPLICATE_RULES`.

    Only for near-duplicate keys: never stored or shown. The batch is folded as one array
    of code points (a deletion mask and a one-to-one mapping, both looked up per code
    point), ~5x faster than folding string by string, which costs a Python-level pass
    over every character.
    """
    if len(texts) > _FOLD_CHUNK:  # bounds the arrays below (~25 bytes per character of a chunk)
        return [
            t for start in range(0, len(texts), _FOLD_CHUNK) for t in loose_texts(texts[start : start + _FOLD_CHUNK])
        ]
    if not texts:
        return []
    deleted, mapped, expands = _loose_tables()
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    keep = ~deleted[codes]
    folded_codes = mapped[codes[keep]]
    # Where each text starts and ends among the kept code points.
    kept_before = np.zeros(len(codes) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=bounds[1:])
    edges = kept_before[bounds].tolist()
    folded = folded_codes.tobytes().decode("utf-32-le", "surrogatepass")
    out = [folded[start:stop] for start, stop in pairwise(edges)]
    if expands[folded_codes].any():  # e.g. "ß" -> "ss": folds to more than one code point
        out = [text.casefold() for text in out]
    return out


def loose_text(text: str) -> str:
    """One text folded as :func:`loose_texts` folds each of a batch."""
    return loose_texts([text])[0]


_FOLD_CHUNK = 8192
# Unicode has no punctuation and no case beyond plane 1 (planes 2-3: CJK ideographs, 14:
# tags and selectors, 15-16: private use; a test checks this), so only these code points
# are scanned to build the tables; the others stay as they are.
_FOLDING_CODE_POINTS = 0x20000


_FOLD_DELETED_EXTRA = (ord(" "), 0x200C, 0x200D, 0xFE0E, 0xFE0F)
_DEVANAGARI_DIGITS = range(0x0966, 0x0970)


def fold_rule(code: int) -> tuple[bool, int, bool]:
    """One code point's entries in :func:`_loose_tables`: deleted, what it becomes, whether it expands.

    For callers that need a few code points without building the whole tables (~0.1 s);
    a test checks that the two agree on every code point.
    """
    character = chr(code)
    if code in _FOLD_DELETED_EXTRA or unicodedata.category(character).startswith("P"):
        return True, code, False
    if code in _DEVANAGARI_DIGITS:
        return False, ord("0") + code - _DEVANAGARI_DIGITS.start, False
    folded = character.casefold()
    return (False, ord(folded), False) if len(folded) == 1 else (False, code, True)


@functools.cache
def _loose_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code point: is it deleted, what it becomes, and does its casefold take 2+ code points.

    Deleted: Unicode punctuation (every P* category: dandas, quotes, dashes, ...), the
    space (the only whitespace left by :func:`normalize_text`), ZWJ/ZWNJ and the emoji
    variation selectors (after normalisation they remain only after an emoji, where they
    choose its look, not its meaning: "❤" and "❤\ufe0f" are the same heart). Mapped:
    Devanagari digits to ASCII, and every character whose casefold is one character to
    that character (casefolding is per character, so this equals ``str.casefold``).
    Built on first use (~0.1 s, ~6 MiB): importers that never fold should not pay.
    """
    size = sys.maxunicode + 1
    deleted = np.zeros(size, dtype=bool)
    mapped = np.arange(size, dtype=np.uint32)
    expands = np.zeros(size, dtype=bool)
    for code in range(_FOLDING_CODE_POINTS):
        character = chr(code)
        if unicodedata.category(character).startswith("P"):
            deleted[code] = True
            continue
        folded = character.casefold()
        if len(folded) == 1:
            mapped[code] = ord(folded)
        else:
            expands[code] = True
    deleted[[ord(" "), 0x200C, 0x200D, 0xFE0E, 0xFE0F]] = True
    mapped[0x0966:0x0970] = np.arange(ord("0"), ord("9") + 1, dtype=np.uint32)
    return deleted, mapped, expands
