"""Inputs that a split gives two or more labels: which label the built split keeps (``--conflicts``).

A source can hold the same input twice with different labels (a crawled review labelled once
positive and once negative). Train and validation keep each input once, so one label must win:

* ``majority`` (the default): the label most of the input's rows give. The first row with that
  label is kept, the rows with other labels are rejected, each with its reason (the counts and the
  winning label); when two labels tie for the most rows, no label can be told right, and every row of
  the input is rejected ("tie").
* ``keep-first``: the first row's label, the rule of earlier nlue versions; the later rows with
  another label are rejected.

The test split is kept as released: its repeats, with one label or several, are counted, not resolved.

How the majority is found without holding rows: the split is read once as before, and
:class:`LabelVotes` tallies, per fingerprint, the rows that repeat an input with its first label
(8 bytes each) and the rows that give another label. Only when some input got two labels is the
split read a second time, with every such input's winner known (:class:`Decisions`), and built
from that pass; a split without conflicts (the common case) is read once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlue.data.fingerprints import FingerprintSet
from nlue.data.overlap import CONFLICT, DUPLICATE, KEEP, OUTVOTED, TIED

MAJORITY, KEEP_FIRST = "majority", "keep-first"
CONFLICT_RULES: tuple[str, ...] = (MAJORITY, KEEP_FIRST)
_SHOWN_LABELS = 4


@dataclass(frozen=True)
class Decisions:
    """The winning label of every input given two or more labels, for the second reading of a split."""

    keys: np.ndarray  # sorted fingerprints of the inputs
    winners: np.ndarray  # label code kept per input (meaningless where tied)
    tied: np.ndarray  # per input: no label has the most rows
    counts: dict[int, Counter[Any]]  # per input: rows per label code
    describe_label: Callable[[Any], str]

    def rule_rows(self, keys: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Per row: OUTVOTED or TIED for rows of a decided input that lose, else KEEP (the usual rules apply)."""
        out = np.full(len(keys), KEEP, dtype=np.int8)
        if not len(self.keys) or not len(keys):
            return out
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        decided = self.keys[at] == keys
        tied = decided & self.tied[at]
        out[tied] = TIED
        out[decided & ~tied & (labels != self.winners[at])] = OUTVOTED
        return out

    def reason(self, key: int, verdict: int) -> str:
        """Why a row of input ``key`` was rejected under the majority rule (``verdict``: OUTVOTED or TIED)."""
        counts = self.counts[int(key)]
        ordered = sorted(counts.items(), key=lambda item: (-item[1], self.describe_label(item[0])))
        shown = ", ".join(
            f"{self.describe_label(code)} {count} row{'s' if count != 1 else ''}"
            for code, count in ordered[:_SHOWN_LABELS]
        )
        if len(ordered) > _SHOWN_LABELS:
            shown += f", and {len(ordered) - _SHOWN_LABELS} more labels"
        if verdict == TIED:
            return (
                f"same input as other rows with another label, and no label has a majority ({shown}): "
                "no row of this input is kept (--conflicts majority)"
            )
        winner = self.describe_label(ordered[0][0])
        return (
            f"same input as other rows with another label ({shown}): the majority label {winner!r} is kept "
            "(--conflicts majority)"
        )


