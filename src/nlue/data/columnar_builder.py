"""Building one config with its rows held as Arrow tables (classification and regression).

:class:`ColumnarConfigBuilder` is :class:`nlue.data.config_builder.ConfigBuilder` with the
rows read a batch at a time (:mod:`nlue.data.arrow_sources`), validated and normalised
column-wise (:mod:`nlue.data.columnar`), keyed with numpy (:mod:`nlue.data.text_keys`)
and written as tables: the same decisions (:func:`nlue.data.overlap.row_verdicts`), the
same rejects in the same order, the same counts and the same Parquet bytes as the row
path, which stays the builder of the other kinds and the reference a test compares with
(``BuildOptions(engine="rows")``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
from tqdm.auto import tqdm

from nlue.data.arrow_sources import read_batches
from nlue.data.columnar import (
    FINGERPRINT_COLUMN,
    LOOSE_COLUMN,
    ColumnarConverter,
    ConvertedBatch,
    field_key_column,
    key_fields,
    with_overlap_keys,
)
from nlue.data.config_builder import ConfigBuilder
from nlue.data.fingerprints import FingerprintSet
from nlue.data.overlap import RowKeys, TrainIndex
from nlue.data.parquet_io import ShardedSplitWriter, SpillWriter
from nlue.data.report import BuildOptions, SplitReport, TaskSources
from nlue.data.source_file import WatchedSource, keep_digest
from nlue.registry.tasks import TaskSpec


class ColumnarConfigBuilder(ConfigBuilder):
    """Builds the splits of one config into ``<staging>/<config>/``, a table of rows at a time.

    Memory per distinct row is the row path's (see :class:`ConfigBuilder`); what is held
    per batch is a few MiB of Arrow columns instead of Python dicts.
    """

    def __init__(self, sources: TaskSources, config_dir: Path, options: BuildOptions, rejects: IO[str]) -> None:
        super().__init__(sources, config_dir, options, rejects)
        self._columnar = {id(sources.mapping): ColumnarConverter(self.task, sources.mapping)}

    def _new_train_index(self) -> TrainIndex:
        return _CarriedKeysIndex(self.task)

    # ------------------------------------------------------------ rows as tables
    # Kept rows are tables of the config's columns and the rows' keys (nlue.data.columnar.key_fields),
    # which the split writers leave out and the spill keeps.
    def _write_kept(self, writer: ShardedSplitWriter | SpillWriter, kept: Any) -> None:
        writer.write_table(kept)

    def _kept_columns(self, kept: Any) -> Any:
        return kept

    def _table_columns(self, table: pa.Table) -> Any:
        return table

    def _spilled_key_fields(self) -> Sequence[pa.Field]:
        return key_fields(self.task)

    def _table_fingerprints(self, table: pa.Table) -> np.ndarray:
        return _uint64(table.column(FINGERPRINT_COLUMN))

    # ------------------------------------------------------------ reading and deciding
    def _converted_batches(self, path: Path, split: str, report: SplitReport) -> Iterator[Any]:
        """The file's rows, validated and normalised, a source batch at a time.

        Read and converted on a second thread while this one decides and writes the
        batches before (most of either side's work is Arrow and numpy, which release the
        GIL). Batches, and an error after them, arrive in source order.
        """
        return _in_background(self._convert_file(path, split, report), BACKGROUND_BATCHES)

    def _convert_file(self, path: Path, split: str, report: SplitReport) -> Iterator[ConvertedBatch]:
        name = str(path)
        read_before = report.read
        progress = None
        if self.options.show_progress:
            progress = tqdm(desc=f"{self.task.name}/{split} {path.name}", unit=" rows", leave=False)
        mapping = self.sources.mapping_for(split)
        if id(mapping) not in self._columnar:  # a split declared with its own column and label maps
            self._columnar[id(mapping)] = ColumnarConverter(self.task, mapping)
        columnar = self._columnar[id(mapping)]
        converter = self._converter(split)
        try:
            watched = WatchedSource(path)
            for source in read_batches(path, columnar.wanted_columns, watched):
                if not source.num_rows:
                    continue
                if report.read == read_before:  # first rows: are the columns there?
                    converter.check_columns(name, int(source.row_numbers[0]), source.columns)
                report.read += source.num_rows
                converted = columnar.convert(name, source)
                report.dropped_by_label_map.update(converted.dropped)
                report.rejected += len(converted.problems)
                if self.options.strict and converted.problems:
                    before, problem = converted.problems[0]
                    yield converted.head(before)  # the rows before it first: an earlier conflict is the first error
                    self._reject(split, problem)  # raises
                yield converted
                if progress is not None:
                    progress.update(source.num_rows)
            keep_digest(self.read_digests, watched)
        finally:
            if progress is not None:
                progress.close()

    def _decide(
        self,
        batch: ConvertedBatch,
        split: str,
        report: SplitReport,
        seen: FingerprintSet,
        exclude: Mapping[str, FingerprintSet],
    ) -> pa.Table:
        """Count and reject the entries of ``batch``; the rows kept, in source order, as a table."""
        keep, rejected, found_in = self._verdicts(batch.keys, batch.label_codes, split, report, seen, exclude)
        if batch.problems or rejected:
            self._write_rejects(batch, split, rejected)
        kept_count = int(np.count_nonzero(keep))
        report.kept += kept_count
        table = batch.table if kept_count == batch.table.num_rows else batch.table.filter(pa.array(keep))
        # Overlap keys on this thread, for the kept rows only: train rows (the index, or the
        # spill) and rows counted against train.
        if kept_count and (split == "train" or (report.overlap is not None and self.train_index.rows)):
            table = with_overlap_keys(self.task, table)
        if report.overlap is not None and kept_count:
            self.train_index.count_kept(self._kept_columns(table), found_in[keep], report.overlap)
        return table


class _CarriedKeysIndex(TrainIndex):
    """The train index of :mod:`nlue.data.overlap`, reading the keys a converted table carries.

    The keys are :mod:`nlue.data.text_keys`' rather than the row path's Python hashes: equal
    texts, equal keys, as there. One config uses one kind of key throughout.
    """

    def __init__(self, task: TaskSpec) -> None:
        super().__init__(task.input_fields)
        self.task = task

    def keys(self, columns: Any) -> RowKeys:
        table: pa.Table = columns
        if LOOSE_COLUMN not in table.column_names:  # not needed until now (or no rows)
            table = with_overlap_keys(self.task, table)
        fields = {name: _uint64(table.column(field_key_column(name))) for name in self.field_names}
        return RowKeys(_uint64(table.column(LOOSE_COLUMN)), fields)


def _uint64(column: pa.ChunkedArray) -> np.ndarray:
    return column.to_numpy().astype(np.uint64, copy=False)


BACKGROUND_BATCHES = 1  # converted batches waiting for the deciding thread (more only hold more memory)
_DONE = object()


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def _in_background(items: Iterator[Any], depth: int) -> Iterator[Any]:
    """``items`` produced on a daemon thread, ``depth`` ahead; an exception is raised here, in order.

    When the consumer stops early (an error while deciding), the producer is told to stop
    and its generator is closed on its own thread.
    """
    handoff: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item: Any) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not offer(item):
                    return
            offer(_DONE)
        except BaseException as error:  # handed to the consumer, which raises it
            offer(_Failure(error))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=produce, name="nlue-build-reader", daemon=True)
    worker.start()
    try:
        while True:
            item = handoff.get()
            if item is _DONE:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        worker.join()
