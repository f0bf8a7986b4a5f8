"""Measured statistics of a built split, gathered while rows stream past.

Memory does not grow with the number of rows: text lengths are kept as a histogram
(exact counts per length), labels, GMET themes and exam subjects and levels as counts per
distinct value.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

PERCENTILES: tuple[int, ...] = (5, 50, 95)
# Lengths below this are counted in a dense array (8 bytes per length up to the longest
# text seen, at most 512 KiB); the rare longer texts in a dict keyed by length. Both are
# exact, so the percentiles are the same as over the full list of lengths.
DENSE_LENGTH_CAP = 1 << 16


@dataclass
class LengthHistogram:
    """Exact counts of text lengths, in memory bounded by the distinct lengths seen."""

    dense: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    long: Counter[int] = field(default_factory=Counter)

    @property
    def count(self) -> int:
        return int(self.dense.sum()) + sum(self.long.values())

    def add(self, lengths: np.ndarray) -> None:
        """Count a batch of lengths (non-negative integers)."""
        if lengths.size == 0:
            return
        short = lengths[lengths < DENSE_LENGTH_CAP]
        if short.size:
            counts = np.bincount(short, minlength=self.dense.size)
            if counts.size > self.dense.size:
                counts[: self.dense.size] += self.dense
                self.dense = counts
            else:
                self.dense += counts
        if short.size < lengths.size:
            self.long.update(lengths[lengths >= DENSE_LENGTH_CAP].tolist())

    def value_at_rank(self, rank: int) -> int:
        """The length at 0-based position ``rank`` of the sorted lengths."""
        cumulative = np.cumsum(self.dense)
        if cumulative.size and rank < cumulative[-1]:
            return int(np.searchsorted(cumulative, rank, side="right"))
        seen = int(cumulative[-1]) if cumulative.size else 0
        for length in sorted(self.long):
            seen += self.long[length]
            if rank < seen:
                return length
        raise IndexError(f"rank {rank} is outside the {self.count} lengths counted")

    def percentile(self, p: float) -> int:
        """Same as ``np.percentile(lengths, p, method="nearest")`` over every length counted."""
        # numpy's "nearest" takes the sorted value at index round-half-even((n - 1) * q).
        rank = int(np.around((self.count - 1) * np.true_divide(p, 100)))
        return self.value_at_rank(rank)

    def max(self) -> int:
        if self.long:
            return max(self.long)
        return int(np.flatnonzero(self.dense)[-1])


@dataclass
class SplitStats:
    """Label distribution and text lengths of one split, in memory that does not grow per row."""

    text_fields: tuple[str, ...]
    label_field: str | None
    label_counts: Counter[Any] = field(default_factory=Counter)
    group_counts: Counter[str] = field(default_factory=Counter)  # GMET: rows per theme
    # Exams (multiple choice): rows per (domain, subdomain) and per level.
    subject_counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    level_counts: Counter[str] = field(default_factory=Counter)
    # GMET: rows with no listed answers (scored by human judging only); None for other tasks.
    without_answers: int | None = None
    _lengths: dict[str, LengthHistogram] = field(default_factory=dict)

    def add(self, row: dict[str, Any]) -> None:
        """Count one row (a dict of a built split's columns)."""
        for name in self.text_fields:
            self._histogram(name).add(np.array([len(row[name])], dtype=np.int64))
        if self.label_field is not None:
            self.label_counts[row[self.label_field]] += 1
        if "theme" in row:
            self.group_counts[row["theme"]] += 1
        if "answers" in row:
            self.without_answers = (self.without_answers or 0) + int(not row["answers"])
        if "subdomain" in row and "domain" in row:
            self.subject_counts[(row["domain"], row["subdomain"])] += 1
        if "level" in row:
            self.level_counts[row["level"]] += 1

    def add_table(self, table: pa.Table) -> None:
        """Count every row of ``table``, as :meth:`add` would row by row."""
        if table.num_rows == 0:
            return
        for name in self.text_fields:
            # utf8_length counts code points, as len() does (Arrow strings hold no lone surrogates).
            lengths = pc.utf8_length(table.column(name)).to_numpy().astype(np.int64)
            self._histogram(name).add(lengths)
        if self.label_field is not None:
            labels = table.column(self.label_field)
            if pa.types.is_integer(labels.type):  # class ids: counted by Arrow, the same keys and counts
                counted = pc.value_counts(labels)
                values, counts = counted.field("values").to_pylist(), counted.field("counts").to_pylist()
                for value, count in zip(values, counts, strict=True):
                    self.label_counts[value] += count
            else:
                # Counter.update walks values in row order, so keys (e.g. 0.0 vs -0.0) are those add() keeps.
                self.label_counts.update(labels.to_pylist())
        if "theme" in table.column_names:
            self.group_counts.update(table.column("theme").to_pylist())
        if "answers" in table.column_names:
            lengths = pc.list_value_length(table.column("answers")).fill_null(0)
            empty = pc.sum(pc.equal(lengths, 0)).as_py() or 0
            self.without_answers = (self.without_answers or 0) + empty
        if "subdomain" in table.column_names and "domain" in table.column_names:
            domains, subdomains = table.column("domain").to_pylist(), table.column("subdomain").to_pylist()
            self.subject_counts.update(zip(domains, subdomains, strict=True))
        if "level" in table.column_names:
            self.level_counts.update(table.column("level").to_pylist())

    def _histogram(self, name: str) -> LengthHistogram:
        histogram = self._lengths.get(name)
        if histogram is None:
            histogram = self._lengths[name] = LengthHistogram()
        return histogram

    def length_percentiles(self) -> dict[str, dict[str, int]]:
        """Characters per text field at the 5th/50th/95th percentile and the maximum."""
        out: dict[str, dict[str, int]] = {}
        for name, histogram in self._lengths.items():
            if not histogram.count:
                continue
            summary = {f"p{p}": histogram.percentile(p) for p in PERCENTILES}
            summary["max"] = histogram.max()
            out[name] = summary
        return out
