"""Text normalisation applied to every text field before validation and deduplication.

Rules (documented in docs/guides/build.md and the dataset card):

* Unicode NFC, so that precomposed and decomposed Devanagari (e.g. nukta forms) compare equal.
* Invisible characters with no linguistic role are removed: zero-width space, word
  joiner, byte-order mark, soft hyphen.
* Control characters are removed (NUL, the other C0 controls, DEL and the C1 controls),
  except the ones that are whitespace (tab, line breaks, U+001C-U+001F, U+0085), which
  become spaces by the whitespace rule below. No one's text holds a NUL: it comes from
  a binary tool or a file read in the wrong encoding.
* Bidirectional formatting characters are removed: the marks U+200E, U+200F, U+061C,
  the embeddings and overrides U+202A-U+202E and the isolates U+2066-U+2069. They only
  steer how a line is displayed (an override U+202E shows the text after it reversed,
  so two texts that look alike differ); Nepali needs none. A text made only of them is
  empty, and rejected as such.
* A single ZWJ or ZWNJ is kept only *between two Devanagari letters or a letter and the
  virama* (U+094D), where it selects a half-form, an explicit virama or the eyelash
  ra, and a single ZWJ *between two emoji* (an emoji sequence such as 🏳️‍🌈 or 👩‍🌾,
  where it joins the parts into one picture); a run of two or more joiners, and a
  joiner next to a vowel sign, a danda, a digit or anything else, is stray and removed.
* Every run of Unicode whitespace (incl. no-break space, tabs, newlines) becomes one
  space; leading and trailing space is stripped.
* An ASCII ``|`` written after Devanagari text (or after another such ``|``, which is
  about to become a danda) as a stand-in for the danda becomes ``।`` (and ``||`` becomes
  ``॥``); real dandas are kept as they are. Pipes after anything else stay pipes
  (``PrimeHD || माओ`` is kept as written). Normalising twice changes nothing.
* Devanagari digits (०-९) and ASCII digits are kept as written: converting them would
  change the text a model sees, and both occur in real Nepali text.
* The emoji variation selectors U+FE0F (emoji style) and U+FE0E (text style) are kept
  only right after an emoji they can apply to, and removed anywhere else (scraped text
  often leaves them after Devanagari, a space or punctuation, where they do nothing but
  make two equal sentences differ). An emoji here is a character with the Unicode
  property Extended_Pictographic in the Basic Multilingual Plane (❤, ☺, ✔, ©, ™, ‼, ...),
  or any character from U+1F000 to U+1FFFF (the emoji blocks, including flags' letters,
  skin-tone modifiers and code points reserved for future emoji); a digit, ``#`` or ``*``
  counts only as the base of a keycap, i.e. when the selector is followed by U+20E3
  (``1️⃣``). A selector after a selector is removed too.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

_DEVANAGARI = "\u0900-\u097f\ua8e0-\ua8ff"
# Control characters that are not whitespace (those become spaces), and the bidirectional
# formatting characters: removed in one pass (see the module docstring).
_CONTROLS = "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_REMOVED = re.compile(f"[\u200b\u2060\ufeff\u00ad{_CONTROLS}{_BIDI}]")
_JOINER_RUN = re.compile("[\u200c\u200d]+")
_WHITESPACE = re.compile(r"\s+")
# A run of pipes (each perhaps after spaces) that starts right after Devanagari: the whole run
# becomes dandas at once ("क| |" -> "क।।"), so that normalising again changes nothing. A run after
# anything else ("PrimeHD || माओ") is not a danda and stays as written.
_PIPE_RUN = re.compile(f"(?<=[{_DEVANAGARI}])(?:\\s*\\|)+")
_PIPE_IN_RUN = re.compile(r"\s*(\|\|?)")
_VARIATION_SELECTORS = "\ufe0e\ufe0f"
# Extended_Pictographic characters of the BMP (Unicode emoji-data; generated once with the
# `regex` module's \p{Extended_Pictographic}, kept literal so that normalisation needs no
# dependency), then the supplementary emoji blocks whole.
_EMOJI_BASE = (
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9-\u21aa\u231a-\u231b\u2328\u23cf\u23e9-\u23f3"
    "\u23f8-\u23fa\u24c2\u25aa-\u25ab\u25b6\u25c0\u25fb-\u25fe\u2600-\u2604\u260e\u2611\u2614-\u2615"
    "\u2618\u261d\u2620\u2622-\u2623\u2626\u262a\u262e-\u262f\u2638-\u263a\u2640\u2642\u2648-\u2653"
    "\u265f-\u2660\u2663\u2665-\u2666\u2668\u267b\u267e-\u267f\u2692-\u2697\u2699\u269b-\u269c"
    "\u26a0-\u26a1\u26a7\u26aa-\u26ab\u26b0-\u26b1\u26bd-\u26be\u26c4-\u26c5\u26c8\u26ce-\u26cf\u26d1"
    "\u26d3-\u26d4\u26e9-\u26ea\u26f0-\u26f5\u26f7-\u26fa\u26fd\u2702\u2705\u2708-\u270d\u270f\u2712"
    "\u2714\u2716\u271d\u2721\u2728\u2733-\u2734\u2744\u2747\u274c\u274e\u2753-\u2755\u2757\u2763-\u2764"
    "\u2795-\u2797\u27a1\u27b0\u27bf\u2934-\u2935\u2b05-\u2b07\u2b1b-\u2b1c\u2b50\u2b55\u3030\u303d\u3297"
    "\u3299\U0001f000-\U0001ffff"
)
_KEYCAP_BASE = "0-9#*"
# A selector is orphaned when what precedes it is neither an emoji nor a keycap base, or
# when it follows a keycap base but no keycap mark (U+20E3) follows it. The pattern opens
# with the selector itself, so that re skips to selectors instead of testing a lookbehind
# at every character (~6x faster on a line with one emoji).
_ORPHAN_SELECTOR = re.compile(
    f"[{_VARIATION_SELECTORS}](?:(?<![{_EMOJI_BASE}{_KEYCAP_BASE}].)|(?<=[{_KEYCAP_BASE}].)(?!\u20e3))",
    flags=re.DOTALL,
)
_VIRAMA = "\u094d"
_EMOJI_CHAR = re.compile(f"[{_EMOJI_BASE}]")
_EMOJI_END = re.compile(f"[{_EMOJI_BASE}\ufe0f]")  # an emoji, or the emoji-style selector that ends one


def _joins_devanagari(char: str) -> bool:
    """A Devanagari letter or the virama: what a joiner may stand beside (not a vowel sign, danda or digit)."""
    if char == _VIRAMA:
        return True
    code = ord(char)
    in_block = 0x0900 <= code <= 0x097F or 0xA8E0 <= code <= 0xA8FF
    return in_block and unicodedata.category(char)[0] == "L"


def _joiner_or_nothing(match: re.Match[str]) -> str:
    """One joiner is kept between Devanagari letters (or a letter and the virama), or one ZWJ between
    two emoji; a longer run, or a joiner anywhere else, is dropped."""
    joiner = match.group()
    if len(joiner) != 1:
        return ""
    text, start, end = match.string, match.start(), match.end()
    before, after = text[start - 1 : start], text[end : end + 1]
    if not before or not after:
        return ""
    if _joins_devanagari(before) and _joins_devanagari(after) and not before == after == _VIRAMA:
        return joiner
    if joiner == "\u200d" and _EMOJI_END.match(before) and _EMOJI_CHAR.match(after):
        return joiner
    return ""


def _dandas(match: re.Match[str]) -> str:
    """A run of pipes after Devanagari as dandas: ``||`` (no space between) is ``॥``, a lone ``|`` is ``।``."""
    return "".join("॥" if len(pipes.group(1)) == 2 else "।" for pipes in _PIPE_IN_RUN.finditer(match.group()))


def normalize_text(text: str) -> str:
    """Return ``text`` normalised by the rules in this module's docstring."""
    text = unicodedata.normalize("NFC", text)
    # Fast path for the common case. Invisible characters and joiners are format
    # characters and every whitespace character but " " is a control or separator, none
    # of them printable; so printable text without "|" needs at most its orphaned
    # variation selectors removed (they are nonspacing marks, hence printable) and its
    # spaces tidied. The result is what the full sequence of passes below gives.
    if text.isprintable() and "|" not in text:
        if "\ufe0f" in text or "\ufe0e" in text:
            text = _ORPHAN_SELECTOR.sub("", text)
        if "  " in text or text.startswith(" ") or text.endswith(" "):
            return " ".join(text.split())
        return text
    return _normalize_passes(text)


def _normalize_passes(text: str) -> str:
    """The rules one by one, on NFC text; a pass is skipped where its characters are absent."""
    text = _REMOVED.sub("", text)
    # Selectors before joiners: a ZWJ is kept only between emoji, so what it sits next to must be final.
    if "\ufe0f" in text or "\ufe0e" in text:
        text = _ORPHAN_SELECTOR.sub("", text)
    if "\u200c" in text or "\u200d" in text:
        text = _JOINER_RUN.sub(_joiner_or_nothing, text)
    if "|" in text:
        text = _PIPE_RUN.sub(_dandas, text)
    # str.split() and the regex \s agree on what whitespace is (both use str.isspace),
    # so this equals _WHITESPACE.sub(" ", text).strip(), at a fraction of the cost.
    text = " ".join(text.split())
    # A removed character may have stood between two combining marks, which NFC then
    # reorders: normalise once more so that normalising twice changes nothing.
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


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
