"""Streaming readers for the source formats the builder accepts.

Each reader yields ``(row_number, record)`` with 1-based data row numbers (the header
of a CSV/TSV is not a row), so that every later message can name the row. A CSV whose
header holds semicolons and no comma is read with ``;`` (what spreadsheet programs in
many locales save). The builder and the GMET judgment import both read through here. Files are
loaded whole where the format allows it: CSV/TSV/JSONL are read line by line and Parquet
batch by batch. A JSON array is one value and is parsed at once, so large sources
should be JSONL.

What no reader lets through (each a :class:`~nlue.errors.SourceError` naming file, row and
field, so the build ends with exit code 2): a text file in UTF-16 or UTF-32
(:mod:`nlue.data.text_files`), bytes that are not UTF-8, a header or Parquet schema that
names a column twice, and JSON that repeats a key, nests deeper than any row's data or
holds a lone surrogate (:mod:`nlue.text.json_records`): each would otherwise be read as a
guess (the last of two values) or fail far from its row.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from nlue.data.source_file import WatchedSource
from nlue.data.text_files import MAX_LINE_BYTES, LineLengths, bounded_lines, check_text_encoding, listed
from nlue.errors import RowProblem, SourceError
from nlue.text.json_records import TooDeep, parse_json, record_problem, repeated_key
from nlue.text.safe import csv_cell_read

SUPPORTED_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".json", ".jsonl", ".parquet")

# Bytes that are not valid UTF-8 come back as lone surrogates under "surrogateescape".
_UNDECODABLE = re.compile("[\udc80-\udcff]")
# A JSON escape that decodes to a surrogate, paired or lone (a superset: any \uD8..-\uDF.. escape).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SCAN_CHUNK_BYTES = 1 << 20

Record = dict[str, Any]

# CSV cells may be long (whole passages): lift the csv module's 128 KiB default, to the line limit
# (a field is never longer than the text sources' longest line; see nlue.data.text_files).
csv.field_size_limit(MAX_LINE_BYTES)
# A JSON array is parsed whole; past this size a source must be JSON Lines (read a line at a time).
MAX_JSON_BYTES = 256 << 20


def source_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise SourceError(
            RowProblem(
                str(path), 0, "(file)",
                f"unsupported file type {suffix!r}; expected one of {', '.join(SUPPORTED_SUFFIXES)}",
            )
        )  # fmt: skip
    return suffix[1:]


def _check_encoding(path: Path, row: int, record: Record) -> None:
    for field, value in record.items():
        if isinstance(value, str) and _UNDECODABLE.search(value):
            bad = _UNDECODABLE.search(value)
            assert bad is not None
            byte = ord(bad.group(0)) - 0xDC00
            raise SourceError(
                RowProblem(
                    str(path), row, str(field),
                    f"not valid UTF-8 (byte 0x{byte:02x} at character {bad.start()}); "
                    "save the file as UTF-8",
                )
            )  # fmt: skip
        if isinstance(field, str) and _UNDECODABLE.search(field):
            raise SourceError(RowProblem(str(path), row, "(header)", "column name is not valid UTF-8"))


def _may_hold_undecodable(source: WatchedSource, json_escapes: bool = False) -> bool:
    """Whether decoded values of the file can hold the surrogates that _check_encoding finds.

    Valid UTF-8 decodes without them, so one fast pass over the bytes spares checking
    every value of every row; only a file that fails here is checked row by row (which
    names the row and field). For JSON, ``\\uD800``-``\\uDFFF`` escapes can produce
    lone surrogates too. The same pass refuses a line longer than the limit, before the
    parser would hold it (a sparse file of gigabytes is refused after its first 64 MiB).
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    lines = LineLengths(source.path)
    tail = b""  # an escape may straddle two chunks
    with source.open() as handle:
        while chunk := handle.read(_SCAN_CHUNK_BYTES):
            lines.feed(chunk)
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                return True
            if json_escapes and _SURROGATE_ESCAPE.search(tail + chunk):
                return True
            tail = chunk[-4:]
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return True
    return False


def _text(source: WatchedSource, newline: str | None = "") -> io.TextIOWrapper:
    """The file as text for its parser, the bytes hashed as they are read (see nlue.data.source_file)."""
    return io.TextIOWrapper(source.hashing(), encoding="utf-8-sig", errors="surrogateescape", newline=newline)


