"""Which rows repeat or overlap other rows, decided on their fingerprints.

:func:`row_verdicts` tells, for a batch of rows, which repeat an earlier row of their
split (with the same label or another) and which occur in another split; the builder
decides from that what to remove. Beyond exact repeats of a whole item, it counts per
kept validation/test row (removing nothing for these):

* **near-duplicates of train**: the row's inputs are not those of a train item, but
  they are once each text is folded by :func:`nlue.text.normalize.loose_texts` (case,
  digits, punctuation, spaces, joiners; :data:`nlue.text.normalize.NEAR_DUPLICATE_RULES`);
* **fields shared with train** (tasks with two or more inputs): for each input field,
  the rows whose text in that field is also the text of that field in some train row
  (an MNLI premise that train pairs with another hypothesis, say).

"Train" is the train split as built: when validation is carved from train, the carved
rows are not in it. Memory stays fixed-width per row, as for exact de-duplication: one
8-byte key per distinct folded train item and one per distinct train value of each
field (:class:`~nlue.data.fingerprints.FingerprintSet`), none of them per test row. These
keys are 64-bit string hashes (:func:`_string_keys`), not the blake2b fingerprints that
decide which rows are kept. The columnar builder keys the same texts with
:mod:`nlue.data.text_keys` instead (no Python string per row); a build uses one or the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nlue.data.fingerprints import SEPARATOR, FingerprintSet
from nlue.text.normalize import loose_texts

# What happens to a converted row, decided a batch of rows at a time. FOUND_IN_* double as
# "leaked" verdicts when such rows are removed; FOUND_IN_TEST is an exam's demonstration row
# that is also a test item (rejected: the pool must share no item with test). OUTVOTED and TIED
# are rows of an input given several labels that the majority rule rejects (nlue.data.label_votes).
VERDICTS = 8
KEEP, DUPLICATE, CONFLICT, FOUND_IN_TRAIN, FOUND_IN_VALIDATION, FOUND_IN_TEST, OUTVOTED, TIED = range(VERDICTS)
_FOUND_VERDICTS: Mapping[str, int] = {"train": FOUND_IN_TRAIN, "validation": FOUND_IN_VALIDATION, "test": FOUND_IN_TEST}


@dataclass
class OverlapCounts:
    """Counts for the kept rows of one validation or test split (see the module docstring)."""

    with_train: int = 0  # same normalised inputs as an item of the built train split
    with_validation: int = 0  # same as an item of the built validation split (test only)
    near_duplicates_of_train: int = 0
    fields_shared_with_train: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "overlap_with_train": self.with_train,
            "overlap_with_validation": self.with_validation,
            "near_duplicates_of_train": self.near_duplicates_of_train,
        }
        if self.fields_shared_with_train:
            out["field_overlap_with_train"] = dict(self.fields_shared_with_train)
        return out


@dataclass
class RowKeys:
    """The looser keys of some rows: folded inputs, and each field on its own."""

    loose: np.ndarray
    fields: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.loose)

    @staticmethod
    def concat(parts: Sequence[RowKeys], field_names: Sequence[str]) -> RowKeys:
        def joined(arrays: list[np.ndarray]) -> np.ndarray:
            return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint64)

        return RowKeys(
            joined([p.loose for p in parts]), {name: joined([p.fields[name] for p in parts]) for name in field_names}
        )


class TrainIndex:
    """The built train split's looser keys, against which other splits are counted."""

    def __init__(self, input_keys: Sequence[str]) -> None:
        self.input_keys = tuple(input_keys)
        # A single-input task has nothing to share field by field beyond the whole item.
        self.field_names: tuple[str, ...] = self.input_keys if len(self.input_keys) >= 2 else ()
        self.loose = FingerprintSet()
        self.fields = {name: FingerprintSet() for name in self.field_names}
        self.rows = 0

    def new_counts(self) -> OverlapCounts:
        return OverlapCounts(fields_shared_with_train=dict.fromkeys(self.field_names, 0))

    def keys(self, columns: Mapping[str, Sequence[str]]) -> RowKeys:
        """Keys of rows given column-wise (each input field's normalised values)."""
        folded = [loose_texts(columns[name]) for name in self.input_keys]
        # Folded values hold no SEPARATOR (normalisation made it a space, and folding drops spaces).
        joined = folded[0] if len(folded) == 1 else [SEPARATOR.join(parts) for parts in zip(*folded, strict=True)]
        return RowKeys(_string_keys(joined), {name: _string_keys(columns[name]) for name in self.field_names})

    def add(self, keys: RowKeys) -> None:
        """Add the keys of train rows (repeats, within the batch or of earlier rows, are fine)."""
        self.rows += len(keys)
        _add_new(self.loose, keys.loose)
        for name in self.field_names:
            _add_new(self.fields[name], keys.fields[name])

    def count_kept(self, columns: Mapping[str, Sequence[Any]], found_in: np.ndarray, counts: OverlapCounts) -> None:
        """Count kept rows of a validation/test split, given column-wise as :meth:`keys` takes them.

        ``found_in`` as :func:`row_verdicts` gives it.
        """
        in_train = found_in == FOUND_IN_TRAIN
        counts.with_train += int(np.count_nonzero(in_train))
        counts.with_validation += int(np.count_nonzero(found_in == FOUND_IN_VALIDATION))
        if self.rows:
            self.count(self.keys(columns), in_train, counts)

    def count(self, keys: RowKeys, exact_in_train: np.ndarray, counts: OverlapCounts) -> None:
        """Count near-duplicates and shared fields among rows of another split.

        ``exact_in_train`` marks the rows whose inputs are exactly those of a train item:
        they are overlaps already, so not near-duplicates as well.
        """
        if not self.rows or not len(keys):
            return
        near = self.loose.contains(keys.loose) & ~exact_in_train
        counts.near_duplicates_of_train += int(np.count_nonzero(near))
        for name in self.field_names:
            shared = self.fields[name].contains(keys.fields[name])
            counts.fields_shared_with_train[name] += int(np.count_nonzero(shared))


