"""The builder: raw source files -> a Hub-ready `datasets` Parquet repo with a card.

One pass per split streams rows through validation and normalisation, removes exact
duplicates and items that leak from train into validation/test, and writes Parquet
shards. Everything goes to a staging folder that replaces the output only when the
whole build succeeded, so a failed build leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from nlue.errors import NlueError, RowProblem, SourceError
from nlue.features import task_features
from nlue.parquet_io import DEFAULT_MAX_SHARD_BYTES, ShardedSplitWriter
from nlue.rows import Dropped, FieldMapping, RowConverter
from nlue.sources import SUPPORTED_SUFFIXES, read_records
from nlue.stats import SplitStats
from nlue.tasks import TASK_NAMES, TaskSpec, get_task

logger = logging.getLogger(__name__)

SPLITS: tuple[str, ...] = ("train", "validation", "test")
SPLIT_ALIASES: Mapping[str, str] = {"dev": "validation", "valid": "validation", "val": "validation"}
DEFAULT_SEED = 42
DEFAULT_VALIDATION_FRACTION = 0.1
REPORT_SUFFIX = ".report.json"
REJECTS_SUFFIX = ".rejects.jsonl"


@dataclass(frozen=True)
class TaskSources:
    """The files that feed one config, per split, and how their schema maps onto ours."""

    task: TaskSpec
    files: Mapping[str, Sequence[Path]]
    mapping: FieldMapping = field(default_factory=FieldMapping)


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


@dataclass
class SplitReport:
    """What happened to the rows of one split: every row read is accounted for."""

    read: int = 0
    kept: int = 0
    rejected: int = 0
    dropped_by_label_map: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    conflicting_duplicates: int = 0
    leaked_from_train: int = 0
    leaked_from_validation: int = 0
    carved_from_train: bool = False
    num_bytes: int = 0
    files: list[str] = field(default_factory=list)
    stats: SplitStats | None = None

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
            "carved_from_train": self.carved_from_train,
            "num_bytes": self.num_bytes,
            "files": self.files,
        }
        if self.stats is not None:
            out["label_counts"] = {str(k): v for k, v in sorted(self.stats.label_counts.items())}
            out["theme_counts"] = dict(sorted(self.stats.group_counts.items()))
            out["text_length_chars"] = self.stats.length_percentiles()
        return out


@dataclass
class ConfigReport:
    task: TaskSpec
    splits: dict[str, SplitReport] = field(default_factory=dict)
    source_files: list[dict[str, str]] = field(default_factory=list)
    download_size: int = 0  # bytes of the Parquet files, filled in once they are written

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": self.source_files,
            "splits": {name: report.to_dict() for name, report in self.splits.items()},
        }


@dataclass
class BuildResult:
    repo_dir: Path
    report_path: Path
    rejects_path: Path
    configs: dict[str, ConfigReport]
    rejects: int


def discover_sources(root: Path) -> dict[str, dict[str, list[Path]]]:
    """Find ``<root>/<config>/<split>*.<ext>`` files (``dev``/``valid`` mean validation)."""
    if not root.is_dir():
        raise NlueError(f"{root}: source folder not found")
    found: dict[str, dict[str, list[Path]]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        if folder.name not in TASK_NAMES:
            raise NlueError(f"{folder}: not an NLUE config; folders must be named one of {', '.join(TASK_NAMES)}")
        splits: dict[str, list[Path]] = {}
        for path in sorted(folder.iterdir()):
            if path.name.startswith((".", "_")) or path.is_dir():
                continue
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise NlueError(f"{path}: unsupported file type; expected {', '.join(SUPPORTED_SUFFIXES)}")
            split = _split_of(path)
            if split is None:
                raise NlueError(f"{path}: cannot tell the split; name files train*, validation* (or dev*), test*")
            splits.setdefault(split, []).append(path)
        if splits:
            found[folder.name] = splits
    if not found:
        raise NlueError(f"{root}: no source files found (expected <config>/<split>.<ext>)")
    return found


def _split_of(path: Path) -> str | None:
    stem = path.name.split(".")[0].lower()
    for split in (*SPLITS, *SPLIT_ALIASES):
        if stem == split or stem.startswith((split + "_", split + "-")):
            return SPLIT_ALIASES.get(split, split)
    return None


def _fingerprint(values: Sequence[Any]) -> int:
    """A 64-bit fingerprint of normalised values; 8 bytes kept per distinct row."""
    payload = json.dumps(values, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(payload, digest_size=8).digest(), "little")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class _ConfigBuilder:
    """Builds the splits of one config into ``<staging>/<config>/``."""

    def __init__(self, sources: TaskSources, config_dir: Path, options: BuildOptions, rejects: IO[str]) -> None:
        self.task = sources.task
        self.sources = sources
        self.dir = config_dir
        self.options = options
        self.rejects = rejects
        self.rejects_written = 0
        self.features = task_features(self.task)
        self.converter = RowConverter(self.task, sources.mapping)
        self.input_keys = ("sentence",) if self.task.problem_type == "mask_fill" else tuple(self.task.input_fields)
        self.label_field = self.task.label_field

    def build(self) -> ConfigReport:
        report = ConfigReport(self.task)
        files = self.sources.files
        unknown = set(files) - set(self.task.splits)
        if unknown:
            raise NlueError(
                f"config {self.task.name!r} has splits {', '.join(self.task.splits)}; "
                f"got source files for {', '.join(sorted(unknown))}"
            )
        for split_files in files.values():
            for path in split_files:
                report.source_files.append({"file": path.name, "sha256": _sha256(path)})
        self.dir.mkdir(parents=True)
        train_keys: set[int] = set()
        validation_keys: set[int] = set()
        carve = "train" in files and "validation" not in files and self.task.problem_type != "mask_fill"
        for split in self.task.splits:
            if split not in files:
                continue
            if split == "train" and carve:
                report.splits.update(self._build_train_with_carved_validation(files["train"], train_keys))
                validation_keys = self._carved_validation_keys
                continue
            exclude = {"train": train_keys} if split != "train" else {}
            if split == "test" and validation_keys:
                exclude["validation"] = validation_keys
            seen = train_keys if split == "train" else (validation_keys if split == "validation" else set())
            writer = ShardedSplitWriter(self.dir, split, self.features, self.options.max_shard_bytes)
            split_report = SplitReport(stats=self._new_stats())
            for row in self._kept_rows(files[split], split, split_report, seen, exclude):
                split_report.stats.add(row)  # type: ignore[union-attr]
                writer.write(row)
            self._finish(split_report, writer)
            report.splits[split] = split_report
        return report

    def _new_stats(self) -> SplitStats:
        return SplitStats(self.task.text_fields, self.label_field)

    def _finish(self, split_report: SplitReport, writer: ShardedSplitWriter) -> None:
        files = writer.close()
        split_report.kept = writer.num_rows
        split_report.num_bytes = writer.num_bytes
        split_report.files = [f"{self.task.name}/{p.name}" for p in files]

    def _reject(self, split: str, problem: RowProblem) -> None:
        if self.options.strict:
            raise SourceError(problem)
        record = {"config": self.task.name, "split": split, **problem.to_dict()}
        self.rejects.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.rejects_written += 1

    def _kept_rows(
        self,
        paths: Sequence[Path],
        split: str,
        report: SplitReport,
        seen: set[int],
        exclude: Mapping[str, set[int]],
    ) -> Iterator[dict[str, Any]]:
        """Valid, de-duplicated, non-leaking rows of a split, in source order."""
        seen_full: set[int] = set()
        for path in paths:
            read_before, kept_before = report.read, report.kept
            first_problem: RowProblem | None = None
            records = read_records(path)
            if self.options.show_progress:
                records = tqdm(records, desc=f"{self.task.name}/{split} {path.name}", unit=" rows", leave=False)
            for row_number, record in records:
                report.read += 1
                if report.read == read_before + 1:  # first record: are the columns there?
                    self.converter.check_columns(str(path), row_number, record.keys())
                result = self.converter.convert(str(path), row_number, record)
                if isinstance(result, Dropped):
                    report.dropped_by_label_map[result.label] += 1
                    continue
                if isinstance(result, RowProblem):
                    report.rejected += 1
                    first_problem = first_problem or result
                    self._reject(split, result)
                    continue
                key = _fingerprint([result[k] for k in self.input_keys])
                leak = next((name for name, keys in exclude.items() if key in keys), None)
                if leak is not None:
                    if leak == "train":
                        report.leaked_from_train += 1
                    else:
                        report.leaked_from_validation += 1
                    continue
                full = _fingerprint([result[k] for k in self.input_keys] + [result.get(self.label_field or "")])
                if key in seen:
                    if full in seen_full:
                        report.duplicates += 1
                    else:
                        report.conflicting_duplicates += 1
                        report.rejected += 1
                        self._reject(
                            split,
                            RowProblem(
                                str(path), row_number, self.label_field or "answers",
                                "same input as an earlier row but a different label; the earlier row is kept",
                            ),
                        )  # fmt: skip
                    continue
                seen.add(key)
                seen_full.add(full)
                report.kept += 1
                yield result
            if report.read == read_before:
                raise SourceError(RowProblem(str(path), 0, "(file)", "empty file: no data rows"))
            if report.kept == kept_before and first_problem is not None:
                raise SourceError(
                    RowProblem(
                        str(path), first_problem.row, first_problem.field,
                        f"no valid rows; the first problem: {first_problem.reason}",
                        first_problem.value,
                    )
                )  # fmt: skip
        report.kept = 0  # recounted from what the writer actually wrote

    def _build_train_with_carved_validation(
        self, paths: Sequence[Path], train_keys: set[int]
    ) -> dict[str, SplitReport]:
        """Train has no validation split: hold out a stratified, seeded fraction of it."""
        spill_writer = ShardedSplitWriter(self.dir, "_spill", self.features, max_shard_bytes=1 << 62)
        source_report = SplitReport()
        strata: list[int] = []
        for row in self._kept_rows(paths, "train", source_report, train_keys, {}):
            strata.append(self._stratum(row))
            spill_writer.write(row)
        spill_files = spill_writer.close()
        held_out = _stratified_holdout(np.asarray(strata), self.options.validation_fraction, self.options.seed)
        train_writer = ShardedSplitWriter(self.dir, "train", self.features, self.options.max_shard_bytes)
        val_writer = ShardedSplitWriter(self.dir, "validation", self.features, self.options.max_shard_bytes)
        train_report = source_report
        train_report.stats = self._new_stats()
        val_report = SplitReport(carved_from_train=True, stats=self._new_stats())
        self._carved_validation_keys: set[int] = set()
        position = 0
        for batch in pq.ParquetFile(spill_files[0]).iter_batches(batch_size=10_000):
            for row in batch.to_pylist():
                row.pop("idx")
                if held_out[position]:
                    val_report.stats.add(row)  # type: ignore[union-attr]
                    val_writer.write(row)
                    key = _fingerprint([row[k] for k in self.input_keys])
                    self._carved_validation_keys.add(key)
                else:
                    train_report.stats.add(row)
                    train_writer.write(row)
                position += 1
        for path in spill_files:
            path.unlink()
        self._finish(train_report, train_writer)
        self._finish(val_report, val_writer)
        return {"train": train_report, "validation": val_report}

    def _stratum(self, row: dict[str, Any]) -> int:
        if self.task.problem_type == "regression":
            return round(float(row[self.label_field]))  # score bands 0..5
        return int(row[self.label_field])


def _stratified_holdout(strata: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Boolean mask choosing ``fraction`` of each stratum (at least one where it has 2+)."""
    mask = np.zeros(len(strata), dtype=bool)
    rng = np.random.default_rng(seed)
    for value in np.unique(strata):
        positions = np.flatnonzero(strata == value)
        count = round(fraction * len(positions))
        if count == 0 and len(positions) >= 2 and fraction > 0:
            count = 1
        mask[rng.permutation(positions)[:count]] = True
    return mask


