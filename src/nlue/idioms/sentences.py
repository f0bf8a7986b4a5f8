"""Sentence splitting for mined contexts: our documented rule, no extra library.

The paper split its documents with the Indic NLP Library; we use a rule of our own so
that mining needs no extra dependency and its output is the same everywhere:

1. A document is split into lines first: a line break always ends a sentence (web text
   puts headlines, list items and captions on lines of their own, without a danda).
2. Each line is normalised with the builder's rules (:func:`nlue.text.normalize.normalize_text`:
   NFC, invisible characters, an ASCII ``|`` after Devanagari read as a danda), so mined
   sentences are what ``nlue build`` would store.
3. A sentence ends after a run of terminators, the danda ``।``, the double danda ``॥``, a
   question mark ``?`` or ``？`` or an exclamation mark ``!``, together with any closing
   quotes or brackets right after them (``…गयो।”``).
4. The full stop ``.`` is **not** a terminator: Nepali abbreviations use it (``डा.``, ``नेकपा.``
   and initials), and Nepali prose ends sentences with a danda.
5. Sentences are stripped of surrounding spaces; empty ones are dropped.
"""

from __future__ import annotations

import re

from nlue.text.normalize import normalize_text

TERMINATORS = "।॥?？!"
_CLOSERS = "\"'”’»)]}"
_SENTENCE_END = re.compile(rf"[{re.escape(TERMINATORS)}]+[{re.escape(_CLOSERS)}]*")


def split_sentences(document: str) -> list[str]:
    """The sentences of ``document`` in order, by the module docstring's rule."""
    sentences: list[str] = []
    for line in document.splitlines():
        text = normalize_text(line)
        if not text:
            continue
        start = 0
        for end in _SENTENCE_END.finditer(text):
            piece = text[start : end.end()].strip()
            if piece:
                sentences.append(piece)
            start = end.end()
        tail = text[start:].strip()
        if tail:
            sentences.append(tail)
    return sentences
