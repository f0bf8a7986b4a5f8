"""Stop sequences matched on each row's generated text, never on the tokenizer's vocabulary.

Why this exists: transformers' ``stop_strings`` (``StopStringCriteria``) first turns the whole
vocabulary into strings by decoding every token after an ASCII probe ("abcdef") and looking
for the probe in the result. On a vocabulary with no Latin letters (some Nepali community
models) or one that cannot spell the probe (a small WordPiece), the probe decodes to unknown
tokens, is not found, and generation ends with "substring not found" before its first token.
:class:`StopSequenceCriteria` needs nothing from the vocabulary: after each step it decodes a
row's *generated* tokens the way the final text is decoded (``tokenizer.decode(tokens,
skip_special_tokens=True)``, then :func:`nlue.lm.base.cut_at_stop`) and ends the row once that
text holds a stop sequence. Prompt tokens are never decoded, so a stop in the prompt ends nothing.

It decodes only a trailing window, made (by :class:`DecodeWindow`) long enough that it cannot
miss a stop sequence the full text newly holds:

* the window ends with the part of the text this step can change: the new token, or, where
  it is a ``<0x..>`` byte token, the whole run of byte tokens it ends, because a byte-fallback
  decoder turns a run into characters only if the whole run is valid UTF-8 (else one U+FFFD
  per byte), so one new byte can bring a stop anywhere in that run into the text;
* before that come tokens worth at least the longest stop's UTF-8 length, each counted for
  the fewest bytes it can add to the text: its characters but spaces (``▁``, ``Ġ``, `` ``,
  which a decoder or ``clean_up_tokenization_spaces`` may drop) and a ``##`` prefix; one for
  a byte token; nothing for special and added tokens. A stop this step brought begins fewer
  bytes than that before the changed part, so the counted tokens hold at least one byte in
  front of it, and what decoders do to a window's first token (Metaspace and Llama's chain
  drop its leading space, WordPiece keeps its ``##``) stays in front of the stop;
* a window never starts on a ``<0x..>`` continuation byte, so a valid run is cut at a
  character boundary and decodes to the same characters as the whole run does. Byte-level
  BPE needs no such care: its decoder turns stray continuation bytes into U+FFFD one by one
  and is back in step at the next character, which is at the stop's start at the latest.

A window hit is confirmed by decoding all the row's tokens, so text the window's first tokens
decode differently can never end a row early: a row ends at exactly the first step where its
full text holds a stop sequence (``tests/test_lm_stops.py`` checks both against full decoding on
random token sequences for six kinds of tokenizer). Rows are decoded whole every step
(slower, never wrong) where the rules above do not hold: a decoder step other than ByteLevel,
Metaspace, WordPiece, ByteFallback, Fuse, a space Strip or a one-character Replace; and
transformers' ``clean_up_tokenization_spaces`` on a non-BPE tokenizer, whose text-wide
``" ' "`` -> ``"'"`` lets a new token take out the space *before* it (``x ' s '`` + `` s``
gives ``x's's``, a new ``'s'`` that ends before the new token) and whose replacements run
on differently from a window's start.

``import nlue.lm.stops`` stays light; transformers and torch load when the class is first used.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

logger = logging.getLogger(__name__)

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_SPACES = frozenset(" ▁Ġ")  # what a decoder or clean-up may drop, so never counted towards the window
_WINDOWED = {"ByteLevel", "Metaspace", "WordPiece", "ByteFallback", "Fuse", "Strip", "Replace", "Sequence"}


def _decoder_spec(tokenizer: Any) -> dict[str, Any] | None:
    """The backend decoder as JSON; None where the tokenizer has none; {} where it cannot be read."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return {}
    decoder = backend.decoder
    if decoder is None:
        return None
    try:
        return json.loads(decoder.__getstate__())
    except (AttributeError, TypeError, ValueError):
        return {}


def _parts(spec: dict[str, Any]) -> Iterable[dict[str, Any]]:
    yield spec
    for inner in spec.get("decoders") or ():
        yield from _parts(inner)


def _windowable(spec: dict[str, Any] | None) -> bool:
    """Whether every decoder step is one the window rules hold for (see the module docstring)."""
    if spec is None:  # no decoder: tokens joined with spaces, each token's text its own
        return True
    for part in _parts(spec):
        kind = part.get("type")
        if kind not in _WINDOWED:
            return False
        if kind == "Strip" and part.get("content") not in _SPACES:
            return False  # stripping a letter would take away text the window counts on
        if kind == "Replace":
            pattern, content = (part.get("pattern") or {}).get("String"), part.get("content") or ""
            if pattern is None or len(pattern) != 1:
                return False  # a regex or a longer pattern could match across tokens
            if pattern not in _SPACES and all(ch in _SPACES for ch in content):
                return False  # a counted character would turn into nothing, or spaces
    return True


def _cleans_text(tokenizer: Any) -> bool:
    """Whether ``decode`` runs transformers' text-wide ``clean_up_tokenization`` (never on BPE, unless forced)."""
    if not getattr(tokenizer, "clean_up_tokenization_spaces", False):
        return False
    model = type(getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)).__name__
    return model != "BPE" or bool(
        getattr(tokenizer, "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", False)
    )