def _string_keys(texts: Sequence[str]) -> np.ndarray:
    """64-bit keys of texts: Python's own string hash (SipHash, seeded per process).

    These keys only count rows, never decide whether a row is kept, and live only while
    the build runs, so the process-seeded hash is fine; it costs a tenth of the blake2b
    fingerprints, with the same 64 bits: a collision (odds ~ rows x train rows / 2**64)
    would miscount one row.
    """
    return np.fromiter(map(hash, texts), dtype=np.int64, count=len(texts)).view(np.uint64)


def columns_of_rows(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, list[str]]:
    return {name: [row[name] for row in rows] for name in names}


def _add_new(keys_of_split: FingerprintSet, keys: np.ndarray) -> None:
    """Add the distinct ``keys`` not yet in the set (FingerprintSet.add takes new keys only)."""
    if not len(keys):
        return
    distinct = np.unique(keys)
    keys_of_split.add(distinct[~keys_of_split.contains(distinct)])


def row_verdicts(
    keys: np.ndarray,
    labels: np.ndarray | None,
    seen: FingerprintSet,
    exclude: Mapping[str, FingerprintSet],
    drop_found: bool = True,
    ruled: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One verdict per row of a batch, and where each row was found; new keys go to ``seen``.

    ``keys`` are the rows' fingerprints and ``labels`` their label codes (None: no
    label). The same rules as checking row by row: a row whose key is in an excluded
    split was found there (the first such split in ``exclude``'s order; ``found_in``
    holds FOUND_IN_<split>, else KEEP). With ``drop_found`` that is its verdict;
    otherwise, and for the rows found nowhere, a row that ``ruled`` (the label majority's
    decisions, :meth:`nlue.data.label_votes.Decisions.rule_rows`) rejects gets its verdict
    (OUTVOTED or TIED) and is not seen; of the others, a row whose key was seen before (in
    an earlier batch, or earlier in this one) is a DUPLICATE when its label is the first
    such row's label and a CONFLICT when not.
    """
    verdicts = np.full(len(keys), KEEP, dtype=np.int8)
    found_in = np.full(len(keys), KEEP, dtype=np.int8)
    if not len(keys):
        return verdicts, found_in
    open_rows = np.ones(len(keys), dtype=bool)  # rows found in no excluded split yet
    for name, keys_of_split in exclude.items():
        leaked = open_rows & keys_of_split.contains(keys)
        found_in[leaked] = _FOUND_VERDICTS[name]
        open_rows &= ~leaked
    if drop_found:
        verdicts[~open_rows] = found_in[~open_rows]
    else:
        open_rows[:] = True  # rows kept although found elsewhere are still checked for repeats
    if ruled is not None and labels is not None:
        outcome = ruled(keys, labels)
        lost = open_rows & (outcome != KEEP)
        verdicts[lost] = outcome[lost]
        open_rows &= ~lost
    found, stored = seen.lookup(keys)
    repeat = np.flatnonzero(open_rows & found)
    verdicts[repeat] = _repeat_verdicts(_take(labels, repeat), _take(stored, repeat), len(repeat))
    open_rows &= ~found
    # Repeats within the batch: the first row with a key is kept, later ones compare with it.
    rows = np.flatnonzero(open_rows)
    new_keys, first, inverse = np.unique(keys[rows], return_index=True, return_inverse=True)
    first_rows = rows[first]
    kept_rows = first_rows[inverse.reshape(-1)]
    later = kept_rows != rows
    repeat, kept = rows[later], kept_rows[later]
    verdicts[repeat] = _repeat_verdicts(_take(labels, repeat), _take(labels, kept), len(repeat))
    seen.add(new_keys, _take(labels, first_rows))
    return verdicts, found_in


def _repeat_verdicts(labels: np.ndarray | None, kept_labels: np.ndarray | None, count: int) -> np.ndarray:
    """DUPLICATE where a repeated row's label code equals the kept row's, else CONFLICT."""
    if labels is None or kept_labels is None:
        return np.full(count, DUPLICATE, dtype=np.int8)
    return np.where(labels == kept_labels, DUPLICATE, CONFLICT).astype(np.int8)


def _take(values: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if values is None else values[rows]
