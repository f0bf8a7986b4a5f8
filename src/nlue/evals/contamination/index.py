"""The test set's n-grams, held once, and the lookup of a batch of corpus n-grams in them.

One :class:`GramIndex` per measure (word n-grams, character n-grams of one language profile, word
n-grams of the English sources). It holds every distinct n-gram hash of every item, which items hold
it, and how many distinct n-grams each item has: memory grows with the test set, never with the corpus.
:meth:`GramIndex.match` takes the n-gram hashes of a batch of corpus documents and says, for each
(document, item) pair that shares any n-gram, how many of the item's distinct n-grams that one document
holds; an item's overlap ratio is that count over its own n-gram count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_FILTER_BITS = 22  # a 4 Mi-entry bitmap on the hashes' top bits: most corpus n-grams are rejected by one lookup


@dataclass(frozen=True)
class Matches:
    """Document-item pairs of a batch that share n-grams: the document (in the batch), the item, and how many."""

    documents: np.ndarray
    items: np.ndarray
    found: np.ndarray

    @staticmethod
    def empty() -> Matches:
        nothing = np.zeros(0, dtype=np.int64)
        return Matches(nothing, nothing, nothing)


class GramIndex:
    """The distinct n-grams of ``items`` items, given as (hash, item) pairs, and the window lengths the corpus
    must be hashed with to meet them (``lengths``: ``n`` and the whole lengths of shorter items)."""

    def __init__(self, hashes: np.ndarray, items: np.ndarray, item_count: int, lengths: Sequence[int]) -> None:
        pairs = np.unique(np.stack([hashes.astype(np.uint64), items.astype(np.uint64)], axis=1), axis=0)
        pair_hashes, pair_items = pairs[:, 0], pairs[:, 1].astype(np.int64)
        self.item_count = item_count
        self.gram_counts = np.bincount(pair_items, minlength=item_count).astype(np.int64)
        self.keys, first = np.unique(pair_hashes, return_index=True)  # pairs are sorted by hash, then item
        self.post_start = np.append(first, len(pair_hashes)).astype(np.int64)
        self.post_items = pair_items
        self.lengths = tuple(sorted(set(lengths)))
        self.filter = np.zeros(1 << _FILTER_BITS, dtype=bool)
        self.filter[self.keys >> np.uint64(64 - _FILTER_BITS)] = True

    def __len__(self) -> int:
        return len(self.keys)

    def match(self, hashes: np.ndarray, documents: np.ndarray) -> Matches:
        """For n-gram ``hashes`` of a batch (``documents[i]`` the document of ``hashes[i]``): which items each
        document shares n-grams with, and how many distinct n-grams of the item it holds."""
        if not len(self.keys) or not len(hashes):
            return Matches.empty()
        maybe = self.filter[hashes >> np.uint64(64 - _FILTER_BITS)]
        hashes, documents = hashes[maybe], documents[maybe]
        position = np.minimum(np.searchsorted(self.keys, hashes), len(self.keys) - 1)
        hit = self.keys[position] == hashes
        if not hit.any():
            return Matches.empty()
        # Each n-gram counts once per document, however often the document repeats it.
        pairs = np.unique(documents[hit].astype(np.int64) * len(self.keys) + position[hit])
        documents, position = pairs // len(self.keys), pairs % len(self.keys)
        holders = self.post_start[position + 1] - self.post_start[position]
        offsets = np.arange(int(holders.sum())) - np.repeat(np.cumsum(holders) - holders, holders)
        items = self.post_items[np.repeat(self.post_start[position], holders) + offsets]
        keyed, found = np.unique(np.repeat(documents, holders) * self.item_count + items, return_counts=True)
        return Matches(keyed // self.item_count, keyed % self.item_count, found.astype(np.int64))