def build_repo(sources: Sequence[TaskSources], out_dir: Path, options: BuildOptions) -> BuildResult:
    """Build every config in ``sources`` into ``out_dir/<name>`` (+ report and rejects beside it)."""
    from nlue.card import write_dataset_card  # the card imports huggingface_hub; keep import local

    if not sources:
        raise NlueError("nothing to build: no configs given")
    if not 0.0 < options.validation_fraction < 1.0:
        raise NlueError(f"--validation-fraction must be between 0 and 1, got {options.validation_fraction}")
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{options.name}.staging-", dir=out_dir))
    try:
        repo = staging / options.name
        repo.mkdir()
        rejects_path = staging / f"{options.name}{REJECTS_SUFFIX}"
        configs: dict[str, ConfigReport] = {}
        rejects = 0
        with rejects_path.open("w", encoding="utf-8") as rejects_file:
            for task_sources in sorted(sources, key=lambda s: TASK_NAMES.index(s.task.name)):
                builder = _ConfigBuilder(task_sources, repo / task_sources.task.name, options, rejects_file)
                configs[task_sources.task.name] = builder.build()
                rejects += builder.rejects_written
        write_dataset_card(repo, configs, options)
        report_path = staging / f"{options.name}{REPORT_SUFFIX}"
        report = {
            "name": options.name,
            "seed": options.seed,
            "validation_fraction": options.validation_fraction,
            "is_sample": options.is_sample,
            "rejects": rejects,
            "configs": {name: cfg.to_dict() for name, cfg in configs.items()},
        }
        report_path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        final = _move_into_place(staging, out_dir, options.name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BuildResult(
        repo_dir=final / options.name if final != out_dir else out_dir / options.name,
        report_path=out_dir / f"{options.name}{REPORT_SUFFIX}",
        rejects_path=out_dir / f"{options.name}{REJECTS_SUFFIX}",
        configs=configs,
        rejects=rejects,
    )


def _move_into_place(staging: Path, out_dir: Path, name: str) -> Path:
    """Replace the previous build (if any) with the staged one, then drop the old copy."""
    retired = Path(tempfile.mkdtemp(prefix=f".{name}.old-", dir=out_dir))
    try:
        for entry in sorted(staging.iterdir()):
            target = out_dir / entry.name
            if target.exists():
                os.replace(target, retired / entry.name)
            os.replace(entry, target)
    finally:
        shutil.rmtree(retired, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir


def task_sources_from_folder(root: Path, configs: Sequence[str] | None = None) -> list[TaskSources]:
    found = discover_sources(root)
    wanted = list(configs) if configs else list(found)
    missing = [c for c in wanted if c not in found]
    if missing:
        raise NlueError(f"{root}: no source files for {', '.join(missing)}")
    return [TaskSources(get_task(name), found[name]) for name in wanted]
