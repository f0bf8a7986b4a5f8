"""neDIOM's position field: S2 with the idiom's span wrapped in ``###`` markers, read as character offsets.

The paper stores where the idiom sits as a copy of S2 with the inflected surface form
between two ``###`` markers (``खर्चले ###डाँडो काट्न### सक्छ।``). We read it into offsets
``[start, end)`` of the normalised S2, by these rules:

* the field holds exactly two markers (one span); a run of four or more ``#`` is refused
  rather than guessed at;
* the field without its markers must be S2, compared with all whitespace removed (so a
  marker typed next to a word, ``खर्चले###डाँडो``, or inside a space still reads);
* the span is the marked text with surrounding spaces dropped, and must not be empty;
  its offsets count the same non-space characters in S2, so they hold for S2 as stored.

:func:`mark_position` writes the field back from S2 and the offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nlue.errors import NlueError

MARKER = "###"
_HASH_RUN = re.compile(r"#{4,}")


@dataclass(frozen=True)
class Span:
    """The idiom's span in S2: character offsets ``[start, end)`` and the text between them."""

    start: int
    end: int
    text: str


def _non_space_offsets(text: str) -> list[int]:
    """The offsets of the non-space characters of ``text``, in order."""
    return [i for i, char in enumerate(text) if not char.isspace()]


def parse_position(position: str, sentence: str) -> Span | str:
    """The span the ``###`` markers of ``position`` give in ``sentence`` (S2), or why there is none."""
    run = _HASH_RUN.search(position)
    if run:
        return f"a run of {len(run.group())} '#' where the span's markers are '###'"
    markers = position.count(MARKER)
    if markers != 2:
        spans = "no span" if markers == 0 else f"{markers} markers"
        return f"expected exactly one span marked ###...### (two markers); found {spans}"
    before, marked, _after = position.split(MARKER)
    if "".join(position.replace(MARKER, "").split()) != "".join(sentence.split()):
        return "the position field without its ### markers is not S2 (compared ignoring spaces)"
    if not marked.strip():
        return "the marked span is empty"
    offsets = _non_space_offsets(sentence)
    first = len(_non_space_offsets(before))
    last = first + len(_non_space_offsets(marked)) - 1
    start, end = offsets[first], offsets[last] + 1
    return Span(start, end, sentence[start:end])


def mark_position(sentence: str, start: int, end: int) -> str:
    """S2 with ``[start, end)`` wrapped in ``###`` markers (the paper's position field)."""
    if not 0 <= start < end <= len(sentence):
        raise NlueError(f"span [{start}, {end}) is not inside a sentence of {len(sentence)} characters")
    return f"{sentence[:start]}{MARKER}{sentence[start:end]}{MARKER}{sentence[end:]}"
