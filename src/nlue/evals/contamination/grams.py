"""N-gram hashes of many texts at once: words (lowercased, punctuation removed) and characters (folded).

Both measures reduce a text to a sequence of 64-bit units (a word's hash, or a character's code point)
and hash every window of ``n`` units. The hashes are polynomial sums modulo 2**64 computed from prefix
sums in numpy, then mixed (splitmix64's finaliser), so a batch of texts costs a few array operations
per window length instead of a Python loop per n-gram. They depend on nothing but the text: the same
in every process and on every machine (Python's own ``hash`` is seeded per process), so corpus chunks
can be hashed in worker processes against an index built in the parent.

A window never crosses from one text into the next. A text with fewer than ``n`` units but at least
``min_units`` gives one window of its whole length (``whole_lengths``), so short items are still
checked; the corpus side then hashes windows of each of those shorter lengths too.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

_BASE = 0x9E3779B97F4A7C15 | 1  # odd, so invertible modulo 2**64
_BASE_INVERSE = pow(_BASE, -1, 1 << 64)
_SPACE = ord(" ")


@functools.cache
def _punctuation_table() -> dict[int, None]:
    """Every Unicode punctuation character (P*: ASCII punctuation, dandas, quotes, dashes) mapped to nothing."""
    return {c: None for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)).startswith("P")}


def word_text(text: str) -> str:
    """What the word measure sees: casefolded, punctuation removed, words split on whitespace, one space apart.

    As lm-evaluation-harness's decontamination (lowercase, punctuation dropped, whitespace words); the
    danda counts as punctuation, so ``गयो।`` and ``गयो ।`` are the same words.
    """
    return " ".join(text.casefold().translate(_punctuation_table()).split())


def _codes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The texts' code points end to end, and where each text starts (``len(texts) + 1`` offsets)."""
    bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=bounds[1:])
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return codes.astype(np.uint64), bounds


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: spreads the polynomial sums over all 64 bits (the index keys on the top bits)."""
    with np.errstate(over="ignore"):
        values = values ^ (values >> np.uint64(30))
        values = values * np.uint64(0xBF58476D1CE4E5B9)
        values = values ^ (values >> np.uint64(27))
        values = values * np.uint64(0x94D049BB133111EB)
        return values ^ (values >> np.uint64(31))


class _Prefix:
    """Prefix sums of ``units[i] * B**i`` (mod 2**64), so any span's hash is two array operations."""

    def __init__(self, units: np.ndarray) -> None:
        count = len(units)
        powers = np.full(count, _BASE, dtype=np.uint64)
        inverse = np.full(count, _BASE_INVERSE, dtype=np.uint64)
        if count:
            powers[0] = inverse[0] = 1
        with np.errstate(over="ignore"):
            powers = np.cumprod(powers, dtype=np.uint64)
            self.inverse = np.cumprod(inverse, dtype=np.uint64)
            self.sums = np.zeros(count + 1, dtype=np.uint64)
            np.cumsum((units + np.uint64(1)) * powers, out=self.sums[1:])  # +1: a zero unit still counts

    def spans(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The hash of each span ``[start, stop)``: the same for the same units wherever they stand."""
        with np.errstate(over="ignore"):
            return (self.sums[stops] - self.sums[starts]) * self.inverse[starts]


def _units_of_words(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """One hash per word of each (already :func:`word_text`-prepared) text, and where each text's words start."""
    codes, bounds = _codes(texts)
    letter = codes != _SPACE
    # A word starts at a letter after a space or at a text's start, and ends before a space or at a text's end.
    edge = np.zeros(len(codes) + 1, dtype=bool)
    edge[bounds] = True
    before = np.concatenate(([False], letter[:-1])) if len(codes) else letter
    starts = np.flatnonzero(letter & (~before | edge[:-1]))
    after = np.concatenate((letter[1:], [False])) if len(codes) else letter
    stops = np.flatnonzero(letter & (~after | edge[1:])) + 1
    words = _mix(_Prefix(codes).spans(starts, stops))
    return words, np.searchsorted(starts, bounds)


def _windows(units: np.ndarray, bounds: np.ndarray, lengths: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """Hashes of every window of each length in ``lengths`` inside each text, and the text of each window."""
    prefix = _Prefix(units)
    owner_of_unit = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    text_stop = bounds[1:][owner_of_unit] if len(units) else np.zeros(0, dtype=np.int64)
    hashes, owners = [], []
    for length in lengths:
        starts = np.flatnonzero(np.arange(len(units)) + length <= text_stop)
        hashes.append(_mix(prefix.spans(starts, starts + length) ^ np.uint64(length)))
        owners.append(owner_of_unit[starts])
    if not hashes:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    return np.concatenate(hashes), np.concatenate(owners)


def _item_windows(units: np.ndarray, bounds: np.ndarray, n: int, min_units: int) -> tuple[np.ndarray, np.ndarray]:
    """Each text's ``n``-unit windows; a text shorter than ``n`` (and at least ``min_units``) as one window."""
    sizes = np.diff(bounds)
    full, owners = _windows(units, bounds, [n])
    short = np.flatnonzero((sizes < n) & (sizes >= min_units))
    if not len(short):
        return full, owners
    prefix = _Prefix(units)
    lengths = sizes[short]
    whole = _mix(prefix.spans(bounds[short], bounds[short] + lengths) ^ lengths.astype(np.uint64))
    return np.concatenate((full, whole)), np.concatenate((owners, short))


def word_grams(texts: Sequence[str], n: int, lengths: Iterable[int] | None = None, min_words: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Word ``n``-gram hashes of ``texts`` (prepared by :func:`word_text`) and the text each came from.

    With ``lengths``, windows of each of those lengths (the corpus side); without, the item side: ``n``-word
    windows, and the whole text for one shorter than ``n`` with at least ``min_words`` words.
    """
    units, bounds = _units_of_words(texts)
    if lengths is not None:
        return _windows(units, bounds, lengths)
    return _item_windows(units, bounds, n, max(min_words, 1))


def char_grams(texts: Sequence[str], n: int, lengths: Iterable[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Character ``n``-gram hashes of ``texts`` (already folded) and the text each came from; a text shorter
    than ``n`` characters gives none on the item side."""
    units, bounds = _codes(texts)
    return _windows(units, bounds, [n] if lengths is None else lengths)
