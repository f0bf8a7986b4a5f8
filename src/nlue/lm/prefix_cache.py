"""Key/value caches of token prefixes that many prompts share, computed once and copied per batch.

Every exam prompt of a task, and every NLUE prompt of a task, begins with the same instruction
block; only the item's own tokens differ. Running the instruction once and starting each batch
from a copy of its cache means a batch computes only its items' own tokens.

The prefix of a batch is the longest run of tokens every prompt in it starts with, less at
least one token per prompt (a prompt needs a token of its own for its next-token logits). A
prefix is worth its own pass only when it is long enough (:data:`MIN_SHARED_TOKENS`); a batch
reuses a kept prefix that starts all of its prompts when it covers nearly all of the batch's
own common run (:data:`REUSE_SHORTFALL` tokens less at most), so that batches whose prompts
happen to share a few more tokens (the same subject) do not each recompute the instruction.

A prompt then runs as ``[prefix][pads][own tokens]``: the attention mask hides the pads, and
positions go on from the prefix, so each row's sequence is exactly what it would be without
the padding. This works for models whose cache is a transformers ``DynamicCache`` (rows can be
repeated and selected) and whose forward takes ``position_ids``; for any other model
:meth:`SharedPrefixes.expanded` returns ``None`` and the caller runs whole prompts.
"""

from __future__ import annotations

import copy
import inspect
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

logger = logging.getLogger(__name__)

MIN_SHARED_TOKENS = 16  # below this a separate pass and a cache copy cost about what they save
REUSE_SHORTFALL = 16  # a kept prefix this much shorter than the batch's common run is still used
KEEP = 4  # prefixes kept (a task's instruction per prompt language and mode)


def common_prefix_length(sequences: Sequence[Sequence[int]], own: int = 1) -> int:
    """Tokens that every sequence starts with, leaving at least ``own`` tokens of each sequence outside."""
    if not sequences:
        return 0
    first = sequences[0]
    limit = min(len(s) for s in sequences) - own
    length = 0
    while length < limit and all(s[length] == first[length] for s in sequences):
        length += 1
    return max(0, length)


class SharedPrefixes:
    """A few prefixes' caches for one model (batch of one, kept on the model's device), least recently used out."""

    def __init__(self, model: Any, keep: int = KEEP, min_tokens: int = MIN_SHARED_TOKENS) -> None:
        self.model = model
        # transformers 5.2x renamed ``past_key_values`` to ``cache`` (the old name warns, then goes)
        self.cache_argument = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        self.keep = keep
        self.min_tokens = min_tokens
        self._kept: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self._lock = threading.Lock()  # the Space calls one model from several threads
        self.usable = True  # False once the model's cache turns out not to be repeatable by rows
        self.tokens_run = 0  # prefix tokens computed, for the benchmark's tokens-per-item figure

    def plan(self, sequences: Sequence[Sequence[int]]) -> dict[tuple[int, ...], int]:
        """Per opening (the first :data:`MIN_SHARED_TOKENS` tokens), the prefix all of a call's sequences share.

        A call holds a task's prompts (or a few tasks'): those that open alike share their instruction,
        whichever batch they land in, even a batch of one question.
        """
        openings: dict[tuple[int, ...], list[Sequence[int]]] = {}
        for sequence in sequences:
            openings.setdefault(tuple(sequence[: self.min_tokens]), []).append(sequence)
        plan = {}
        for opening, members in openings.items():
            length = common_prefix_length(members)
            if len(members) >= 2 and length >= self.min_tokens:
                plan[opening] = length
        return plan

    def choose(self, sequences: Sequence[Sequence[int]], plan: dict[tuple[int, ...], int] | None = None) -> int:
        """How many leading tokens of a batch's ``sequences`` to take from a shared prefix (0: none worth it)."""
        if not self.usable or not sequences:
            return 0
        openings = {tuple(s[: self.min_tokens]) for s in sequences}
        if plan and len(openings) == 1 and (planned := plan.get(openings.pop())):
            return planned  # the call's common prefix for this opening, which starts every sequence here
        run = common_prefix_length(sequences)
        with self._lock:
            prefixes = list(self._kept)
        kept = [len(p) for p in prefixes if len(p) <= run and tuple(sequences[0][: len(p)]) == p]
        if kept and max(kept) >= run - REUSE_SHORTFALL:
            return max(kept)
        return run if run >= self.min_tokens and len(sequences) >= 2 else max(kept, default=0)

    def expanded(self, prefix: Sequence[int], rows: int) -> Any | None:
        """A fresh cache holding ``prefix`` for each of ``rows`` rows (``None``: this model cannot share)."""
        import torch

        key = tuple(prefix)
        with self._lock:
            cache = self._kept.get(key)
        if cache is None:
            device = self.model.get_input_embeddings().weight.device
            ids = torch.tensor([key], dtype=torch.long, device=device)
            out = self.model(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                position_ids=torch.arange(len(key), device=device)[None, :],
                use_cache=True,
            )
            cache = getattr(out, "cache", None)
            if cache is None:
                cache = getattr(out, "past_key_values", None)
            if not (hasattr(cache, "batch_repeat_interleave") and hasattr(cache, "batch_select_indices")):
                logger.info("%s's cache cannot be repeated by rows: no shared prefixes", type(self.model).__name__)
                self.usable = False
                return None
            with self._lock:
                self.tokens_run += len(key)
                self._kept[key] = cache
                while len(self._kept) > self.keep:
                    self._kept.popitem(last=False)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
        fresh = copy.deepcopy(cache)  # the forward pass appends to the cache it is given
        if rows > 1:
            fresh.batch_repeat_interleave(rows)
        return fresh

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
