"""Compact sets of 64-bit row fingerprints, for de-duplication and leakage checks.

A Python ``set[int]`` costs ~95 bytes per entry; here a fingerprint costs its 8 bytes,
plus the label code kept beside it (1 byte for a class id, 8 for a score), in sorted
numpy arrays that are queried and extended a batch of rows at a time.

Keys are spread over ``2**PARTITION_BITS`` partitions by their top bits, and each
partition is a list of sorted *runs*, merged pairwise like a binary counter while the
merged run stays within ``RUN_CAP`` entries. The cap bounds the transient memory of a
merge (a few MiB, whatever the number of rows); the price is one binary search per run
for each key looked up. Partitions keep that affordable at scale, as a key is searched
in the runs of its own partition only: looking up and adding a million keys costs ~1 s
with a million kept, and looking up a million against ten million ~2 s (2 slow cores).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

RUN_CAP = 1 << 18  # entries per run: 2 MiB of fingerprints
PARTITION_BITS = 4
SEPARATOR = "\x1f"  # whitespace to the normaliser, so never inside a normalised value
FINGERPRINT_DTYPE = np.dtype("<u8")


def fingerprint(values: Sequence[str]) -> bytes:
    """The 8-byte fingerprint of a row's normalised input values (little-endian uint64).

    The values are joined with U+001F, which normalisation turns into a space, so no two
    different value tuples join to the same text.
    """
    return hashlib.blake2b(SEPARATOR.join(values).encode("utf-8"), digest_size=8).digest()


def as_keys(digests: Sequence[bytes]) -> np.ndarray:
    """Fingerprints from :func:`fingerprint` as a uint64 array."""
    return np.frombuffer(b"".join(digests), dtype=FINGERPRINT_DTYPE).astype(np.uint64)


class FingerprintSet:
    """Distinct fingerprints, each optionally with a label code stored beside it.

    ``label_dtype`` is None for a set of keys only (e.g. the train keys that test rows
    must not repeat). Keys added must be distinct and not yet in the set; the builder
    checks with :meth:`lookup` first.
    """

    def __init__(
        self,
        label_dtype: np.dtype | type | None = None,
        run_cap: int = RUN_CAP,
        partition_bits: int = PARTITION_BITS,
    ) -> None:
        self.label_dtype = None if label_dtype is None else np.dtype(label_dtype)
        self._partitions = [_Runs(self.label_dtype, run_cap) for _ in range(1 << partition_bits)]
        shift = np.uint64(64 - partition_bits)
        self._edges = np.arange(1, 1 << partition_bits, dtype=np.uint64) << shift  # first key of partitions 1..

    def __len__(self) -> int:
        return sum(len(partition) for partition in self._partitions)

    @property
    def nbytes(self) -> int:
        return sum(partition.nbytes for partition in self._partitions)

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """For each key: whether it is in the set, and its stored label code (0 where absent)."""
        keys = np.asarray(keys, dtype=np.uint64)
        order = None if _ascending(keys) else np.argsort(keys)  # e.g. np.unique's output needs no sort
        queries = keys if order is None else keys[order]
        found = np.zeros(len(keys), dtype=bool)
        stored = None if self.label_dtype is None else np.zeros(len(keys), dtype=self.label_dtype)
        for partition, (start, stop) in zip(self._partitions, self._slices(queries), strict=True):
            if start < stop and len(partition):
                # Writes through the views: found/stored are still in query order here.
                partition.lookup(queries[start:stop], found[start:stop], None if stored is None else stored[start:stop])
        if order is not None:
            found[order] = found.copy()
            if stored is not None:
                stored[order] = stored.copy()
        return found, stored

    def contains(self, keys: np.ndarray) -> np.ndarray:
        return self.lookup(keys)[0]

    def add(self, keys: np.ndarray, labels: np.ndarray | None = None) -> None:
        """Add distinct keys that are not in the set yet (with their label codes)."""
        if self.label_dtype is not None and labels is None:
            raise ValueError("this set stores a label code per key; none given")
        keys = np.asarray(keys, dtype=np.uint64)
        order = None if _ascending(keys) else np.argsort(keys)  # keys are distinct: any sort will do
        if order is not None:
            keys = keys[order]
        if self.label_dtype is not None:
            labels = np.asarray(labels, dtype=self.label_dtype)
            labels = labels if order is None else labels[order]
        for partition, (start, stop) in zip(self._partitions, self._slices(keys), strict=True):
            if start < stop:
                # Copies: a view would keep the whole batch's array alive.
                part_labels = None if labels is None or self.label_dtype is None else labels[start:stop].copy()
                partition.add(keys[start:stop].copy(), part_labels)

    def drop_labels(self) -> None:
        """Keep the keys only (the label codes are needed while a split is de-duplicated)."""
        self.label_dtype = None
        for partition in self._partitions:
            partition.drop_labels()

    def _run_lengths(self) -> list[int]:
        return [len(run) for partition in self._partitions for run in partition.keys]

    def _slices(self, sorted_keys: np.ndarray) -> list[tuple[int, int]]:
        """(start, stop) of each partition's keys within ``sorted_keys``."""
        cuts = np.searchsorted(sorted_keys, self._edges).tolist()
        return list(pairwise([0, *cuts, len(sorted_keys)]))


