"""Which texts a language profile leaves as they are, as RE2 patterns for normalising a column in bulk.

The columnar builder (:mod:`nlue.data.columnar`) normalises a batch with Arrow kernels, and must
give exactly what :meth:`LanguageProfile.normalize` gives. It may only do so for texts whose
normalised form a pattern can tell: this module derives, from a profile's declaration, the
characters that no rule of the profile touches in any arrangement (:func:`bulk_characters`):

* printable ASCII and the profile's ``bulk_script`` (default: its script), except
* what a rule acts on: the profile's removed, folded and compatibility characters, joiners,
  emoji selectors, ``|`` for a danda profile; and
* what NFC could change next to a neighbour: one NFC replaces, one that composes with the
  character before it (the second half of a canonical composition, such as the nukta or a vowel
  sign that fuses with a consonant, and the Hangul vowel and final jamo), and combining marks of
  more than one combining class (NFC would reorder two of them): only the marks of the lowest
  class stay (the virama, in an Indic script).

A text of those characters, with no space at either end and no two in a row, is its own
normalised form; a text of them (and pipes, for a danda profile) whose only untidiness is spaces
and one run of one or two pipes is normalised by trimming, collapsing spaces and the two pipe
rewrites (:class:`BulkRules`). Everything else goes to the row path.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from nlue.text.rules import JOINERS, SELECTORS, LanguageProfile, char_class, expand, fast_path_triggers

_ASCII = frozenset(map(chr, range(0x20, 0x7F)))
# The characters the near-duplicate key folds byte-wise (nlue.data.text_keys): ASCII and the Devanagari block.
_BYTE_FOLDABLE = _ASCII | frozenset(map(chr, range(0x0900, 0x0980)))
_HANGUL_SECOND = frozenset(map(chr, [*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)]))  # V and T jamo


def _re2(code: int) -> str:
    return f"\\x{{{code:04X}}}"


@functools.cache
def _composes_after() -> frozenset[str]:
    """Characters NFC fuses with the character before them: second halves of primary composites."""
    seconds = set(_HANGUL_SECOND)
    for code in range(0x30000):  # no canonical decomposition lies beyond plane 2
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            first, second = (chr(int(part, 16)) for part in parts)
            if unicodedata.normalize("NFC", first + second) == chr(code):
                seconds.add(second)
    return frozenset(seconds)


def bulk_characters(profile: LanguageProfile) -> frozenset[str]:
    """The characters ``profile`` leaves as they are wherever they stand (the module docstring's rule)."""
    script = profile.script if profile.bulk_script is None else profile.bulk_script
    touched = (
        fast_path_triggers(profile)
        | {key[0] for key in (*profile.folds, *profile.word_start_folds)}
        | expand(profile.removed)
        | expand(profile.compatibility)
        | expand(JOINERS + SELECTORS)
        | _composes_after()
    )
    if profile.dandas:
        touched |= {"|"}
    candidates = {
        char
        for char in (_ASCII | expand(script)) - touched
        if char.isprintable() and unicodedata.normalize("NFC", char) == char and (char == " " or not char.isspace())
    }
    # NFC reorders two adjacent marks of different combining classes: marks of one class only may stay,
    # the lowest (in an Indic script, the virama's 9, which sits inside words; vowel signs are class 0).
    classes = {unicodedata.combining(char) for char in candidates} - {0}
    kept_class = min(classes, default=0)
    return frozenset(char for char in candidates if unicodedata.combining(char) in (0, kept_class))


@dataclass(frozen=True)
class BulkRules:
    """The RE2 patterns of :mod:`nlue.data.columnar` for one profile (see the module docstring)."""

    needs_row_path: str  # matches a text that is not its own normalised form (or is empty)
    not_tidy_in_bulk: str  # matches a text of those that the tidy-up cannot normalise
    pipe_rewrites: tuple[tuple[str, str], ...]  # the danda rules on a trimmed text with one run of pipes
    beyond_byte_fold: bool  # rows passed in bulk may hold characters the near-duplicate key folds in Python


@functools.cache
def bulk_rules(profile: LanguageProfile) -> BulkRules:
    safe = bulk_characters(profile)
    needs_row_path = f"[^{char_class(safe, _re2)}]|^ | $|  |^$"
    if profile.dandas:
        # Texts the tidy-up normalises exactly: the characters above and "|", with at most one run of
        # pipes, of one or two (a third pipe, or a second run, goes to the row path).
        not_tidy = f"[^{char_class(safe | {'|'}, _re2)}]|\\|\\|\\||\\|[^|]+\\|"
        script = profile.script if profile.bulk_script is None else profile.bulk_script
        letters = char_class(expand(script) & expand(profile.script), _re2)
        # After a script character (and a space) "||" becomes "॥" and "|" "।"; elsewhere pipes stay as written.
        rewrites: tuple[tuple[str, str], ...] = ((f"([{letters}]) ?\\|\\|", "\\1॥"), (f"([{letters}]) ?\\|", "\\1।"))
    else:
        not_tidy = f"[^{char_class(safe, _re2)}]"
        rewrites = ()
    return BulkRules(needs_row_path, not_tidy, rewrites, not safe <= _BYTE_FOLDABLE)
