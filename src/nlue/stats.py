"""Measured statistics of a built split, gathered while rows stream past."""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PERCENTILES: tuple[int, ...] = (5, 50, 95)


@dataclass
class SplitStats:
    """Label distribution and text lengths of one split (compact: 4 bytes per row per field)."""

    text_fields: tuple[str, ...]
    label_field: str | None
    label_counts: Counter[Any] = field(default_factory=Counter)
    group_counts: Counter[str] = field(default_factory=Counter)  # GMET: rows per theme
    _lengths: dict[str, array] = field(default_factory=dict)

    def add(self, row: dict[str, Any]) -> None:
        for name in self.text_fields:
            self._lengths.setdefault(name, array("I")).append(len(row[name]))
        if self.label_field is not None:
            self.label_counts[row[self.label_field]] += 1
        if "theme" in row:
            self.group_counts[row["theme"]] += 1

    def length_percentiles(self) -> dict[str, dict[str, int]]:
        """Characters per text field at the 5th/50th/95th percentile and the maximum."""
        out: dict[str, dict[str, int]] = {}
        for name, values in self._lengths.items():
            if not values:
                continue
            data = np.frombuffer(values, dtype=np.uint32)
            summary = {f"p{p}": int(np.percentile(data, p, method="nearest")) for p in PERCENTILES}
            summary["max"] = int(data.max())
            out[name] = summary
        return out
