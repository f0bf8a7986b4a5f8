"""Why a split ended with no rows, in words for the build's log, report and card.

A split can end empty although its source had valid rows: a validation file whose every
row is also in train (leakage is removed from validation), a validation split carved from
too few train rows, a test split whose every item ``--drop-leaked-test`` removed, an exam's
demonstration pool whose every item is a test item. ``datasets`` cannot load a Parquet split
without rows, so the builder leaves such a split out of the repo
(:meth:`nlue.data.config_builder.ConfigBuilder._leave_out`) and says why with :func:`why_empty`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlue.data.report import SplitReport


def _counted(parts: list[tuple[int, str]]) -> str:
    return ", ".join(f"{count} {what}" for count, what in parts if count)


def why_empty(split: str, report: SplitReport, splits: Mapping[str, SplitReport], fraction: float) -> str:
    """One sentence on why ``split`` (``report``, among the config's ``splits``) holds no row."""
    if report.carved_from_train:
        train = splits.get("train")
        rows = train.kept if train is not None else 0
        return (
            f"carving {100 * fraction:g}% of train held out no row: train has {rows} row{'' if rows == 1 else 's'} "
            "and no label has 2 or more (a label with 2 or more always gives one); give a validation file or "
            "more train rows"
        )
    if split == "train" and "validation" in splits and splits["validation"].carved_from_train:
        return f"every train row was held out for validation (--validation-fraction {fraction:g} of so few rows)"
    removed = _counted(
        [
            (report.leaked_from_train, "also in train"),
            (report.leaked_from_validation, "also in validation"),
            (report.found_in_test, "also in test"),
            (report.duplicates, "repeats"),
            (report.rejected - report.found_in_test, "rejected"),
            (sum(report.dropped_by_label_map.values()), "dropped by the label map"),
        ]
    )
    return f"none of its {report.read} rows is left ({removed or 'no row read'})"