def _read_delimited(source: WatchedSource, delimiter: str) -> Iterator[tuple[int, Record]]:
    path = source.path
    check_rows = _may_hold_undecodable(source)
    with _text(source) as handle:
        lines = bounded_lines(handle, path)
        first = next(lines, "")
        if delimiter == "," and ";" in first and "," not in first:
            delimiter = ";"  # spreadsheet programs in many locales save CSV with semicolons
        reader = csv.reader(itertools.chain([first], lines), delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _not_csv(path, 0, exc) from None
        _check_encoding(path, 0, dict.fromkeys(header, ""))
        _check_distinct_names(path, header)
        yield from _delimited_records(path, reader, header, check_rows)


def _not_csv(path: Path, row: int, exc: csv.Error) -> SourceError:
    """A row Python's csv module refuses (a field past the limit, as a quote left open makes one)."""
    return SourceError(RowProblem(str(path), row, "(row)", f"not readable as CSV: {exc}; check for a quote left open"))


def _delimited_records(
    path: Path, reader: Iterator[list[str]], header: list[str], check_rows: bool
) -> Iterator[tuple[int, Record]]:
    width = len(header)
    row_number = 0
    try:
        for row_number, cells in enumerate(reader, start=1):
            if not cells:  # a blank line is not a row
                continue
            if len(cells) != width:
                raise SourceError(
                    RowProblem(
                        str(path), row_number, "(row)",
                        f"has {len(cells)} cells but the header has {width}; "
                        "check quoting and the delimiter",
                    )
                )  # fmt: skip
            record = dict(zip(header, cells, strict=True))
            if check_rows:
                _check_encoding(path, row_number, record)
            yield row_number, record
    except csv.Error as exc:  # raised by the reader only: the consumer's errors do not come in here
        raise _not_csv(path, row_number + 1, exc) from None


def _check_distinct_names(path: Path, names: Sequence[str]) -> None:
    """A header (or Parquet schema) naming a column twice is refused: a row would keep one of the two values.

    Empty names are let be: a spreadsheet's trailing empty columns are all named "", and no field reads them.
    """
    first: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if name and name in first:
            raise SourceError(
                RowProblem(
                    str(path), 0, "(header)",
                    f"the column {listed([name])!r} appears twice (columns {first[name]} and {position}); "
                    "name each column once",
                )
            )  # fmt: skip
        first.setdefault(name, position)


def jsonl_rows(path: Path, source: WatchedSource | None = None) -> Iterator[tuple[int, Record | RowProblem]]:
    """Each non-blank line of a JSON Lines file, numbered from 1: its object, or why it is not one.

    Why not: not JSON, not an object, or what :func:`nlue.text.json_records.record_problem`
    finds (a key named twice, nesting too deep, a lone surrogate, bytes that are not UTF-8).
    The caller decides what a bad line means: the builder stops at it, the translation
    readers reject it and go on. A file that is not a regular file, has a line past the
    limit or changes while it is read raises a :class:`SourceError` (``source``: the file
    as the caller watches it; by default this reader watches it).
    """
    own = source is None
    source = source or WatchedSource(path)
    strings = _may_hold_undecodable(source, json_escapes=True)
    with _text(source, newline=None) as handle:
        row_number = 0
        for line in bounded_lines(handle, path):
            if not line.strip():
                continue
            row_number += 1
            try:
                record = parse_json(line)
            except json.JSONDecodeError as exc:
                yield row_number, RowProblem(str(path), row_number, "(row)", f"not valid JSON: {exc.msg}")
                continue
            except TooDeep as exc:
                yield row_number, RowProblem(str(path), row_number, exc.field, str(exc))
                continue
            if not isinstance(record, dict):
                yield row_number, RowProblem(str(path), row_number, "(row)", "expected a JSON object per line")
                continue
            undecodable = strings and _UNDECODABLE.search(line) is not None
            problem = record_problem(record, strings, undecodable)
            if problem is not None:
                yield row_number, RowProblem(str(path), row_number, *problem)
                continue
            yield row_number, record
    if own:
        source.finish()


def _read_jsonl(source: WatchedSource) -> Iterator[tuple[int, Record]]:
    for row_number, record in jsonl_rows(source.path, source):
        if isinstance(record, RowProblem):
            raise SourceError(record)
        yield row_number, record


def _read_json(source: WatchedSource) -> Iterator[tuple[int, Record]]:
    path = source.path
    if source.before.size > MAX_JSON_BYTES:
        raise SourceError(
            RowProblem(
                str(path), 0, "(file)",
                f"a .json source is parsed whole, and this one holds {source.before.size:,} bytes, over the "
                f"{MAX_JSON_BYTES >> 20} MiB limit: save it as JSON Lines (.jsonl, one object per line), which is "
                "read a line at a time",
            )
        )  # fmt: skip
    with source.hashing() as handle:
        raw = handle.read(MAX_JSON_BYTES + 1)
        if handle.read(1):  # it grew while being read
            source.check_unchanged()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SourceError(
            RowProblem(
                str(path), 0, "(file)",
                f"not valid UTF-8 at line {line} (byte 0x{raw[exc.start]:02x}); save it as UTF-8",
            )
        ) from None  # fmt: skip
    if not text.strip():
        return
    try:
        data = parse_json(text)
    except json.JSONDecodeError as exc:
        raise SourceError(
            RowProblem(str(path), 0, "(file)", f"not valid JSON at line {exc.lineno}: {exc.msg}")
        ) from None
    except TooDeep as exc:  # the row is not known: the parser stopped inside it
        raise SourceError(RowProblem(str(path), 0, "(file)", str(exc))) from None
    if repeated_key(data) is not None:  # the {"data": [...]} wrapper itself (its rows are checked below)
        raise SourceError(RowProblem(str(path), 0, "(file)", f"the key {repeated_key(data)!r} appears twice"))
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]  # the {"data": [...]} layout some exporters write
    if not isinstance(data, list):
        raise SourceError(RowProblem(str(path), 0, "(file)", "expected a JSON array of objects (or use JSONL)"))
    strings = _SURROGATE_ESCAPE.search(raw) is not None
    for row_number, record in enumerate(data, start=1):
        if not isinstance(record, dict):
            raise SourceError(RowProblem(str(path), row_number, "(row)", "expected a JSON object"))
        problem = record_problem(record, strings)
        if problem is not None:
            raise SourceError(RowProblem(str(path), row_number, *problem))
        yield row_number, record