class DecodeWindow:
    """Where to start decoding a row's tokens to see every stop its full text can newly hold; one per tokenizer."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        spec = _decoder_spec(tokenizer)
        self.windowed = _windowable(spec) and not _cleans_text(tokenizer)
        if not self.windowed:
            logger.info("stop sequences: no window rule for this tokenizer (decoder %s); rows are decoded whole", spec)
        self.prefix = next((p.get("prefix", "##") for p in _parts(spec or {}) if p.get("type") == "WordPiece"), "##")
        added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        self._transparent = set(tokenizer.all_special_ids) | set(added)  # skipped on decoding, or text of their own
        self._weight: dict[int, int] = {}
        self._byte: dict[int, int | None] = {}

    def decode(self, tokens: Sequence[int]) -> str:
        """The text as the caller's final text is decoded."""
        return self.tokenizer.decode(list(tokens), skip_special_tokens=True)

    def _raw(self, token: int) -> str | None:
        raw = self.tokenizer.convert_ids_to_tokens(token)
        return raw if isinstance(raw, str) else None

    def byte(self, token: int) -> int | None:
        """The byte a ``<0x..>`` token stands for (any tokenizer; where it is no byte token this only widens)."""
        if token not in self._byte:
            raw = None if token in self._transparent else self._raw(token)
            found = _BYTE_TOKEN.fullmatch(raw) if raw else None
            self._byte[token] = int(found.group(1), 16) if found else None
        return self._byte[token]

    def weight(self, token: int) -> int:
        """The fewest UTF-8 bytes ``token`` adds to the decoded text where it is not the first token."""
        if token not in self._weight:
            raw = None if token in self._transparent else self._raw(token)
            if raw is None:
                weight = 0
            elif (byte := self.byte(token)) is not None:
                weight = 0 if byte == 0x20 else 1
            else:
                weight = sum(ch not in _SPACES for ch in raw.removeprefix(self.prefix))
            self._weight[token] = weight
        return self._weight[token]

    def _continuation(self, token: int) -> bool:
        byte = self.byte(token)
        return byte is not None and 0x80 <= byte <= 0xBF

    def start(self, tokens: Sequence[int], need: int) -> int:
        """The first index of the window for a stop of at most ``need`` UTF-8 bytes, the last token just added."""
        if not self.windowed or not tokens:
            return 0
        start = len(tokens) - 1
        if self.byte(tokens[start]) is not None:  # the whole final run of byte tokens, looking past skipped tokens
            i = start - 1
            while i >= 0 and (tokens[i] in self._transparent or self.byte(tokens[i]) is not None):
                start = i if self.byte(tokens[i]) is not None else start
                i -= 1
        counted = 0
        while start > 0 and counted < need:
            start -= 1
            counted += self.weight(tokens[start])
        while start > 0 and (tokens[start] in self._transparent or self._continuation(tokens[start])):
            start -= 1
        return start


class _StopCheck:
    """The row bookkeeping and the check, apart from transformers (see :class:`StopSequenceCriteria`)."""

    def __init__(
        self, window: DecodeWindow, stops: Sequence[str], prompt_width: int, eos_ids: Iterable[int] = ()
    ) -> None:
        if not stops or any(not s for s in stops):
            raise ValueError(f"stop sequences must be non-empty strings, got {stops!r}")
        self.window = window
        self.stops = tuple(stops)
        # a stop holding U+FFFD could match the text decoders put for broken bytes: no window reasoning for it
        self.need = None if any("\ufffd" in s for s in stops) else max(len(s.encode("utf-8")) for s in stops)
        self.prompt_width = prompt_width
        self.eos_ids = frozenset(eos_ids)
        self.generated: list[list[int]] = []
        self.stopped_at: list[int | None] = []  # per row: how many tokens it had generated when its text held a stop
        self._ended: list[bool] = []  # stopped, or gave EOS: no more checking
        self._seen = prompt_width

    def _holds_stop(self, text: str) -> bool:
        return any(s in text for s in self.stops)

    def holds_stop(self, tokens: Sequence[int]) -> bool:
        """Whether the decoded ``tokens`` hold a stop sequence, decoding only a window where that is enough."""
        start = 0 if self.need is None else self.window.start(tokens, self.need)
        if not self._holds_stop(self.window.decode(tokens[start:])):
            return False
        return start == 0 or self._holds_stop(self.window.decode(tokens))

    def update(self, new_columns: list[list[int]]) -> list[bool]:
        """Take each row's tokens since the last call; the rows that have stopped, now or before."""
        if not self.generated:
            self.generated = [[] for _ in new_columns]
            self.stopped_at = [None] * len(new_columns)
            self._ended = [False] * len(new_columns)
        for row, fresh in enumerate(new_columns):
            if self._ended[row]:
                continue
            tokens = self.generated[row]
            for token in fresh:
                tokens.append(token)
                if token in self.eos_ids:  # the model ended the row itself; what follows is padding
                    self._ended[row] = True
                elif self.holds_stop(tokens):
                    self.stopped_at[row] = len(tokens)
                    self._ended[row] = True
                if self._ended[row]:
                    break
        return [n is not None for n in self.stopped_at]


@cache
def _criteria_class() -> type:
    import torch
    from transformers import StoppingCriteria

    class StopSequenceCriteria(_StopCheck, StoppingCriteria):
        """Ends a row once its generated text holds one of ``stops``; ``stopped_at`` says after how many tokens.

        Give it the width of the (left-padded) prompt batch, so that only generated tokens are
        read, and the EOS ids, so that a row the model ended is left alone. One instance per
        ``generate`` call.
        """

        def __call__(self, input_ids: Any, scores: Any = None, **kwargs: Any) -> Any:
            fresh = input_ids[:, self._seen :].tolist()
            self._seen = input_ids.shape[1]
            return torch.tensor(self.update(fresh), dtype=torch.bool, device=input_ids.device)

    StopSequenceCriteria.__module__ = __name__
    return StopSequenceCriteria


def __getattr__(name: str) -> Any:
    if name == "StopSequenceCriteria":  # built on first use, so that importing this module loads no torch
        return _criteria_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
