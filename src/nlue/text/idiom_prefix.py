"""The truncated-prefix matcher: finding an idiom in its inflected forms (neDIOM's mining rule).

Idioms are listed in citation form (verbs in the ``-नु`` gerund) but inflect in running
text, so the paper searched for a *truncated prefix*: the first word, a space, and the
first letter of the second word (``नाक ख`` for नाक खुम्च्याउनु). Our rule, for idioms of any
length (2-4 words in the paper):

* **Every word but the last is matched in full** and the **last word is cut to its first
  letter**. For two words this is exactly the paper's rule; for longer idioms the words
  before the verb are the fixed part (``इन्तु न चिन्तु हुनु`` -> ``इन्तु न चिन्तु ह``). The paper
  says only that longer idioms were handled "similarly".
* **A letter** is a base consonant or independent vowel with its nukta (``ड़`` is ड + nukta
  after NFC: one letter, never cut in half). When the base is followed by a virama the
  letter is the whole conjunct (``प्र``, ``क्ष``), since a half form writes another letter.
  Vowel signs, candrabindu, anusvara and visarga are *not* part of it: they change under
  inflection (दिनु -> देऊ), which is why the paper cut before them (``ख``, not ``खु``).
* **In the text**, the match starts at a word boundary, the full words must be whole
  words separated by spaces or tabs (not a line break), and the cut letter must not
  continue as another letter: ``आकाशको फ`` does not match ``आकाशको फ्यान`` (फ followed by a
  virama is the conjunct फ्य) nor ``ड`` match ``ड़``. Any vowel sign or further letters may
  follow (``नाक खुम्च्याएर``).
* **Suppletive verbs** (our addition, on by default): हुनु and जानु change their first
  letter when inflected (छ, थियो, भयो; गयो), so as the last word they match any of
  ह/छ/थ/भ and ज/ग. ``suppletive=False`` gives the paper's single letter.

The span a match marks runs from the idiom's first word to the end of the word holding
the cut letter: the inflected surface form the paper's position field marks
(``###डाँडो काट्न###``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from nlue.errors import NlueError

NUKTA = "\u093c"
VIRAMA = "\u094d"
JOINERS = "\u200c\u200d"
# Letters, marks and digits of the Devanagari block (the dandas U+0964/U+0965 excepted), and the joiners.
WORD_CHARS = "\u0900-\u0963\u0966-\u097f\u200c\u200d"
_CONSONANT = re.compile("[\u0915-\u0939\u0958-\u095f\u0978-\u097f]")
_BASE = re.compile("[\u0904-\u0939\u0958-\u0961\u0972-\u097f]")
_WORD_BOUNDARY_BEFORE = rf"(?<![\w{WORD_CHARS}])"
_GAP = r"[^\S\n]+"  # spaces and tabs; a line break ends a sentence (see nlue.idioms.sentences)
_REST_OF_WORD = rf"[\w{WORD_CHARS}]*"

# Verbs whose inflected forms begin with another letter than the citation form.
SUPPLETIVE_INITIALS: Mapping[str, tuple[str, ...]] = MappingProxyType({"हुनु": ("ह", "छ", "थ", "भ"), "जानु": ("ज", "ग")})


def first_letter(word: str) -> str:
    """The first letter of ``word`` by the module docstring's rule (a conjunct is one letter)."""
    if not word:
        raise NlueError("an empty word has no first letter")
    if not _BASE.match(word):
        return word[0]  # not Devanagari (a digit, a Latin letter): the first character
    base, end = 0, _after_nukta(word, 1)
    while _CONSONANT.match(word[base]) and word[end : end + 1] == VIRAMA:
        end += 1  # the virama, then any joiner choosing the half form
        while end < len(word) and word[end] in JOINERS:
            end += 1
        if end >= len(word) or not _CONSONANT.match(word[end]):
            break
        base, end = end, _after_nukta(word, end + 1)  # the conjunct's next consonant
    return word[:end]


def _after_nukta(word: str, end: int) -> int:
    while end < len(word) and word[end] == NUKTA:
        end += 1
    return end


def idiom_words(idiom: str) -> tuple[str, ...]:
    words = tuple(idiom.split())
    if len(words) < 2:
        raise NlueError(f"idiom {idiom!r}: the truncated-prefix rule needs at least two words, found {len(words)}")
    return words


@dataclass(frozen=True)
class IdiomPattern:
    """The compiled truncated prefix of one idiom; see the module docstring."""

    idiom: str
    prefix: str  # the paper-style search string, e.g. "नाक ख"
    letters: tuple[str, ...]  # the cut word's first letter, and its suppletive alternatives
    regex: re.Pattern[str]

    @property
    def first_word(self) -> str:
        return self.idiom.split()[0]

    def match_at(self, text: str, start: int) -> tuple[int, int] | None:
        """The marked span (start, end) when the idiom's prefix matches at ``start``; None otherwise."""
        found = self.regex.match(text, start)
        return (found.start(), found.end()) if found else None

    def find_all(self, text: str) -> Iterator[tuple[int, int]]:
        """Every marked span in ``text``, left to right, not overlapping."""
        for found in self.regex.finditer(text):
            yield found.start(), found.end()


@functools.lru_cache(maxsize=4096)  # the builder checks every row's span against its idiom's pattern
def compile_idiom(idiom: str, suppletive: bool = True) -> IdiomPattern:
    """The truncated-prefix pattern of ``idiom`` (citation form, words separated by spaces)."""
    words = idiom_words(idiom)
    last = words[-1]
    letters = (first_letter(last),)
    if suppletive and last in SUPPLETIVE_INITIALS:
        letters = tuple(dict.fromkeys((*letters, *SUPPLETIVE_INITIALS[last])))
    full = _GAP.join(re.escape(word) for word in words[:-1])
    alternatives = "|".join(re.escape(letter) for letter in sorted(letters, key=len, reverse=True))
    # After the cut letter: no nukta or virama (that would be another letter), then the rest of its word.
    pattern = rf"{_WORD_BOUNDARY_BEFORE}{full}{_GAP}(?:{alternatives})(?![{NUKTA}{VIRAMA}]){_REST_OF_WORD}"
    return IdiomPattern(idiom, " ".join((*words[:-1], letters[0])), letters, re.compile(pattern))


def prefix_matches(idiom: str, text: str, start: int, suppletive: bool = True) -> bool:
    """Whether ``text`` at ``start`` begins with the idiom's truncated prefix (the position field's check)."""
    try:
        pattern = compile_idiom(idiom, suppletive)
    except ValueError:
        return False
    return pattern.match_at(text, start) is not None