def _read_parquet(path: Path) -> Iterator[tuple[int, Record]]:
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise SourceError(RowProblem(str(path), 0, "(file)", f"not a readable Parquet file: {exc}")) from None
    _check_distinct_names(path, parquet.schema_arrow.names)
    row_number = 0
    try:
        for batch in parquet.iter_batches(batch_size=8192):
            check_parquet_batch(path, batch, row_number)
            for record in batch.to_pylist():
                row_number += 1
                yield row_number, record
    except (OSError, pa.ArrowException) as exc:  # a damaged page: pyarrow finds it only when it reads it
        raise unreadable_parquet(path, row_number, exc) from None


def check_parquet_batch(path: Path, batch: pa.RecordBatch, rows_read: int) -> None:
    """Raise a SourceError naming the column when a batch's strings are not UTF-8.

    Parquet readers trust a file's string pages: damaged bytes, or a writer that stored
    bytes in a string column, would fail later in Python's decoder or pass into Arrow's
    kernels. Arrow's full validation (one pass over the bytes) finds them here.
    """
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        try:
            column.validate(full=True)
        except pa.ArrowInvalid as exc:
            raise SourceError(
                RowProblem(
                    str(path), 0, name,
                    f"not a readable Parquet file after {rows_read} rows: {exc} (the file is damaged, or "
                    "its writer stored bytes that are not UTF-8 text in a string column)",
                )
            ) from None  # fmt: skip


def unreadable_parquet(path: Path, rows_read: int, exc: BaseException) -> SourceError:
    """The error for a Parquet file whose pages cannot be read, after ``rows_read`` good rows."""
    return SourceError(RowProblem(str(path), 0, "(file)", f"not a readable Parquet file after {rows_read} rows: {exc}"))


def read_records(path: Path, source: WatchedSource | None = None) -> Iterator[tuple[int, Record]]:
    """Yield ``(row_number, record)`` from a CSV, TSV, JSON, JSONL or Parquet file.

    The file must be a regular file that does not change while it is read (a :class:`SourceError`
    otherwise, once the last row is read; :mod:`nlue.data.source_file`). ``source``: the file as the
    caller watches it, to learn the SHA-256 of the bytes read (``source.sha256``) afterwards.
    """
    source = source or WatchedSource(path)
    fmt = source_format(path)
    if fmt != "parquet":
        with source.open() as handle:
            check_text_encoding(path, handle)
    if fmt == "csv":
        yield from _read_delimited(source, ",")
    elif fmt == "tsv":
        yield from _read_delimited(source, "\t")
    elif fmt == "jsonl":
        yield from _read_jsonl(source)
    elif fmt == "json":
        yield from _read_json(source)
    else:
        yield from _read_parquet(path)
    source.finish()


def read_sheet_records(path: Path) -> Iterator[tuple[int, Record]]:
    """The rows of a sheet nlue wrote and a person filled in (annotation, judging and review sheets).

    As :func:`read_records`, with the spreadsheet guard that :func:`nlue.text.safe.csv_cell` put on
    the text cells of a CSV or TSV taken off again, so that a text such as ``=HYPERLINK(...)``
    reads back exactly as it was written out.
    """
    unguard = source_format(path) in ("csv", "tsv")
    for number, record in read_records(path):
        if unguard:
            record = {k: csv_cell_read(v) if isinstance(v, str) else v for k, v in record.items()}
        yield number, record
