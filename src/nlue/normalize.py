"""Text normalisation applied to every text field before validation and deduplication.

Rules (documented in the README and the dataset card):

* Unicode NFC, so that precomposed and decomposed Devanagari (e.g. nukta forms) compare equal.
* Invisible characters with no linguistic role are removed: zero-width space, word
  joiner, byte-order mark, soft hyphen. ZWJ/ZWNJ are kept only *between two
  Devanagari characters*, where they select half-forms and conjuncts; anywhere else
  they are stray and removed.
* Every run of Unicode whitespace (incl. no-break space, tabs, newlines) becomes one
  space; leading and trailing space is stripped.
* An ASCII ``|`` written after Devanagari text as a stand-in for the danda becomes
  ``।`` (and ``||`` becomes ``॥``); real dandas are kept as they are.
* Devanagari digits (०-९) and ASCII digits are kept as written: converting them would
  change the text a model sees, and both occur in real Nepali text.
"""

from __future__ import annotations

import re
import unicodedata

_DEVANAGARI = "\u0900-\u097f\ua8e0-\ua8ff"
_ALWAYS_INVISIBLE = re.compile("[\u200b\u2060\ufeff\u00ad]")
# A joiner run with a non-Devanagari neighbour on either side is stray.
_STRAY_JOINER = re.compile(f"(?<![{_DEVANAGARI}])[\u200c\u200d]+|[\u200c\u200d]+(?![{_DEVANAGARI}])")
_WHITESPACE = re.compile(r"\s+")
_PIPE_DOUBLE_DANDA = re.compile(f"(?<=[{_DEVANAGARI}])\\s*\\|\\|")
_PIPE_DANDA = re.compile(f"(?<=[{_DEVANAGARI}])\\s*\\|")


def normalize_text(text: str) -> str:
    """Return ``text`` normalised by the rules in this module's docstring."""
    text = unicodedata.normalize("NFC", text)
    # Fast path for the common case. Invisible characters and joiners are format
    # characters and every whitespace character but " " is a control or separator, none
    # of them printable; so printable text without "|" needs at most its spaces tidied.
    # The result is what the full sequence of passes below gives.
    if text.isprintable() and "|" not in text:
        if "  " in text or text.startswith(" ") or text.endswith(" "):
            return " ".join(text.split())
        return text
    return _normalize_passes(text)


def _normalize_passes(text: str) -> str:
    """The rules one by one, on NFC text; a pass is skipped where its characters are absent."""
    if "\u200b" in text or "\u2060" in text or "\ufeff" in text or "\u00ad" in text:
        text = _ALWAYS_INVISIBLE.sub("", text)
    if "\u200c" in text or "\u200d" in text:
        text = _STRAY_JOINER.sub("", text)
    if "|" in text:
        text = _PIPE_DOUBLE_DANDA.sub("॥", text)
        text = _PIPE_DANDA.sub("।", text)
    # str.split() and the regex \s agree on what whitespace is (both use str.isspace),
    # so this equals _WHITESPACE.sub(" ", text).strip(), at a fraction of the cost.
    return " ".join(text.split())


def normalize_answer(word: str) -> str:
    """Normalise one GMET answer word: the text rules plus surrounding punctuation/dandas.

    Shared by the builder (answers stored in the dataset) and the GMET metric
    (comparing predictions), so both sides agree on what "the same word" means.
    """
    word = normalize_text(word)
    return word.strip(_ANSWER_STRIP).strip()


# Punctuation that may cling to a predicted word: ASCII and Unicode punctuation, dandas.
_ANSWER_STRIP = "".join(
    chr(c) for c in range(0x20, 0x3000) if unicodedata.category(chr(c)).startswith(("P", "Z")) or chr(c) in "।॥"
)
