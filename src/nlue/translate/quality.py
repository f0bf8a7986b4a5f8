"""The script filter: a translated row must be written in Devanagari, not left in English or another script.

The paper removed non-Nepali remnants and code-switching by automatic language detection.
A language identifier cannot tell Nepali from Hindi or Marathi in a short sentence (all
three are written in Devanagari), and what goes wrong in practice is a sentence left in
English, half translated, or answered in another script; so the test here is on scripts,
over the letters of all of a row's text fields together (a short field such as a brand
name kept in Latin letters does not sink its row):

* a letter of a script other than Devanagari and Latin (Cyrillic, Bengali, CJK, ...) rejects
  the row: no Nepali sentence holds one;
* a share of Devanagari letters below ``min_devanagari`` (default 0.8; vowel signs and the
  virama count as letters) rejects it as untranslated or code-switched;
* Latin words that remain in rows that pass (names, romanised terms, as the prompt allows)
  are counted, and the most frequent listed in the report, for reviewers to judge.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

DEFAULT_MIN_DEVANAGARI = 0.8
_LATIN_WORD = re.compile(r"[A-Za-z\u00C0-\u024F]+")
_SHOWN_WORDS = 20


def script_of(char: str) -> str | None:
    """``devanagari``, ``latin``, the Unicode name's script word (``CYRILLIC``...), or None for a non-letter."""
    code = ord(char)
    if 0x0900 <= code <= 0x097F or 0xA8E0 <= code <= 0xA8FF:
        category = unicodedata.category(char)
        return "devanagari" if category[0] in "LM" else None  # digits and the danda are not letters
    category = unicodedata.category(char)
    if category[0] not in "LM":
        return None
    name = unicodedata.name(char, "")
    if name.startswith("LATIN"):
        return "latin"
    if name.startswith("COMBINING"):
        return None  # an accent belongs to the letter before it, already counted
    return name.split(" ")[0] or "UNKNOWN"  # a vowel sign counts for its script, as Devanagari's do


@dataclass(frozen=True)
class ScriptProfile:
    letters: int
    devanagari: int
    latin: int
    other: Counter  # script -> letters

    @property
    def devanagari_share(self) -> float:
        return self.devanagari / self.letters if self.letters else 0.0


def profile(texts: Iterable[str]) -> ScriptProfile:
    counts: Counter = Counter()
    for text in texts:
        for char in text:
            script = script_of(char)
            if script is not None:
                counts[script] += 1
    other = Counter({k: v for k, v in counts.items() if k not in ("devanagari", "latin")})
    return ScriptProfile(sum(counts.values()), counts["devanagari"], counts["latin"], other)


def script_problem(fields: Mapping[str, str], min_devanagari: float = DEFAULT_MIN_DEVANAGARI) -> str | None:
    """Why a translated row fails the filter, or None when it passes."""
    found = profile(fields.values())
    if found.other:
        scripts = ", ".join(f"{name.lower()} ({n})" for name, n in found.other.most_common())
        return f"other script: letters of {scripts}"
    if found.devanagari_share < min_devanagari:
        return (
            f"untranslated: {found.devanagari_share:.0%} of the letters are Devanagari "
            f"(at least {min_devanagari:.0%} expected)"
        )
    return None


def latin_words(fields: Mapping[str, str]) -> list[str]:
    """The words in Latin letters left in a row's text fields, in order."""
    return [word for text in fields.values() for word in _LATIN_WORD.findall(text)]


@dataclass
class ScriptReport:
    """Counts over the rows that passed: how many still hold Latin words, and which words."""

    rows_with_latin: int = 0
    latin_words: Counter = field(default_factory=Counter)

    def add(self, fields: Mapping[str, str]) -> None:
        self.add_words(latin_words(fields))

    def add_words(self, words: Iterable[str]) -> None:
        """Count a passing row by its Latin words (:func:`latin_words`)."""
        words = list(words)
        if words:
            self.rows_with_latin += 1
            self.latin_words.update(words)

    def to_dict(self) -> dict[str, object]:
        return {
            "rows_with_latin_words": self.rows_with_latin,
            "most_frequent_latin_words": dict(self.latin_words.most_common(_SHOWN_WORDS)),
        }
