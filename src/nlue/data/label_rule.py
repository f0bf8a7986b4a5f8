"""Building a train or validation split under the ``--conflicts`` rule (a step of the config builder).

Kept apart from :mod:`nlue.data.config_builder`, whose :class:`~nlue.data.config_builder.ConfigBuilder`
inherits it: reading a split a second time when its inputs disagree on a label, undoing the first
build of it, and the reasons its rejected rows get. The rule itself is :mod:`nlue.data.label_votes`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from nlue.data import overlap
from nlue.data.label_votes import KEEP_FIRST, LabelVotes
from nlue.data.report import SplitReport

logger = logging.getLogger(__name__)

_CONFLICT_REASON = (
    "same input as an earlier row but a different label; the earlier row is kept (--conflicts keep-first)"
)
_CONFLICT_STRICT_REASON = (
    "same input as an earlier row but a different label (--strict stops at the first input given two labels)"
)


class LabelRule:
    """The config builder's ``--conflicts`` step: a mixin of :class:`~nlue.data.config_builder.ConfigBuilder`."""

    dir: Path
    options: Any
    task: Any
    label_dtype: Any
    label_field: Any
    input_keys: Any
    rejects: IO[str]
    rejects_written: int
    train_index: overlap.TrainIndex
    _votes: LabelVotes | None

    def _new_train_index(self) -> overlap.TrainIndex:
        raise NotImplementedError

    # ------------------------------------------------------------ inputs given several labels
    def _by_label_rule(self, split: str, build: Callable[[], dict[str, SplitReport]]) -> dict[str, SplitReport]:
        """``build()`` a split under the ``--conflicts`` rule (:mod:`nlue.data.label_votes`).

        A train or validation split whose inputs disagree on a label is built a second time under
        the majority rule, with each such input's winner known; what the first build wrote (its
        shards, its rejects, its train index) is undone first.
        """
        if split == "test" or self.label_dtype is None:
            self._votes = None
            return build()
        first = self._votes = LabelVotes(self.options.conflicts, self._label_shown)
        mark = (self.rejects.tell(), self.rejects_written)
        reports = build()
        if first.needs_second_reading:
            decided = first.decisions()
            logger.info(
                "%s/%s: %d inputs are given two or more labels; reading the split again to keep each one's "
                "majority label (--conflicts majority)", self.task.name, split, len(decided.keys),
            )  # fmt: skip
            self._undo(reports, mark, split)
            self._votes = LabelVotes(self.options.conflicts, self._label_shown, decided)
            reports = build()
            if self._votes.conflict_rows:  # the second reading found a disagreement the first did not
                raise RuntimeError(f"{self.task.name}/{split}: labels still disagree after the majority was decided")
        reports[split].label_conflicts = self._votes.summary(first)
        self._votes = None
        return reports

    def _undo(self, reports: Mapping[str, SplitReport], mark: tuple[int, int], split: str) -> None:
        """Take back what a first build of a split wrote: its rejects, its shards and (train) its index."""
        position, written = mark
        self.rejects.seek(position)
        self.rejects.truncate()
        self.rejects_written = written
        for split_report in reports.values():
            for name in split_report.files:
                (self.dir / Path(name).name).unlink()
        if split == "train":
            self.train_index = self._new_train_index()

    def _label_shown(self, code: Any) -> str:
        """A label code as the reject reasons show it: the class name, or the score."""
        if self.task.label_names:
            return self.task.label_names[int(code)]
        if self.label_dtype == np.uint64:  # a score's float64 bits
            return f"{np.array([code], dtype=np.uint64).view(np.float64)[0]:g}"
        return str(code)

    def _rejection(self, verdict: int, key: Any, split: str) -> tuple[str, str]:
        """The field and reason of a row a verdict rejects."""
        if verdict == overlap.FOUND_IN_TEST:
            return self.input_keys[0], (
                f"the same {', '.join(self.input_keys)} as a test item (after normalisation); the {split} split "
                "must share no item with test"
            )
        label_field = self.label_field or "answers"
        if verdict == overlap.CONFLICT:
            if self.options.conflicts == KEEP_FIRST:
                return label_field, _CONFLICT_REASON
            return label_field, _CONFLICT_STRICT_REASON  # the majority's first reading: shown under --strict only
        assert self._votes is not None and self._votes.decided is not None
        return label_field, self._votes.decided.reason(key, verdict)
