"""Source files read a batch of rows at a time, for the columnar builder.

The same files, rows, row numbers and errors as :func:`nlue.data.sources.read_records`,
in batches: an Arrow table where the format allows it (CSV/TSV through ``pyarrow.csv``,
Parquet), the reader's own records otherwise (JSON, JSONL, and any CSV that the Arrow
parser cannot be trusted to read as Python's ``csv`` module reads it).

pyarrow's CSV parser follows the same state machine as Python's ``csv`` module (quotes
open only at the start of a field; after a closing quote the field goes on unquoted;
``""`` is a quote; a quote left open at the end of the file closes there; NUL is a
character) but for blank lines, which Python skips while counting them in the row
numbers, and bytes that are not UTF-8. So Arrow reads a CSV/TSV whose header is one line
of distinct names, with blank lines kept as rows of empty cells; the first Arrow batch
holding such a row (a blank line, or a row of empty cells, which are rare), a cell with a
carriage return (pyarrow can lose the "\\n" of a quoted "\\r\\n" that a block boundary
splits) or a row Arrow refuses (a cell count off) hands the file over
to ``read_records`` from the first row not yet delivered, which reads it, or raises, as
the row path does. A file that is not UTF-8 throughout goes to ``read_records`` whole: a
scan checks it first, as Python decodes it, since Arrow checks each cell after removing its
quotes (a quote inside a multi-byte sequence, ``\xf3"\xaf\x80\x9b``, leaves a valid cell in
an invalid file). A test compares the two readers on random text, and a property test on
damaged files.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from nlue.data.source_file import WatchedSource
from nlue.data.sources import Record, check_parquet_batch, read_records, source_format, unreadable_parquet
from nlue.data.text_files import LineLengths, check_text_encoding
from nlue.errors import RowProblem, SourceError

# Bytes of CSV parsed per Arrow batch (~3,000 sentences). Arrow's streaming reader reads up
# to 32 blocks ahead on a background thread, so this also bounds what it holds (~16 MiB).
CSV_BLOCK_BYTES = 512 << 10
# Arrow batches are converted a few together (~12,000 sentences): fewer numpy calls and key-set
# lookups, while a batch's working copies (~10x its bytes, twice over with the reading thread) stay small.
CONVERT_BYTES = 2 << 20
PARQUET_BATCH_ROWS = 32_768
RECORD_BATCH_ROWS = 8192  # records (JSON, JSONL, CSV read by Python) converted together
_SCAN_CHUNK_BYTES = 1 << 20


@dataclass
class SourceBatch:
    """Consecutive rows of one source file.

    ``table`` holds the columns that were asked for (the Arrow readers) or is None, and
    then ``records`` holds the reader's records. ``columns`` are the file's column names
    as the row path's first record has them.
    """

    row_numbers: np.ndarray
    columns: Sequence[str]
    table: pa.Table | None = None
    records: list[Record] | None = None

    @property
    def num_rows(self) -> int:
        return len(self.row_numbers)

    def records_at(self, positions: np.ndarray) -> list[Record]:
        """The records of the rows at ``positions``, as the row path's reader gives them."""
        if self.records is not None:
            return [self.records[i] for i in positions.tolist()]
        assert self.table is not None
        return self.table.take(pa.array(positions, type=pa.int64())).to_pylist()


def read_batches(path: Path, wanted: Sequence[str], source: WatchedSource | None = None) -> Iterator[SourceBatch]:
    """The rows of ``path`` in batches; Arrow tables hold the ``wanted`` columns that exist.

    A reader's error comes after the batch of the rows before it, as the row path decides
    those rows before the error ends the build. As :func:`nlue.data.sources.read_records`,
    the file must be a regular file that does not change while it is read; ``source`` is the
    file as the caller watches it (its ``sha256`` is set once the last batch is read).
    """
    source = source or WatchedSource(path)
    fmt = source_format(path)
    if fmt in ("csv", "tsv"):
        with source.open() as handle:
            check_text_encoding(path, handle)  # before Arrow reads UTF-16's NUL bytes as UTF-8 text
        yield from _delimited_batches(source, "," if fmt == "csv" else "\t", wanted)
    elif fmt == "parquet":
        yield from _parquet_batches(source, wanted)
    else:
        yield from record_batches(read_records(path, source))
    source.finish()


def record_batches(records: Iterator[tuple[int, Record]], rows: int = RECORD_BATCH_ROWS) -> Iterator[SourceBatch]:
    """Records grouped into batches; an error of ``records`` comes after the batch before it."""
    numbers: list[int] = []
    batch: list[Record] = []
    try:
        for number, record in records:
            numbers.append(number)
            batch.append(record)
            if len(batch) >= rows:
                yield _record_batch(numbers, batch)
                numbers, batch = [], []
    except Exception:
        if batch:
            yield _record_batch(numbers, batch)
        raise
    if batch:
        yield _record_batch(numbers, batch)


def _record_batch(numbers: list[int], records: list[Record]) -> SourceBatch:
    return SourceBatch(np.array(numbers, dtype=np.int64), list(records[0]), records=records)


