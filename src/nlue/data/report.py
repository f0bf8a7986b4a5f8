"""What a build is asked to do and what it did: options, sources, and the per-split accounting.

Kept apart from the builder so that the card, the summary and the data access can read a
build's report without importing the builder (and the builder the card).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.data.mapping import FieldMapping
from nlue.data.overlap import OverlapCounts
from nlue.data.parquet_io import DEFAULT_MAX_SHARD_BYTES
from nlue.data.stats import SplitStats
from nlue.registry.tasks import TaskSpec

SPLITS: tuple[str, ...] = ("train", "validation", "test")
SPLIT_ALIASES: Mapping[str, str] = {"dev": "validation", "valid": "validation", "val": "validation"}
DEFAULT_SEED = 42
DEFAULT_VALIDATION_FRACTION = 0.1
REPORT_SUFFIX = ".report.json"
REJECTS_SUFFIX = ".rejects.jsonl"
ENGINES: tuple[str, ...] = ("columnar", "rows")


@dataclass(frozen=True)
class TaskSources:
    """The files that feed one config, per split, and how their schema maps onto ours.

    ``split_mappings`` gives a split its own maps (a task file declares columns and labels per split);
    the other splits take ``mapping``.
    """

    task: TaskSpec
    files: Mapping[str, Sequence[Path]]
    mapping: FieldMapping = field(default_factory=FieldMapping)
    split_mappings: Mapping[str, FieldMapping] = field(default_factory=dict)

    def mapping_for(self, split: str) -> FieldMapping:
        return self.split_mappings.get(split, self.mapping)

    @property
    def mappings(self) -> tuple[FieldMapping, ...]:
        """Every mapping some split is read with."""
        return (self.mapping, *self.split_mappings.values())


@dataclass(frozen=True)
class BuildOptions:
    name: str = "nlue"
    seed: int = DEFAULT_SEED
    validation_fraction: float = DEFAULT_VALIDATION_FRACTION
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES
    strict: bool = False
    is_sample: bool = False
    license: str = "other"
    repo_id: str | None = None  # the Hub id used in the card's examples
    show_progress: bool = True
    # The test split is the release's: its items seen in train/validation are counted and
    # kept, unless this asks to remove them (the old leakage rule, now opt-in).
    drop_leaked_test: bool = False
    # How configs whose rules allow it are built: "columnar" (Arrow batches) or "rows" (one
    # row at a time, the reference the columnar builder is tested against). Same outputs.
    engine: str = "columnar"
    # Which label an input given several labels in train or validation keeps: "majority" (a tie
    # leaves the input out) or "keep-first" (the first row's); see nlue.data.label_votes.
    conflicts: str = "majority"


@dataclass
class SplitReport:
    """What happened to the rows of one split: every row read is accounted for."""

    read: int = 0
    kept: int = 0
    rejected: int = 0
    dropped_by_label_map: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    conflicting_duplicates: int = 0
    leaked_from_train: int = 0  # removed: validation rows always, test rows with drop_leaked_test
    leaked_from_validation: int = 0
    # Test only: repeats of an earlier test row (same label / another label), kept as released.
    kept_duplicates: int = 0
    kept_conflicting_duplicates: int = 0
    # A split that must share no item with test (an exam's demo): its rows that are test items,
    # rejected (and counted in ``rejected``).
    found_in_test: int = 0
    carved_from_train: bool = False
    # Why a split that ended with no rows was left out of the repo ("" when it was not).
    left_out: str = ""
    # What the --conflicts rule did to inputs given several labels (None when none was).
    label_conflicts: dict[str, Any] | None = None
    num_bytes: int = 0
    files: list[str] = field(default_factory=list)
    stats: SplitStats | None = None
    overlap: OverlapCounts | None = None  # validation/test of a config with a train split

    def to_dict(self) -> dict[str, Any]:
        out = {
            "read": self.read,
            "kept": self.kept,
            "rejected": self.rejected,
            "dropped_by_label_map": dict(sorted(self.dropped_by_label_map.items())),
            "duplicates": self.duplicates,
            "conflicting_duplicates": self.conflicting_duplicates,
            "leaked_from_train": self.leaked_from_train,
            "leaked_from_validation": self.leaked_from_validation,
            "kept_duplicates": self.kept_duplicates,
            "kept_conflicting_duplicates": self.kept_conflicting_duplicates,
            "found_in_test": self.found_in_test,
            "carved_from_train": self.carved_from_train,
            **({"left_out": self.left_out} if self.left_out else {}),
            **({"label_conflicts": self.label_conflicts} if self.label_conflicts else {}),
            "num_bytes": self.num_bytes,
            "files": self.files,
        }
        if self.overlap is not None:
            out.update(self.overlap.to_dict())
        if self.stats is not None:
            out["label_counts"] = {str(k): v for k, v in sorted(self.stats.label_counts.items())}
            out["theme_counts"] = dict(sorted(self.stats.group_counts.items()))
            out["text_length_chars"] = self.stats.length_percentiles()
            if self.stats.without_answers is not None:
                out["without_answers"] = self.stats.without_answers
        return out


@dataclass
class ConfigReport:
    task: TaskSpec
    splits: dict[str, SplitReport] = field(default_factory=dict)
    source_files: list[dict[str, str]] = field(default_factory=list)
    translations: list[dict[str, Any]] = field(default_factory=list)  # how each machine-translated source was made
    download_size: int = 0  # bytes of the Parquet files, filled in once they are written

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": self.source_files,
            **({"translations": self.translations} if self.translations else {}),
            "splits": {name: report.to_dict() for name, report in self.splits.items()},
        }


@dataclass
class BuildResult:
    repo_dir: Path
    report_path: Path
    rejects_path: Path
    configs: dict[str, ConfigReport]
    rejects: int