def _ascending(keys: np.ndarray) -> bool:
    return bool(len(keys) < 2 or (keys[1:] >= keys[:-1]).all())


class _Runs:
    """The sorted runs of one partition (see the module docstring)."""

    def __init__(self, label_dtype: np.dtype | None, run_cap: int) -> None:
        self.label_dtype = label_dtype
        self.run_cap = run_cap
        self.keys: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []

    def __len__(self) -> int:
        return sum(len(run) for run in self.keys)

    @property
    def nbytes(self) -> int:
        return sum(run.nbytes for run in self.keys) + sum(run.nbytes for run in self.labels)

    def lookup(self, queries: np.ndarray, found: np.ndarray, stored: np.ndarray | None) -> None:
        """Mark in ``found`` (and fill ``stored`` for) the sorted ``queries`` present here."""
        # Sorted queries walk each run front to back: better cache use than random probes.
        for i, run in enumerate(self.keys):
            at = np.searchsorted(run, queries)
            np.minimum(at, len(run) - 1, out=at)
            hit = run[at] == queries
            found |= hit
            if stored is not None:
                stored[hit] = self.labels[i][at[hit]]

    def add(self, keys: np.ndarray, labels: np.ndarray | None) -> None:
        """Add a sorted run of new keys."""
        self.keys.append(keys)
        if self.label_dtype is not None:
            assert labels is not None
            self.labels.append(labels)
        while len(self.keys) >= 2:
            newer, older = len(self.keys[-1]), len(self.keys[-2])
            if older > 2 * newer or older + newer > self.run_cap:
                return
            self._merge_last_two()

    def drop_labels(self) -> None:
        self.label_dtype = None
        self.labels = []

    def _merge_last_two(self) -> None:
        """Merge the newest run into the one before it (both sorted, no key in both)."""
        keys, base = self.keys.pop(), self.keys[-1]
        total = len(base) + len(keys)
        # Where each new key lands in the merged run: its rank among the old keys plus
        # the number of new keys before it.
        slots = np.searchsorted(base, keys)
        slots += np.arange(len(keys), dtype=slots.dtype)
        is_new = np.zeros(total, dtype=bool)
        is_new[slots] = True
        merged = np.empty(total, dtype=np.uint64)
        merged[slots] = keys
        merged[~is_new] = base
        self.keys[-1] = merged
        if self.label_dtype is not None:
            labels = self.labels.pop()
            merged_labels = np.empty(total, dtype=self.label_dtype)
            merged_labels[slots] = labels
            merged_labels[~is_new] = self.labels[-1]
            self.labels[-1] = merged_labels
