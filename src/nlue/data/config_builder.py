"""Building one config: its sources' rows validated, de-duplicated, checked for overlap, carved and written.

Memory does not grow with the rows beyond a fixed-width record per distinct row: rows
are held a batch at a time, statistics are histograms and counts, and what must be
remembered about every row is a 64-bit fingerprint of its inputs (see
:mod:`nlue.data.fingerprints` and :class:`ConfigBuilder` for the bytes per row).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
from tqdm.auto import tqdm

from nlue.data import overlap
from nlue.data.carve import stratum_dtype
from nlue.data.carved_validation import CarvedValidation
from nlue.data.empty_splits import why_empty
from nlue.data.fingerprints import FingerprintSet, as_keys, fingerprint
from nlue.data.label_rule import LabelRule
from nlue.data.label_votes import LabelVotes
from nlue.data.parquet_io import ShardedSplitWriter, SpillWriter
from nlue.data.report import (
    BuildOptions,
    ConfigReport,
    SplitReport,
    TaskSources,
)
from nlue.data.rows import Dropped, RowConverter
from nlue.data.source_file import WatchedSource, keep_digest
from nlue.data.sources import read_records
from nlue.data.stats import SplitStats
from nlue.data.translation_provenance import translation_provenance
from nlue.errors import NlueError, RowProblem, SourceError
from nlue.registry.features import task_features

logger = logging.getLogger(__name__)


# Rows converted before their fingerprints are checked together: a few MiB of rows held,
# and numpy calls that each cover thousands of rows.
DEDUP_BATCH_ROWS = 8192
_REJECTED_VERDICTS = (overlap.CONFLICT, overlap.FOUND_IN_TEST, overlap.OUTVOTED, overlap.TIED)


@dataclass
class _Batch:
    """Converted rows of one source file, and the rows rejected among them, in source order."""

    path: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    row_numbers: list[int] = field(default_factory=list)
    digests: list[bytes] = field(default_factory=list)
    labels: list[Any] = field(default_factory=list)
    # Each problem with the number of rows before it, to write rejects in source order.
    problems: list[tuple[int, RowProblem]] = field(default_factory=list)

    def add_problem(self, problem: RowProblem) -> None:
        self.problems.append((len(self.rows), problem))


class ConfigBuilder(CarvedValidation, LabelRule):
    """Builds the splits of one config into ``<staging>/<config>/``.

    What still grows with the rows, per distinct row kept (see :mod:`nlue.data.fingerprints`):

    * an 8-byte fingerprint of the inputs. Train and validation fingerprints stay until
      the config is done, since test rows are checked against them;
    * per train row, for the overlap counts of :mod:`nlue.data.overlap`: an 8-byte key of the
      folded inputs, and for a task with 2+ inputs one per input field (per distinct
      value); while validation is carved, the same per carved row until the built
      train split is complete;
    * while a split is de-duplicated, a label code beside it: 1 byte for a class id, 8
      for a score (its float64 bits), none for GMET;
    * while a validation split is carved: a 1-byte stratum during the train pass, then
      a 1-byte held-out mask, and during the seeded draw 4 bytes per row of one stratum;
    * while a train or validation split is first read under ``--conflicts majority``: 8 bytes
      per row that repeats an input (:mod:`nlue.data.label_votes`).

    So ~18 bytes per row for a single-input classification train split (~21 at the
    draw), up to ~34 for MNLI and ~41 for STS-B. Rows are held a batch at a time, text
    lengths are histograms (bounded by the longest text, not the row count) and labels
    are counted per distinct value; for STS-B that is per distinct score, a few hundred
    at the usual precision.
    """

    def __init__(self, sources: TaskSources, config_dir: Path, options: BuildOptions, rejects: IO[str]) -> None:
        self.task = sources.task
        self.sources = sources
        self.dir = config_dir
        self.options = options
        self.rejects = rejects
        self.rejects_written = 0
        self.features = task_features(self.task)
        self.converter = RowConverter(self.task, sources.mapping)
        self._converters = {id(sources.mapping): self.converter}  # one per mapping the splits are read with
        self.input_keys = self.task.kind.identity_fields(self.task)
        self.label_field = self.task.label_field
        self.label_dtype = self.task.kind.label_code_dtype(self.task)
        self.stratum_dtype = stratum_dtype(self.task)
        self.train_index = self._new_train_index()
        self._votes: LabelVotes | None = None  # the --conflicts tally of the split being read
        # The SHA-256 of the bytes read from each source file (nlue.data.source_file), for the report.
        self.read_digests: dict[Path, str] = {}

    def build(self) -> ConfigReport:
        report = ConfigReport(self.task)
        files = self.sources.files
        unknown = set(files) - set(self.task.splits)
        if unknown:
            raise NlueError(
                f"config {self.task.name!r} has splits {', '.join(self.task.splits)}; "
                f"got source files for {', '.join(sorted(unknown))}"
            )
        for split, split_files in files.items():
            for path in split_files:
                made = translation_provenance(path)
                if made is not None:
                    report.translations.append({"split": split, **made})
        self.dir.mkdir(parents=True)
        keys: dict[str, FingerprintSet] = {}  # each built split's fingerprints, once it is built
        has_train = "train" in files
        carve = has_train and "validation" not in files and self.task.kind.carves_validation
        for split in self._split_order():
            if split == "train" and carve:
                build = partial(self._build_train_with_carved_validation, files["train"], keys)
            else:
                build = partial(self._build_split, split, files[split], keys, has_train)
            report.splits.update(self._by_label_rule(split, build))
        report.splits = {split: report.splits[split] for split in self.task.splits if split in report.splits}
        report.source_files = [
            {"file": path.name, "sha256": self.read_digests[path]}
            for split_files in files.values()
            for path in split_files
        ]
        for split, split_report in report.splits.items():
            if not split_report.kept:
                self._leave_out(split, split_report, report.splits)
        return report

    def _build_split(
        self, split: str, paths: Sequence[Path], keys: dict[str, FingerprintSet], has_train: bool
    ) -> dict[str, SplitReport]:
        """Build one split from its files; its fingerprints go to ``keys[split]``."""
        exclude: dict[str, FingerprintSet] = {}
        if split == "test" and len(keys.get("validation", ())):
            # Validation first: a carved validation row is in train's keys too (train was
            # de-duplicated before the carve), but in the built train split it is not.
            exclude["validation"] = keys["validation"]
        if split != "train" and "train" in keys:
            exclude["train"] = keys["train"]
        if split in self.task.kind.apart_from_test and "test" in keys:
            exclude["test"] = keys["test"]
        seen = FingerprintSet(self.label_dtype)
        split_report = SplitReport(stats=self._new_stats())
        if split != "train" and has_train:
            split_report.overlap = self.train_index.new_counts()
        writer = self._split_writer(split, split_report)
        for kept in self._kept_rows(paths, split, split_report, seen, exclude):
            self._write_kept(writer, kept)
            if split == "train":
                self.train_index.add(self.train_index.keys(self._kept_columns(kept)))
        seen.drop_labels()  # later splits check their keys only
        keys[split] = seen
        self._log_fingerprints(split, seen)
        self._finish(split_report, writer)
        return {split: split_report}

    def _converter(self, split: str) -> RowConverter:
        """The row converter of ``split``'s mapping (a split declared with its own column and label maps)."""
        mapping = self.sources.mapping_for(split)
        if id(mapping) not in self._converters:
            self._converters[id(mapping)] = RowConverter(self.task, mapping)
        return self._converters[id(mapping)]

    def _new_train_index(self) -> overlap.TrainIndex:
        return overlap.TrainIndex(self.input_keys)

    def _split_order(self) -> list[str]:
        """The splits with sources, in the task's order; test first when a split must share no item with it."""
        present = [split for split in self.task.splits if split in self.sources.files]
        if "test" in present and set(present) & set(self.task.kind.apart_from_test):
            present.remove("test")
            present.insert(0, "test")
        return present

    def _leave_out(self, split: str, split_report: SplitReport, splits: Mapping[str, SplitReport]) -> None:
        """Remove a split that ended with no rows: ``datasets`` cannot load a Parquet split without rows
        (ArrowInvalid: BatchSize must be greater than 0). The report, the card and the log say why."""
        for name in split_report.files:
            (self.dir / Path(name).name).unlink()
        split_report.files = []
        split_report.num_bytes = 0
        split_report.left_out = why_empty(split, split_report, splits, self.options.validation_fraction)
        logger.warning("%s/%s is left out: %s", self.task.name, split, split_report.left_out)

    # ------------------------------------------------------------ how kept rows are held
    # The row path holds kept rows as dicts; the columnar builder (nlue.data.columnar_builder)
    # overrides these to hold them as Arrow tables.
    def _write_kept(self, writer: ShardedSplitWriter | SpillWriter, kept: Any) -> None:
        writer.write_rows(kept)

    def _kept_columns(self, kept: Any) -> Mapping[str, Sequence[Any]]:
        """The input columns of kept rows, in ``input_keys`` order."""
        return overlap.columns_of_rows(kept, self.input_keys)

    def _spilled_key_fields(self) -> Sequence[pa.Field]:
        """Columns of row keys kept beside spilled rows (none: the row path recomputes them)."""
        return ()

    def _table_fingerprints(self, table: pa.Table) -> np.ndarray:
        """Fingerprints of a table's rows, as the split's rows were fingerprinted when read."""
        columns = self._table_columns(table)
        return as_keys([fingerprint(v) for v in zip(*columns.values(), strict=True)])

    def _new_stats(self) -> SplitStats:
        return SplitStats(self.task.text_fields, self.label_field)

    def _split_writer(self, split: str, split_report: SplitReport) -> ShardedSplitWriter:
        """A writer for ``split`` whose tables also feed the report's statistics."""
        stats = split_report.stats
        on_table = stats.add_table if stats is not None else None
        return ShardedSplitWriter(self.dir, split, self.features, self.options.max_shard_bytes, on_table=on_table)

    def _finish(self, split_report: SplitReport, writer: ShardedSplitWriter) -> None:
        files = writer.close()
        split_report.kept = writer.num_rows
        split_report.num_bytes = writer.num_bytes
        split_report.files = [f"{self.task.name}/{p.name}" for p in files]

    def _log_fingerprints(self, split: str, keys: FingerprintSet) -> None:
        logger.debug("%s/%s: %d fingerprints kept in %.1f MiB", self.task.name, split, len(keys), keys.nbytes / 2**20)

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
        seen: FingerprintSet,
        exclude: Mapping[str, FingerprintSet],
    ) -> Iterator[list[dict[str, Any]]]:
        """The rows of a split that are kept, in source order, a batch at a time.

        ``seen`` holds the fingerprints (with label codes) of the split's distinct rows so
        far and grows as rows are kept; a row whose fingerprint is in one of ``exclude``
        also occurs in that split. Train and validation keep valid rows that are neither
        repeats nor (validation) found in train; test keeps every valid row, counting
        repeats and rows found elsewhere, unless ``drop_leaked_test`` removes the latter.
        """
        for path in paths:
            read_before, kept_before = report.read, report.kept
            first_problem: RowProblem | None = None
            for batch in self._converted_batches(path, split, report):
                if first_problem is None and batch.problems:
                    first_problem = batch.problems[0][1]
                yield self._decide(batch, split, report, seen, exclude)
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

    def _converted_batches(self, path: Path, split: str, report: SplitReport) -> Iterator[_Batch]:
        """The file's rows, validated and normalised, in batches of ``DEDUP_BATCH_ROWS``."""
        source = WatchedSource(path)
        records = read_records(path, source)
        if self.options.show_progress:
            records = tqdm(records, desc=f"{self.task.name}/{split} {path.name}", unit=" rows", leave=False)
        read_before = report.read
        name = str(path)
        batch, in_batch = _Batch(name), 0  # in_batch: rows and problems in the batch
        label_field = self.label_field or ""
        input_keys = self.input_keys
        converter = self._converter(split)
        convert = converter.convert  # bound once: this loop runs per source row
        try:
            for row_number, record in records:
                report.read += 1
                if report.read == read_before + 1:  # first record: are the columns there?
                    converter.check_columns(name, row_number, record.keys())
                result = convert(name, row_number, record)
                if type(result) is dict:
                    batch.rows.append(result)
                    batch.row_numbers.append(row_number)
                    batch.digests.append(fingerprint([result[k] for k in input_keys]))
                    batch.labels.append(result.get(label_field))
                elif isinstance(result, Dropped):
                    report.dropped_by_label_map[result.label] += 1
                    continue
                else:
                    assert isinstance(result, RowProblem)
                    report.rejected += 1
                    if self.options.strict:
                        yield batch  # the rows before it first: an earlier conflict is the first error
                        batch, in_batch = _Batch(name), 0
                        self._reject(split, result)  # raises
                    batch.add_problem(result)
                in_batch += 1
                if in_batch >= DEDUP_BATCH_ROWS:
                    yield batch
                    batch, in_batch = _Batch(name), 0
        except Exception:
            # The error ends the build; the rows before it are decided first, so that a
            # conflicting duplicate before it (an error under --strict) is the one raised.
            yield batch
            raise
        keep_digest(self.read_digests, source)
        yield batch

    def _decide(
        self,
        batch: _Batch,
        split: str,
        report: SplitReport,
        seen: FingerprintSet,
        exclude: Mapping[str, FingerprintSet],
    ) -> list[dict[str, Any]]:
        """Count and reject the entries of ``batch``; the rows kept, in source order."""
        keep, rejected, found_in = self._verdicts(
            as_keys(batch.digests), self._label_codes(batch.labels), split, report, seen, exclude
        )
        if batch.problems or rejected:
            self._write_rejects(batch, split, rejected)
        kept_count = int(np.count_nonzero(keep))
        report.kept += kept_count
        rows = batch.rows if kept_count == len(batch.rows) else list(compress(batch.rows, keep.tolist()))
        if report.overlap is not None and rows:
            self.train_index.count_kept(self._kept_columns(rows), found_in[keep], report.overlap)
        return rows

    def _verdicts(
        self,
        keys: np.ndarray,
        label_codes: np.ndarray | None,
        split: str,
        report: SplitReport,
        seen: FingerprintSet,
        exclude: Mapping[str, FingerprintSet],
    ) -> tuple[np.ndarray, list[tuple[int, int]], np.ndarray]:
        """Decide and count a batch's valid rows: which are kept, which are rejected (position and verdict:
        a conflicting repeat, or a test item in a split that must share none with test), where each was found."""
        is_test = split == "test"
        drop_leaks = not is_test or self.options.drop_leaked_test
        votes = self._votes
        ruled = votes.decided.rule_rows if votes is not None and votes.decided is not None else None
        verdicts, found_in = overlap.row_verdicts(keys, label_codes, seen, exclude, drop_leaks, ruled)
        counts = np.bincount(verdicts, minlength=overlap.VERDICTS).tolist()
        if is_test:  # the release's own test items: repeats are counted and kept
            report.kept_duplicates += counts[overlap.DUPLICATE]
            report.kept_conflicting_duplicates += counts[overlap.CONFLICT]
            keep = verdicts <= overlap.CONFLICT
            rejected: list[tuple[int, str, str]] = []
        else:
            if votes is not None:
                votes.tally(keys, label_codes, verdicts, seen)
            disagreeing = counts[overlap.CONFLICT] + counts[overlap.OUTVOTED] + counts[overlap.TIED]
            report.duplicates += counts[overlap.DUPLICATE]
            report.conflicting_duplicates += disagreeing
            report.rejected += disagreeing + counts[overlap.FOUND_IN_TEST]
            report.found_in_test += counts[overlap.FOUND_IN_TEST]
            keep = verdicts == overlap.KEEP
            positions = np.flatnonzero(np.isin(verdicts, _REJECTED_VERDICTS))
            rejected = [
                (i, *self._rejection(verdict, keys[i], split))
                for i, verdict in zip(positions.tolist(), verdicts[positions].tolist(), strict=True)
            ]
        report.leaked_from_train += counts[overlap.FOUND_IN_TRAIN]
        report.leaked_from_validation += counts[overlap.FOUND_IN_VALIDATION]
        return keep, rejected, found_in

    def _write_rejects(self, batch: Any, split: str, rejected: list[tuple[int, str, str]]) -> None:
        """Reject the batch's problems and the rows its verdicts reject (see :meth:`_verdicts`), in source order.

        A problem noted with ``n`` rows before it comes before row ``n``.
        """
        conflict_problems = [
            (i, RowProblem(batch.path, int(batch.row_numbers[i]), field, reason)) for i, field, reason in rejected
        ]
        # sorted() is stable and the key leaves the problems uncompared: ties keep source order.
        ordered = sorted(
            [(before, 0, problem) for before, problem in batch.problems] + [(i, 1, p) for i, p in conflict_problems],
            key=lambda event: event[:2],
        )
        for _, _, problem in ordered:
            self._reject(split, problem)

    def _label_codes(self, values: list[Any]) -> np.ndarray | None:
        """Label codes equal exactly when the labels are: class ids, or a score's float64 bits."""
        return self.task.kind.label_codes(self.task, values)

    def _table_columns(self, table: pa.Table) -> Mapping[str, Sequence[Any]]:
        """A table's input columns, in ``input_keys`` order (as fingerprints join them): lists here."""
        return {name: table.column(name).to_pylist() for name in self.input_keys}
