"""A corpus read as a stream of (document reference, text): text, JSONL, Parquet, a folder of them, a Hub dataset.

* a text file (``.txt``, or any other name): one document per line;
* JSON Lines (``.jsonl``, ``.ndjson``): one JSON object per line, its text in ``text_field``;
* Parquet (``.parquet``): the ``text_field`` column, read a batch of rows at a time;
* any of the first two compressed with gzip (``.gz`` after the name);
* a folder: every such file under it, in sorted order (hidden files and other names are listed and skipped);
* anything else is taken for a Hub dataset id, read with ``datasets.load_dataset(..., streaming=True)``.

Nothing is read whole. A document is referred to by its ``id_field`` when it has one, else by
``<file>:<line>`` (``<file>:<row>`` for Parquet, ``<dataset>:<row>`` for a Hub dataset), lines and rows
counted from 1. Input that is not what it should be (a line that is not UTF-8, a record that is not a JSON
object, a missing field, a line past :data:`MAX_DOCUMENT_BYTES`) ends the check with an error naming the
file, the line and the field: a corpus read in part would call items clean that it never saw.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from nlue.corpus_blocks import Block, RowGroup, block_size, file_blocks, row_groups
from nlue.errors import NlueError

logger = logging.getLogger(__name__)

MAX_DOCUMENT_BYTES = 64 << 20  # one web page past 64 MiB is a dump, not a document
TEXT_SUFFIXES = (".txt", ".text")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)
PARQUET_BATCH_ROWS = 4096


@dataclass(frozen=True)
class CorpusSpec:
    """Where the corpus is and how its records hold their text."""

    location: str
    text_field: str = "text"
    id_field: str = "id"
    hub_config: str | None = None
    hub_split: str = "train"


def _kind(path: Path) -> str | None:
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(PARQUET_SUFFIXES) and not path.name.lower().endswith(".gz"):
        return "parquet"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(TEXT_SUFFIXES):
        return "text"
    return None


def corpus_files(path: Path, quiet: bool = False) -> list[tuple[Path, str]]:
    """The files of a corpus path with how each is read; a folder's files sorted, other names skipped and said
    (``quiet``: not said, for a look before the reading)."""
    if path.is_file():
        return [(path, _kind(path) or "text")]
    found, skipped = [], []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        kind = _kind(file)
        hidden = any(part.startswith(".") for part in file.relative_to(path).parts)
        (skipped if kind is None or hidden else found).append((file, kind))
    if skipped and not quiet:
        logger.warning("%s: %d file(s) skipped, not text, JSONL or Parquet by name: %s", path, len(skipped),
                       ", ".join(f.name for f, _ in skipped[:5]) + (" ..." if len(skipped) > 5 else ""))  # fmt: skip
    if not found:
        raise NlueError(f"--corpus {path}: a folder with no .txt, .jsonl or .parquet file (gzip allowed: .gz)")
    return found


def _open(path: Path) -> BinaryIO:
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else path.open("rb")  # type: ignore[return-value]


def read_lines(path: Path, block: Block | None = None) -> Iterator[tuple[int, str]]:
    """Each line of a (possibly gzipped) UTF-8 file with its number from 1, bounded by :data:`MAX_DOCUMENT_BYTES`;
    with ``block``, only that block's lines (numbered as in the file)."""
    with io.BytesIO(block.read()) if block is not None else _open(path) as handle:
        number = block.first_line - 1 if block is not None else 0
        while raw := handle.readline(MAX_DOCUMENT_BYTES + 1):
            number += 1
            if len(raw) > MAX_DOCUMENT_BYTES and not raw.endswith(b"\n"):
                raise NlueError(f"{path}: line {number}: longer than {MAX_DOCUMENT_BYTES >> 20} MiB; "
                                "one document per line is expected")  # fmt: skip
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise NlueError(f"{path}: line {number}: not UTF-8 text (byte {exc.start + 1}: {exc.reason})") from None


def _field_text(record: Any, spec: CorpusSpec, where: str) -> str:
    if not isinstance(record, dict):
        raise NlueError(
            f"{where}: expected a JSON object with a {spec.text_field!r} field, got {type(record).__name__}"
        )
    value = record.get(spec.text_field)
    if not isinstance(value, str):
        what = "missing" if spec.text_field not in record else f"not text ({type(value).__name__})"
        fields = ", ".join(repr(k) for k in list(record)[:8])
        raise NlueError(f"{where}: field {spec.text_field!r} {what}; the record has {fields or 'no fields'} "
                        "(choose the text field with --text-field)")  # fmt: skip
    return value


def _reference(record: dict[str, Any], spec: CorpusSpec, fallback: str) -> str:
    value = record.get(spec.id_field)
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else fallback


def json_lines(path: Path, block: Block | None = None) -> Iterator[tuple[int, Any, str]]:
    """Each non-blank line of a JSON Lines file (or of one block of it), parsed: (line number, value, where it is
    for messages)."""
    for number, line in read_lines(path, block):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            yield number, json.loads(line), where
        except (ValueError, RecursionError) as exc:
            raise NlueError(f"{where}: not a JSON object ({exc})") from None


