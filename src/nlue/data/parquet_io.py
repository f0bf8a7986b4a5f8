"""Writing a split as size-capped Parquet shards named `<split>-0000N-of-0000M.parquet`.

Also the builder's spill file: rows kept aside as Arrow IPC while a pass still needs to
see every row (carving a validation split), read back batch by batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_MAX_SHARD_BYTES = 256 * 1024 * 1024
ROWS_PER_BATCH = 10_000
IDX_COLUMN = "idx"

TableCallback = Callable[[pa.Table], None]


class ShardedSplitWriter:
    """Streams rows of one split into Parquet shards, assigning ``idx`` as it goes.

    Rows come either as dicts (:meth:`write_rows`, :meth:`write`) or as Arrow tables
    without ``idx`` (:meth:`write_table`); either way they are written in tables of exactly
    ``ROWS_PER_BATCH`` rows (the last one shorter), so the files do not depend on how
    the rows arrived. Shards are written under provisional names and renamed on
    :meth:`close`, once the total count M is known. Output is deterministic: the same
    rows in the same order give byte-identical files (no timestamps are written).
    ``on_table`` sees every table written, e.g. to gather statistics.
    """

    def __init__(
        self,
        directory: Path,
        split: str,
        features: datasets.Features,
        max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
        on_table: TableCallback | None = None,
    ) -> None:
        self.directory = directory
        self.split = split
        self.schema = features.arrow_schema
        self._data_schema = _without_idx(self.schema)
        self.max_shard_bytes = max_shard_bytes
        self.on_table = on_table
        self.num_rows = 0
        self.num_bytes = 0
        self._pending: list[dict[str, Any]] = []
        self._pending_tables: list[pa.Table] = []
        self._pending_table_rows = 0
        self._writer: pq.ParquetWriter | None = None
        self._writing: _Background | None = None
        self._shard_bytes = 0
        self._provisional: list[Path] = []
        self.files: list[Path] = []

    def write(self, row: dict[str, Any]) -> None:
        """Append one row; as before, the dict gets its ``idx``."""
        row[IDX_COLUMN] = self.num_rows + len(self._pending)
        self.write_rows([row])

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        """Append rows given as dicts; ``idx`` comes from their position (an ``idx`` key is ignored)."""
        if self._pending_tables:
            raise RuntimeError("write_rows() after write_table(): a writer takes rows one way only")
        self._pending.extend(rows)
        while len(self._pending) >= ROWS_PER_BATCH:
            head, self._pending = self._pending[:ROWS_PER_BATCH], self._pending[ROWS_PER_BATCH:]
            self._write_numbered(pa.Table.from_pylist(head, schema=self._data_schema))

    def write_table(self, table: pa.Table) -> None:
        """Append the rows of ``table`` (every column of the schema but ``idx``; others are left out)."""
        if table.num_rows == 0:
            return
        if table.column_names != self._data_schema.names:
            table = table.select(self._data_schema.names)
        if self._pending:
            raise RuntimeError("write_table() after write_rows(): a writer takes rows one way only")
        self._pending_tables.append(table)
        self._pending_table_rows += table.num_rows
        while self._pending_table_rows >= ROWS_PER_BATCH:
            self._flush_tables(ROWS_PER_BATCH)

    def _flush_rows(self) -> None:
        if self._pending:
            self._write_numbered(pa.Table.from_pylist(self._pending, schema=self._data_schema))
            self._pending = []

    def _flush_tables(self, rows: int) -> None:
        """Write the first ``rows`` pending table rows as one table."""
        pending = pa.concat_tables(self._pending_tables)
        head, rest = pending.slice(0, rows), pending.slice(rows)
        self._pending_tables = [rest] if rest.num_rows else []
        self._pending_table_rows = rest.num_rows
        # One chunk per column, as from_pylist gives: the Parquet pages, and so the bytes,
        # then match those of the same rows written with write_rows().
        self._write_numbered(head.combine_chunks())

    def _write_numbered(self, table: pa.Table) -> None:
        """Write ``table`` (no ``idx``) with ``idx`` numbering its rows after those written."""
        count = table.num_rows
        idx = pa.array(
            np.arange(self.num_rows, self.num_rows + count, dtype=np.int64), self.schema.field(IDX_COLUMN).type
        )
        self.num_rows += count
        columns = [idx if name == IDX_COLUMN else _without_validity(table.column(name)) for name in self.schema.names]
        self._write(pa.Table.from_arrays(columns, schema=self.schema))

    def _write(self, table: pa.Table) -> None:
        if self.on_table is not None:
            self.on_table(table)
        if self._writer is not None and self._shard_bytes + table.nbytes > self.max_shard_bytes:
            self._finish_writing()
            self._writer.close()
            self._writer = None
        if self._writer is None:
            path = self.directory / f".{self.split}-shard{len(self._provisional):05d}.parquet"
            self._provisional.append(path)
            self._writer = pq.ParquetWriter(path, self.schema, compression="snappy")
            self._shard_bytes = 0
        self._finish_writing()
        # Encoding and compressing a table releases the GIL: it runs beside the caller's
        # next table, one at a time and in order, so the file is the same as written inline.
        self._writing = _Background(self._writer.write_table, table, row_group_size=ROWS_PER_BATCH)
        self._shard_bytes += table.nbytes
        self.num_bytes += table.nbytes

    def _finish_writing(self) -> None:
        if self._writing is not None:
            writing, self._writing = self._writing, None
            writing.result()

    def close(self) -> list[Path]:
        """Finish the last shard and give every shard its final name."""
        self._flush_rows()
        if self._pending_table_rows:
            self._flush_tables(self._pending_table_rows)
        self._finish_writing()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if not self._provisional and self.num_rows == 0:
            # An empty split still gets one (empty) shard so the config's files resolve.
            path = self.directory / f".{self.split}-shard00000.parquet"
            pq.write_table(self.schema.empty_table(), path, compression="snappy")
            self._provisional.append(path)
        total = len(self._provisional)
        for i, path in enumerate(self._provisional):
            final = self.directory / f"{self.split}-{i:05d}-of-{total:05d}.parquet"
            path.rename(final)
            self.files.append(final)
        return self.files


class _Background:
    """One call run on its own thread; :meth:`result` waits for it and raises what it raised."""

    def __init__(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self._error: BaseException | None = None

        def run() -> None:
            try:
                call(*args, **kwargs)
            except BaseException as error:  # raised again by result(), on the caller's thread
                self._error = error

        self._thread = threading.Thread(target=run, name="nlue-parquet-writer", daemon=True)
        self._thread.start()

    def result(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


def _without_idx(schema: pa.Schema) -> pa.Schema:
    return schema.remove(schema.get_field_index(IDX_COLUMN))


def _without_validity(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The column without an all-valid validity bitmap (Arrow kernels such as filter add one).

    ``Table.nbytes`` counts that bitmap, and the report's ``num_bytes`` and the shard
    boundaries come from ``nbytes``; without it they match those of from_pylist tables.
    """
    chunks = []
    for chunk in column.chunks:
        validity, *rest = chunk.buffers()
        if validity is not None and chunk.null_count == 0 and chunk.type.num_fields == 0:
            chunk = pa.Array.from_buffers(chunk.type, len(chunk), [None, *rest], null_count=0, offset=chunk.offset)
        chunks.append(chunk)
    return pa.chunked_array(chunks, type=column.type)