def _parquet_batches(source: WatchedSource, wanted: Sequence[str]) -> Iterator[SourceBatch]:
    path = source.path
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise SourceError(RowProblem(str(path), 0, "(file)", f"not a readable Parquet file: {exc}")) from None
    names = list(parquet.schema_arrow.names)
    if len(set(names)) != len(names):  # the row path's records keep the last of equal names
        yield from record_batches(read_records(path, source))
        return
    present = [name for name in wanted if name in names]
    if not present:  # nothing to read: the row path names the missing column
        yield from record_batches(read_records(path, source))
        return
    first = 1
    batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=present)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as exc:  # a damaged page, as the row path reports it
            raise unreadable_parquet(path, first - 1, exc) from None
        check_parquet_batch(path, batch, first - 1)
        table = pa.Table.from_batches([batch])
        yield SourceBatch(np.arange(first, first + table.num_rows, dtype=np.int64), names, table=table)
        first += table.num_rows


def _delimited_batches(source: WatchedSource, delimiter: str, wanted: Sequence[str]) -> Iterator[SourceBatch]:
    path = source.path
    header = _header(source, delimiter)
    names = header[0] if header is not None else []
    present = [name for name in wanted if name in names]
    if header is None or not present:
        yield from record_batches(read_records(path, source))
        return
    # The file's UTF-8 is checked by a scan, as Python decodes it (see the module docstring).
    # Cells holding a carriage return are handed over (see _arrow_csv_batches), so a file
    # with one anywhere has all its cells read. The scan is the pass whose bytes are hashed.
    utf8, carriage_returns = _scan(source)
    if not utf8:
        yield from record_batches(read_records(path, source))
        return
    if carriage_returns:
        present = names
    reads_all = len(present) == len(names)
    with pa.OSFile(str(path), "rb") as handle:
        try:
            reader = _open_csv(handle, names, header[1], present)
        except pa.ArrowInvalid:  # the first block holds a row Arrow refuses: the row path names it
            reader = None
        if reader is None:
            yield from record_batches(read_records(path, source))
            return
        try:
            yield from _arrow_csv_batches(source, reader, names, whole_rows=reads_all)
        finally:
            reader.close()


def _open_csv(handle: pa.NativeFile, names: list[str], delimiter: str, present: list[str]) -> pa_csv.CSVStreamingReader:
    # A native file: Arrow's I/O thread reads ahead (up to 32 blocks) without calling into
    # Python, so a reader closed early, or at exit, leaves no thread waiting on the GIL.
    return pa_csv.open_csv(
        handle,
        read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1, block_size=CSV_BLOCK_BYTES, use_threads=False),
        # A blank line is a row of empty cells here (found and handed to Python's reader, which
        # skips it but counts it in the row numbers), not left out unseen.
        parse_options=pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=True, ignore_empty_lines=False),
        convert_options=pa_csv.ConvertOptions(
            column_types=dict.fromkeys(present, pa.string()),
            include_columns=present,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
            check_utf8=False,  # the scan in _delimited_batches has checked the whole file
        ),
    )


def _arrow_csv_batches(
    source: WatchedSource, reader: pa_csv.CSVStreamingReader, names: list[str], whole_rows: bool
) -> Iterator[SourceBatch]:
    """Arrow's batches gathered into ~CONVERT_BYTES each.

    From a row Arrow refuses (a cell count off, bytes that are not UTF-8), a row of empty
    cells (perhaps a blank line) or a cell holding a carriage return, the rest of the file
    is Python's reader's, which names any error as the row path does.
    (pyarrow 26 drops the "\\n" of a "\\r\\n" inside a quoted cell when a block boundary
    falls between the two; such a cell keeps its "\\r".)
    """
    delivered = 0
    pending: list[pa.RecordBatch] = []
    pending_bytes = 0
    while True:
        try:
            batch = reader.read_next_batch()
            if any(_holds_byte(column, 0x0D) for column in batch.columns):
                raise pa.ArrowInvalid("a cell holding a carriage return")
            empty = _empty_rows(batch)
            if len(empty):
                # Blank lines that end the file are rows to nobody (Python skips them, and no
                # row after them is numbered): dropped, when every cell was read (an unread
                # cell may hold the line ends). Any other empty row: Python reads on.
                if not (whole_rows and _at_the_end(source, empty, batch, reader)):
                    raise pa.ArrowInvalid("a row of empty cells")
                batch = batch.slice(0, int(empty[0]))
        except StopIteration:
            break
        except pa.ArrowInvalid:
            if pending:
                yield _table_batch(pending, delivered, names)
                delivered += sum(b.num_rows for b in pending)
            yield from record_batches(itertools.islice(read_records(source.path, source), delivered, None))
            return
        pending.append(batch)
        pending_bytes += batch.nbytes
        if pending_bytes >= CONVERT_BYTES:
            yield _table_batch(pending, delivered, names)
            delivered += sum(b.num_rows for b in pending)
            pending, pending_bytes = [], 0
    if pending:
        yield _table_batch(pending, delivered, names)