class LabelVotes:
    """One reading of one train/validation split: what its repeated inputs' labels were (see the module docstring).

    The first reading tallies; a second reading of a split whose inputs disagreed is given the
    :class:`Decisions` of the first (``decided``) and finds no disagreement left.
    """

    def __init__(self, rule: str, describe_label: Callable[[Any], str], decided: Decisions | None = None) -> None:
        self.rule = rule
        self.describe_label = describe_label
        self.decided = decided
        self._repeat_keys: list[np.ndarray] = []  # rows repeating an input with its first label
        self._conflict_keys: list[np.ndarray] = []
        self._conflict_labels: list[np.ndarray] = []
        self._first_labels: list[np.ndarray] = []
        self.conflict_rows = 0
        self.outvoted_rows = 0
        self.tied_rows = 0

    def tally(self, keys: np.ndarray, labels: np.ndarray | None, verdicts: np.ndarray, seen: FingerprintSet) -> None:
        """Note a decided batch: ``seen`` still holds each input's first label (the batch's own inputs included)."""
        if labels is None:
            return
        conflict = verdicts == CONFLICT
        self.conflict_rows += int(np.count_nonzero(conflict))
        self.outvoted_rows += int(np.count_nonzero(verdicts == OUTVOTED))
        self.tied_rows += int(np.count_nonzero(verdicts == TIED))
        if self.decided is not None or (not conflict.any() and self.rule != MAJORITY):
            return  # a second reading needs the counts only, and keep-first the inputs that disagreed
        if conflict.any():
            conflict_keys = keys[conflict].copy()
            self._conflict_keys.append(conflict_keys)
            self._conflict_labels.append(labels[conflict].copy())
            self._first_labels.append(seen.lookup(conflict_keys)[1])
        repeat = verdicts == DUPLICATE
        if self.rule == MAJORITY and repeat.any():
            self._repeat_keys.append(keys[repeat].copy())

    @property
    def needs_second_reading(self) -> bool:
        return self.rule == MAJORITY and self.decided is None and self.conflict_rows > 0

    def decisions(self) -> Decisions:
        """Each disagreeing input's winner (or tie), from the first reading's tally."""
        keys = np.concatenate(self._conflict_keys)
        labels = np.concatenate(self._conflict_labels)
        firsts = np.concatenate(self._first_labels)
        inputs, first_row = np.unique(keys, return_index=True)
        repeats = np.concatenate(self._repeat_keys) if self._repeat_keys else np.zeros(0, dtype=np.uint64)
        repeat_inputs, repeat_counts = np.unique(repeats[np.isin(repeats, inputs)], return_counts=True)
        extra = dict(zip(repeat_inputs.tolist(), repeat_counts.tolist(), strict=True))
        counts: dict[int, Counter[Any]] = {
            key: Counter({first: 1 + extra.get(key, 0)})
            for key, first in zip(inputs.tolist(), firsts[first_row].tolist(), strict=True)
        }
        for key, label in zip(keys.tolist(), labels.tolist(), strict=True):
            counts[key][label] += 1
        winners = np.zeros(len(inputs), dtype=labels.dtype)
        tied = np.zeros(len(inputs), dtype=bool)
        for i, key in enumerate(inputs.tolist()):
            (winner, most), *rest = counts[key].most_common(2)
            winners[i] = winner
            tied[i] = bool(rest) and rest[0][1] == most
        self.first_labels = dict(zip(inputs.tolist(), firsts[first_row].tolist(), strict=True))
        return Decisions(inputs, winners, tied, counts, self.describe_label)

    def summary(self, first: LabelVotes | None) -> dict[str, Any] | None:
        """What the rule did to the split, for the report and the card (None when no input disagreed).

        ``first``: the first reading, when this is the second (its tally names the first labels).
        """
        if self.rule == KEEP_FIRST:
            if not self.conflict_rows:
                return None
            inputs = len(np.unique(np.concatenate(self._conflict_keys)))
            return {"rule": KEEP_FIRST, "inputs": inputs, "rows_rejected": self.conflict_rows}
        if self.decided is None or first is None:
            return None
        decided = self.decided
        firsts = first.first_labels
        relabelled = sum(
            1
            for key, winner, tied in zip(
                decided.keys.tolist(), decided.winners.tolist(), decided.tied.tolist(), strict=True
            )
            if not tied and winner != firsts[key]
        )
        return {
            "rule": MAJORITY,
            "inputs": len(decided.keys),
            "majority_is_first_label": len(decided.keys) - relabelled - int(decided.tied.sum()),
            "majority_is_another_label": relabelled,
            "tied_inputs": int(decided.tied.sum()),
            "rows_rejected_outvoted": self.outvoted_rows,
            "rows_rejected_tied": self.tied_rows,
        }