class SpillWriter:
    """Rows kept aside in an Arrow IPC stream, to be read back by :func:`read_spill`.

    IPC rather than Parquet: the rows are read back once, by this process, and IPC
    costs no encoding either way. ``idx`` is not stored; the final writers number rows.
    ``extra_fields`` are columns kept beside the rows (the columnar builder's row keys),
    which the split writers leave out.
    """

    def __init__(
        self,
        path: Path,
        features: datasets.Features,
        on_table: TableCallback | None = None,
        extra_fields: Sequence[pa.Field] = (),
    ) -> None:
        self.path = path
        self.schema = _without_idx(features.arrow_schema)
        for extra in extra_fields:
            self.schema = self.schema.append(extra)
        self.on_table = on_table
        self.num_rows = 0
        self._pending: list[dict[str, Any]] = []
        self._sink = pa.OSFile(str(path), "wb")
        # Uncompressed: lz4 would save disk (~2.5x) for ~0.3 s of CPU per million sentences,
        # and the spill lives only while one config is built.
        options = pa.ipc.IpcWriteOptions(compression=None)
        self._writer = pa.ipc.new_stream(self._sink, self.schema, options=options)

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        self._pending.extend(rows)
        self.num_rows += len(rows)
        if len(self._pending) >= ROWS_PER_BATCH:
            self._flush()

    def write_table(self, table: pa.Table) -> None:
        """Append the rows of ``table`` (every column of the schema); pending rows go first."""
        if table.num_rows == 0:
            return
        self._flush()
        self.num_rows += table.num_rows
        if self.on_table is not None:
            self.on_table(table)
        self._writer.write_table(table)

    def _flush(self) -> None:
        if not self._pending:
            return
        table = pa.Table.from_pylist(self._pending, schema=self.schema)
        self._pending = []
        if self.on_table is not None:
            self.on_table(table)
        self._writer.write_table(table)

    def close(self) -> Path:
        self._flush()
        self._writer.close()
        self._sink.close()
        return self.path


def read_spill(path: Path) -> Iterator[pa.Table]:
    """The tables of a spill file, in the order written, one batch in memory at a time."""
    # Read, not memory-mapped: mapped pages would count towards the process's RSS.
    with pa.OSFile(str(path), "rb") as source, pa.ipc.open_stream(source) as reader:
        for batch in reader:
            yield pa.Table.from_batches([batch])