def _at_the_end(
    source: WatchedSource, empty: np.ndarray, batch: pa.RecordBatch, reader: pa_csv.CSVStreamingReader
) -> bool:
    """Whether the empty rows ``empty`` are blank lines that end the file.

    They must close ``batch``, no row may follow, and the file must end with one line end
    more than there are such rows (a row of empty cells ends with a cell, not a line end).
    """
    if int(empty[0]) + len(empty) != batch.num_rows:
        return False
    try:
        while True:
            if reader.read_next_batch().num_rows:
                return False
    except StopIteration:
        pass
    return _final_line_ends(source) == len(empty) + 1


def _final_line_ends(source: WatchedSource) -> int:
    """How many line ends ("\\n", "\\r\\n" or "\\r") end the file (-1: more than one read shows)."""
    with source.open() as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - _SCAN_CHUNK_BYTES))
        tail = handle.read()
    rest = tail.rstrip(b"\r\n")
    if not rest and len(tail) < size:
        return -1
    ends = tail[len(rest) :]
    return ends.count(b"\n") + ends.count(b"\r") - ends.count(b"\r\n")


def _table_batch(batches: list[pa.RecordBatch], delivered: int, names: list[str]) -> SourceBatch:
    table = pa.Table.from_batches(batches)
    numbers = np.arange(delivered + 1, delivered + 1 + table.num_rows, dtype=np.int64)
    return SourceBatch(numbers, names, table=table)


def _holds_byte(column: pa.Array, byte: int) -> bool:
    """Whether any cell of a string column holds ``byte`` (one pass over its bytes, no copy)."""
    _, offsets_buffer, data = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=len(column) + 1, offset=column.offset * 4)
    start, stop = int(offsets[0]), int(offsets[-1])
    if data is None or stop == start:
        return False
    return bool((np.frombuffer(data, dtype=np.uint8, count=stop - start, offset=start) == byte).any())


def _empty_rows(batch: pa.RecordBatch) -> np.ndarray:
    """Positions of the rows whose cells are all empty (what Arrow makes of a blank line)."""
    empty = None
    for column in batch.columns:
        blank = pc.equal(pc.binary_length(column), 0)
        empty = blank if empty is None else pc.and_(empty, blank)
    if empty is None or not pc.any(empty).as_py():
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(empty.to_numpy(zero_copy_only=False))


def _scan(source: WatchedSource) -> tuple[bool, bool]:
    """Whether the file is valid UTF-8 (by Arrow's validator, which refuses what Python's decoder
    refuses) and whether it holds a carriage return; a line past the limit is refused here.

    The bytes of this pass are the ones hashed (:mod:`nlue.data.source_file`): it reads the whole
    file, in order, unless the file is not UTF-8, and then Python's reader hashes its own pass.
    """
    incomplete = b""  # a UTF-8 sequence the previous chunk ended inside
    carriage_return = False
    lines = LineLengths(source.path)
    with source.hashing() as handle:
        while chunk := handle.read(_SCAN_CHUNK_BYTES):
            lines.feed(chunk)
            carriage_return = carriage_return or b"\r" in chunk
            text = incomplete + chunk
            cut = _complete_utf8(text)
            if not _valid_utf8(text[:cut]):
                return False, carriage_return
            incomplete = text[cut:]
    return not incomplete, carriage_return


def _complete_utf8(data: bytes) -> int:
    """Where a UTF-8 sequence cut off by the end of ``data`` starts (``len(data)`` if none is)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) - back if needed > back else len(data)
    return len(data)


def _valid_utf8(data: bytes) -> bool:
    """Arrow's UTF-8 check over ``data`` as one string, without copying it."""
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int32))
    try:
        pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(data)]).validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _header(source: WatchedSource, delimiter: str) -> tuple[list[str], str] | None:
    """The header record and delimiter, as ``nlue.data.sources`` reads them; None for a header
    Arrow should not be trusted with (not one line of distinct names, or not UTF-8)."""
    with source.open() as handle:
        start = handle.read(_SCAN_CHUNK_BYTES)
    ends = [i for i in (start.find(b"\n"), start.find(b"\r")) if i >= 0]
    if not ends:
        return None  # no line end within the first chunk: rare enough for the row path
    try:
        line = start[: min(ends)].decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if not line or line.count('"') % 2:
        return None
    if delimiter == "," and ";" in line and "," not in line:
        delimiter = ";"  # as nlue.data.sources: spreadsheet programs in many locales save CSV with semicolons
    # A line whose quotes leave a field open would take the next line into the header.
    records = list(csv.reader([line + "\n", "x\n"], delimiter=delimiter))
    if len(records) != 2 or records[1] != ["x"]:
        return None
    names = records[0]
    if len(set(names)) != len(names):
        return None
    return names, delimiter


def column_values(records: Sequence[Record], column: str) -> list[Any]:
    """One column of records, as ``record.get`` reads it (None where a record lacks it)."""
    return [record.get(column) for record in records]