def _jsonl(path: Path, spec: CorpusSpec, block: Block | None = None) -> Iterator[tuple[str, str]]:
    for number, record, where in json_lines(path, block):
        text = _field_text(record, spec, where)
        yield _reference(record, spec, f"{path.name}:{number}"), text


def _parquet(path: Path, spec: CorpusSpec, group: RowGroup | None = None) -> Iterator[tuple[str, str]]:
    import pyarrow.parquet as pq

    try:
        reader = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid for a file that is not Parquet
        raise NlueError(f"{path}: not a Parquet file ({exc})") from None
    columns = reader.schema_arrow.names
    if spec.text_field not in columns:
        raise NlueError(f"{path}: no column {spec.text_field!r}; its columns: {', '.join(columns)} "
                        "(choose the text field with --text-field)")  # fmt: skip
    wanted = [spec.text_field] + ([spec.id_field] if spec.id_field in columns else [])
    row = 0 if group is None else group.first_row - 1
    only = None if group is None else [group.index] if group.index >= 0 else []
    for batch in reader.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted, row_groups=only):
        texts = batch.column(spec.text_field).to_pylist()
        ids = batch.column(spec.id_field).to_pylist() if len(wanted) > 1 else [None] * len(texts)
        for text, ident in zip(texts, ids, strict=True):
            row += 1
            if not isinstance(text, str):
                raise NlueError(f"{path}: row {row}: column {spec.text_field!r} is {type(text).__name__}, not text")
            yield (str(ident) if ident is not None else f"{path.name}:{row}"), text


def _hub(spec: CorpusSpec) -> Iterator[tuple[str, str]]:
    import datasets

    try:
        stream = datasets.load_dataset(spec.location, spec.hub_config, split=spec.hub_split, streaming=True)
    except (FileNotFoundError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise NlueError(f"--corpus {spec.location}: no such file or folder, and no Hub dataset of that name "
                        f"could be opened ({exc})") from None  # fmt: skip
    for row, record in enumerate(stream, start=1):
        yield (
            _reference(record, spec, f"{spec.location}:{row}"),
            _field_text(record, spec, f"{spec.location}: row {row}"),
        )


def read_corpus(spec: CorpusSpec) -> Iterator[tuple[str, str]]:
    """Every document of the corpus, in order, as (reference, text)."""
    path = Path(spec.location)
    if not path.exists():
        named_like_a_file = _kind(path) is not None or path.suffix.lower() == ".gz"
        if (
            path.is_absolute()
            or spec.location.startswith((".", "~"))
            or spec.location.count("/") > 1
            or named_like_a_file
        ):
            raise NlueError(f"--corpus {spec.location}: no such file or folder (a Hub dataset is named owner/name)")
        yield from _hub(spec)
        return
    for file, kind in corpus_files(path):
        yield from file_documents(file, kind, spec)


def file_documents(
    file: Path, kind: str, spec: CorpusSpec, block: Block | RowGroup | None = None
) -> Iterator[tuple[str, str]]:
    """The documents of one corpus file (``kind`` as :func:`corpus_files` says), or of one ``block`` of it (a row
    group of a Parquet file)."""
    if kind == "parquet":
        yield from _parquet(file, spec, block if isinstance(block, RowGroup) else None)
    elif kind == "jsonl":
        yield from _jsonl(file, spec, block)
    else:
        for number, line in read_lines(file, block):
            if line.strip():
                yield f"{file.name}:{number}", line


def corpus_blocks(spec: CorpusSpec, num_proc: int) -> tuple[list[tuple[Path, str]], int] | None:
    """The files of a corpus that workers can read in blocks (:mod:`nlue.corpus_blocks`; a Parquet file's row
    groups) and their bytes, or None where one of them cannot be split (gzip) or the corpus is a Hub dataset:
    the command's process reads those itself."""
    path = Path(spec.location)
    if num_proc < 2 or not path.exists():
        return None
    if any(file.name.lower().endswith(".gz") for file, _ in corpus_files(path, quiet=True)):
        return None
    files = corpus_files(path)
    return files, sum(file.stat().st_size for file, _ in files)


def blocks_of(files: list[tuple[Path, str]], total_bytes: int, num_proc: int) -> Iterator[tuple[str, Block | RowGroup]]:
    """Every block of ``files`` in corpus order, with its file's kind: what a worker reads (see
    :func:`file_documents`). A file that is not Parquet, though named so, is one block: its reader says so."""
    size = block_size(total_bytes, num_proc)
    for file, kind in files:
        if kind != "parquet":
            yield from ((kind, block) for block in file_blocks(file, size, max_line=MAX_DOCUMENT_BYTES))
            continue
        try:
            groups: list[RowGroup] = row_groups(file)
        except Exception:  # pyarrow's own errors: the reader names the file as not Parquet (_parquet)
            groups = [RowGroup(str(file), -1, 1, file.stat().st_size)]
        yield from ((kind, group) for group in groups)
