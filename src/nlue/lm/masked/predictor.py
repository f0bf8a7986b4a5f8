"""Whole-word mask filling with any masked language model, scored by left-to-right PLL.

How a word is scored
--------------------
The dataset's ``[MASK]`` placeholder stands for one whole word. A candidate word ``w``
is put in its place and the sentence tokenised; the tokens that cover ``w`` (plus the
space before it, so byte-level BPE ``Ġ`` and SentencePiece ``▁`` pieces belong to the
word) are its ``n`` pieces ``p_1 .. p_n``; the others are the context ``L`` and ``R``.
The tokenizer's own mask token (``[MASK]``, ``<mask>``, ...) is written at the piece
positions by id, so any fill-mask checkpoint works whatever its mask string.

The word's log-likelihood is the "PLL-word-l2r" pseudo-log-likelihood of Kauf & Ivanova
(2023, *A Better Way to Do Masked Language Model Scoring*)::

    PLL(w) = sum_{i=1..n} log p( p_i | L, p_1 .. p_{i-1}, [MASK] x (n - i + 1), R )

the piece being scored and every piece to its right are masked, the pieces to its left
are filled in. Unlike the original PLL (mask one piece, fill all others), a piece can
not be "read off" from its own later pieces, so multi-piece words are not over-scored;
and the first factor is the probability under ``n`` masks, so the score is the model's
left-to-right (chain rule) probability of the whole word. ``n`` forward passes per
word, the first shared by every word of the same length.

Length fairness: candidates of different lengths are compared by
``PLL(w) / n ** length_alpha``. The default ``length_alpha = 1`` is the mean
log-probability per piece (a geometric mean): a three-piece word is neither punished
for needing three factors (as the raw sum would) nor rewarded beyond its pieces'
typical probability. ``length_alpha = 0`` ranks by the raw joint log-likelihood.
Known trade-off: under ``n`` masks the model knows more pieces follow, so later pieces
of a word are often easy; with the mean, a greedy completion can ride on a strong first
piece (a weak model proposes agglutinated non-words this way). ``max_pieces = 1`` keeps
the model's own proposals to single pieces (answers are still scored whole), and
``length_alpha`` between 0 and 1 moves the balance; record the choice with the results
(it is in their ``hyperparameters``).

Candidates
----------
The model's own proposals only: the ``top_k`` most likely word-initial tokens at a single
mask that decode to a whole word, and for ``n = 2 .. max_pieces`` a greedy multi-piece
completion (the best word-initial piece under ``n`` masks, then the best continuation
piece at each next mask). All are scored by the PLL above and ranked; the top ``top_k``
distinct words (compared with :func:`nlue.text.normalize.normalize_answer`) are the item's
whole-word predictions. The context around the blank is the tokenised sentence with the
tokenizer's mask token in place of the placeholder, so nothing the model sees depends on
the item's listed answers.

``answer_candidates=True`` also ranks the item's listed answers. That hands the model
words it would never have proposed, so it is a *diagnostic* (how would the model rank
the right answers?), never a GMET score: `nlue gmet --answer-ranked-diagnostic` labels
its results as such everywhere and keeps them out of the NLUE score.

Layout: the pieces (encoded words, requests, mask and vocabulary classes) are in
:mod:`nlue.lm.masked.pieces`, the batched forward passes in :mod:`nlue.lm.masked.passes`,
the PLL score, pruning and ranking in :mod:`nlue.lm.masked.rank`.

Speed: every forward pass a run needs (proposals, greedy steps, PLL factors) is keyed by
its token ids, de-duplicated across candidates and items, sorted by length and batched;
only the masked positions go through the vocabulary projection (a forward pre-hook on
the output embeddings selects them) so large vocabularies cost little, and for BERT-layout
models only those positions go through the last layer (:mod:`nlue.lm.masked.trim`). Each pass keeps
its whole log-probability rows for the later rounds of the same items, so that no
sequence runs twice (a word's pieces are only known once the proposals and greedy steps
are in, and its factors mostly sit in sequences those rounds ran); items go through in
chunks sized so that these rows stay within ``row_cache_bytes``. A candidate that still
needs passes of its own is skipped when its first factor proves it cannot reach the top
``top_k`` (:mod:`nlue.lm.masked.rank`). What is left is the algorithm's own floor: per item,
the proposals' sequence and the ``n`` sequences of each greedy completion,
``1 + 2 + ... + max_pieces`` in all (6 at the default 3), each of them a full pass, since a
bidirectional encoder shares no computation between sequences that differ in one token.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.lm.masked.pieces import (
    Ask,
    BlankItem,
    Encoded,
    ItemPrediction,
    Key,
    mask_token_of,
    pick_device,
    vocabulary_classes,
)
from nlue.lm.masked.rank import Ranking
from nlue.lm.masked.trim import install
from nlue.text.normalize import normalize_answer

logger = logging.getLogger(__name__)

DEFAULT_TOP_K = 10
DEFAULT_MAX_PIECES = 3
DEFAULT_LENGTH_ALPHA = 1.0
DEFAULT_BATCH_SIZE = 64
DEFAULT_ROW_CACHE_BYTES = 512 * 1024**2


class MaskedLMPredictor(Ranking):
    """Ranks whole-word candidates for GMET items with a masked LM (see the module docstring)."""

    kind = "zero-shot"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        name: str,
        *,
        device: str = "auto",
        batch_size: int = DEFAULT_BATCH_SIZE,
        top_k: int = DEFAULT_TOP_K,
        max_pieces: int = DEFAULT_MAX_PIECES,
        length_alpha: float = DEFAULT_LENGTH_ALPHA,
        answer_candidates: bool = False,
        show_progress: bool = True,
        trim_last_layer: bool = True,
    ) -> None:
        import torch

        self.name = name
        self.mask_token, self.mask_id = mask_token_of(tokenizer, name)
        if not getattr(tokenizer, "is_fast", False):
            raise NlueError(f"{name}: GMET scoring needs a fast tokenizer (character offsets); this one is slow")
        if top_k < 1 or max_pieces < 1 or batch_size < 1:
            raise NlueError("top_k, max_pieces and batch_size must be at least 1")
        self.tokenizer = tokenizer
        self.device = pick_device(device)
        self.model = model.to(self.device).eval()
        # The last layer only where log-probabilities are read (same numbers, less work); off: the model's own.
        self.trim_last_layer = trim_last_layer and install(self.model)
        self.batch_size = batch_size
        self.top_k = top_k
        self.max_pieces = max_pieces
        self.length_alpha = float(length_alpha)
        self.answer_candidates = answer_candidates
        self.show_progress = show_progress
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        config = getattr(model, "config", None)
        max_positions = getattr(config, "max_position_embeddings", None) or 512
        model_max = getattr(tokenizer, "model_max_length", None) or 512
        # RoBERTa-style models offset positions by the padding index: keep two spare.
        self.max_length = int(min(model_max if model_max < 1_000_000 else 512, max_positions - 2))
        vocab_size = int(getattr(config, "vocab_size", None) or len(tokenizer))
        starts, continues = vocabulary_classes(tokenizer, vocab_size)
        self._vocab_size = vocab_size
        self._bias = {
            "start": torch.tensor([0.0 if ok else float("-inf") for ok in starts]),
            "continue": torch.tensor([0.0 if ok else float("-inf") for ok in continues]),
        }
        self._logp: dict[tuple[Key, int, int], float] = {}
        self._top: dict[tuple[Key, int, str, int], list[tuple[int, float]]] = {}
        self._rows: dict[tuple[Key, int], Any] = {}
        self._ran: set[Key] = set()
        self.row_cache_bytes = DEFAULT_ROW_CACHE_BYTES
        self.last_chunks = 0
        # Counters over the predictor's life: sequences run, sequences run a second time within one
        # predict() call (none, unless a chunk boundary splits items that share one), candidates skipped.
        self.forward_sequences = 0
        self.repeated_sequences = 0
        self.pruned_candidates = 0
        self.last_pass_sliced = False  # whether the last forward pass projected only the masked positions
        self.last_pass_trimmed = False  # whether its last layer ran only there

    @classmethod
    def from_pretrained(cls, name_or_path: str, **kwargs: Any) -> MaskedLMPredictor:
        """Load a fill-mask checkpoint (Hub id or local folder); refuse one without a mask token."""
        from nlue.lm.checkpoints import load_masked_lm

        model, tokenizer = load_masked_lm(name_or_path)
        return cls(model, tokenizer, name_or_path, **kwargs)

    def settings(self) -> dict[str, Any]:
        return {
            "scoring": "PLL-word-l2r / pieces**length_alpha",
            "top_k": self.top_k,
            "max_pieces": self.max_pieces,
            "length_alpha": self.length_alpha,
            "answer_candidates": self.answer_candidates,
            "batch_size": self.batch_size,
            "device": self.device,
            "mask_token": self.mask_token,
        }

    # ------------------------------------------------------------------ encoding
    def encode(self, items: Sequence[BlankItem], words: Sequence[str]) -> list[Encoded | None]:
        """Each item's sentence with its word in place, split into (left, pieces, right) ids."""
        texts = [item.filled(word) for item, word in zip(items, words, strict=True)]
        if not texts:
            return []
        enc = self.tokenizer(
            texts, return_offsets_mapping=True, return_special_tokens_mask=True, add_special_tokens=True
        )
        out: list[Encoded | None] = []
        for position, (item, word) in enumerate(zip(items, words, strict=True)):
            ids = enc["input_ids"][position]
            offsets = enc["offset_mapping"][position]
            special = enc["special_tokens_mask"][position]
            start, end = len(item.left), len(item.left) + len(word)
            reach = start
            while reach > 0 and item.left[reach - 1].isspace():
                reach -= 1
            inside = [i for i, (a, b) in enumerate(offsets) if not special[i] and a < end and b > reach]
            if not inside or not word:
                out.append(None)
                continue
            first, last = inside[0], inside[-1]
            out.append(self._fit(Encoded(tuple(ids[:first]), tuple(ids[first : last + 1]), tuple(ids[last + 1 :]))))
        return out

    def encode_context(self, items: Sequence[BlankItem]) -> list[Encoded | None]:
        """Each item's context around the blank, from the sentence with the mask token in place.

        The pieces are empty; ``left`` ends and ``right`` starts where the word's pieces go.
        Built from the sentence alone, so the context never depends on the item's answers.
        """
        if not items:
            return []
        texts = [item.left + self.mask_token + item.right for item in items]
        enc = self.tokenizer(texts, add_special_tokens=True)
        out: list[Encoded | None] = []
        for ids in enc["input_ids"]:
            where = [i for i, token in enumerate(ids) if token == self.mask_id]
            if len(where) != 1:  # the sentence itself spells the mask token: no clean blank
                out.append(None)
                continue
            out.append(self._fit(Encoded(tuple(ids[: where[0]]), (), tuple(ids[where[0] + 1 :]))))
        return out

    def _fit(self, encoded: Encoded) -> Encoded | None:
        """Trim far context so that the word with ``max_pieces`` or its own pieces fits the model."""
        width = max(len(encoded.pieces), self.max_pieces)
        left, right = list(encoded.left), list(encoded.right)
        over = len(left) + width + len(right) - self.max_length
        if over <= 0:
            return encoded
        if width + 2 > self.max_length:
            return None
        while over > 0:  # drop the outermost non-boundary token of the longer side
            if len(left) >= len(right) and len(left) > 1:
                del left[1]
            elif len(right) > 1:
                del right[-2]
            else:
                return None
            over -= 1
        return Encoded(tuple(left), encoded.pieces, tuple(right))

    def word_of(self, ids: Iterable[int]) -> str:
        """The whole word that ``ids`` decode to, or "" when they do not form one word."""
        text = self.tokenizer.decode(list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False)
        word = normalize_answer(text)
        if not word or any(ch.isspace() for ch in word) or "\ufffd" in word:
            return ""
        return word

    # ------------------------------------------------------------------ prediction
    def predict(self, items: Sequence[BlankItem]) -> list[ItemPrediction]:
        """Ranked whole-word predictions for every item (one batched pass per round, chunk by chunk)."""
        from tqdm.auto import tqdm

        self._logp.clear()
        self._top.clear()
        self._rows.clear()
        self._ran.clear()
        contexts: list[Encoded] = []
        for item, ctx in zip(items, self.encode_context(items), strict=True):
            if ctx is None:
                raise NlueError(
                    f"GMET item {item.id}: the sentence does not fit {self.name}'s input length, "
                    f"or it spells the mask token {self.mask_token!r} itself"
                )
            contexts.append(ctx)
        size = self.chunk_items()
        out: list[ItemPrediction] = []
        self.last_chunks = 0
        with tqdm(total=0, unit="seq", desc=f"GMET {self.name}", disable=not self.show_progress) as bar:
            for begin in range(0, len(items), size):
                out.extend(self._predict_chunk(items[begin : begin + size], contexts[begin : begin + size], bar))
                self._rows.clear()  # rows serve later rounds of the same items only
                self.last_chunks += 1
        return out

    def chunk_items(self) -> int:
        """How many items share one row cache: as many as ``row_cache_bytes`` holds (rows of float32 log-probs)."""
        rows_per_item = self.max_pieces * (self.max_pieces + 1) // 2 + 2  # proposals, greedy steps, a few extras
        if self.answer_candidates:
            rows_per_item += 3 * self.max_pieces
        return max(1, self.row_cache_bytes // (rows_per_item * self._vocab_size * 4))

    def _predict_chunk(self, items: Sequence[BlankItem], contexts: list[Encoded], bar: Any) -> list[ItemPrediction]:
        mask = self.mask_id
        fetch = self.top_k * 3 + 5  # some top tokens are punctuation or not a whole word

        def masked(ctx: Encoded, filled: Sequence[int], n: int) -> Key:
            return ctx.left + tuple(filled) + (mask,) * (n - len(filled)) + ctx.right

        # Round 1: single-mask proposals and the first greedy piece for every length.
        asks = [
            Ask(masked(ctx, (), n), len(ctx.left), top=fetch if n == 1 else 1, allowed="start")
            for ctx in contexts
            for n in range(1, self.max_pieces + 1)
        ]
        self.run(asks, bar)
        # Greedy multi-piece completions: one round per further piece, batched over items and lengths.
        greedy: dict[tuple[int, int], list[int]] = {}
        for i, ctx in enumerate(contexts):
            for n in range(2, self.max_pieces + 1):
                found = self._top.get((masked(ctx, (), n), len(ctx.left), "start", 1))
                if found:
                    greedy[(i, n)] = [found[0][0]]
        for step in range(1, self.max_pieces):
            growing = {(i, n): chosen for (i, n), chosen in greedy.items() if n > step and len(chosen) == step}
            if not growing:
                break
            places = {
                (i, n): (masked(contexts[i], chosen, n), len(contexts[i].left) + step)
                for (i, n), chosen in growing.items()
            }
            self.run([Ask(key, pos, top=1, allowed="continue") for key, pos in places.values()], bar)
            for slot, (key, pos) in places.items():
                found = self._top.get((key, pos, "continue", 1))
                if found:
                    growing[slot].append(found[0][0])
        # Candidates: the model's own words first (so that exact ties never favour a listed answer), then answers.
        proposals: list[list[str]] = [[] for _ in items]
        for i, ctx in enumerate(contexts):
            for token, _ in self._top.get((masked(ctx, (), 1), len(ctx.left), "start", fetch), []):
                word = self.word_of([token])
                if word:
                    proposals[i].append(word)
                if len(proposals[i]) >= self.top_k:
                    break
        for (i, n), chosen in sorted(greedy.items()):
            if len(chosen) == n and (word := self.word_of(chosen)):
                proposals[i].append(word)
        flat = [(i, w) for i in range(len(items)) for w in _distinct(proposals[i])]
        candidates: list[list[tuple[str, Encoded | None]]] = [[] for _ in items]
        for (i, word), enc in zip(flat, self.encode([items[i] for i, _ in flat], [w for _, w in flat]), strict=True):
            candidates[i].append((word, enc))
        if self.answer_candidates:  # the diagnostic: listed answers the model did not propose itself
            flat = []
            for i, item in enumerate(items):
                known = {normalize_answer(word) for word, _ in candidates[i]}
                flat.extend((i, a) for a in _distinct(item.answers) if normalize_answer(a) not in known)
            for (i, answer), enc in zip(
                flat, self.encode([items[i] for i, _ in flat], [a for _, a in flat]), strict=True
            ):
                candidates[i].append((answer, enc))
        pruned = self.score_entries(candidates, bar)
        return [
            self.rank(item, [(word, None if order in gone else enc) for order, (word, enc) in enumerate(entries)])
            for item, entries, gone in zip(items, candidates, pruned, strict=True)
        ]


def _distinct(words: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for word in words:
        key = normalize_answer(word)
        if key and key not in seen:
            seen.add(key)
            out.append(word)
    return out


def from_spec(spec: Any, **context: Any) -> MaskedLMPredictor:
    """The ``fill-mask`` backend (:mod:`nlue.lm.backends`); ``spec.options``/``context``: the predictor's settings."""
    options = {**dict(spec.options), **context}
    if spec.device is not None:
        options.setdefault("device", spec.device)
    if spec.batch_size is not None:
        options.setdefault("batch_size", spec.batch_size)
    options.setdefault("show_progress", spec.show_progress)
    return MaskedLMPredictor.from_pretrained(spec.model, **options)
