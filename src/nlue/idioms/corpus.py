"""Streaming documents out of a corpus too large for memory: a text file, JSONL, Parquet, or a `datasets` dataset.

What ``--corpus`` may name, and what a document is in each:

* a ``.txt`` file (or ``.txt.gz``): documents are blocks of lines separated by one or more
  blank lines (``line_documents=True``: every non-empty line is a document);
* a ``.jsonl`` file (or ``.jsonl.gz``): one JSON object per line, the document in ``text_column``;
* a ``.parquet`` file, or a folder of them: the document in ``text_column``, read a
  record batch at a time;
* a folder written by ``Dataset.save_to_disk``, or a Hub dataset id (OSCAR's Nepali part:
  ``oscar-corpus/OSCAR-2201`` with ``config="ne"``): read with ``datasets`` in streaming
  mode where it can (the Hub), row by row otherwise.

Each document comes with an id: ``<file name>:<n>`` (its 1-based number in the file) or the
row's ``id`` column where a dataset has one. Progress is shown by the caller (bytes read
for files, documents for datasets).

An uncompressed ``.txt`` or ``.jsonl`` file can also be read in blocks of bytes by worker
processes, and a Parquet file by row groups (:attr:`Corpus.files`, :func:`block_documents`;
:mod:`nlue.corpus_blocks`): text blocks end after an empty line unless every line is a
document, so no document is cut, and a block's documents are numbered from 1
(:func:`file_document_id` gives their number in the file).
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from nlue.corpus_blocks import Block, RowGroup, block_size, file_blocks, first_bad_utf8, row_groups
from nlue.errors import NlueError

TEXT_SUFFIXES = (".txt", ".text")
PARQUET_BATCH_ROWS = 1024


@dataclass(frozen=True)
class Document:
    id: str
    text: str


@dataclass(frozen=True)
class Corpus:
    """The documents of a corpus, and how far a pass has come (for progress bars)."""

    name: str
    documents: Callable[[], Iterator[Document]]
    total_bytes: int | None  # for files: progress in bytes; None: progress in documents
    position: Callable[[], int]
    files: tuple[CorpusFile, ...] = ()  # files whose blocks workers may read themselves; none: read here


@dataclass(frozen=True)
class CorpusFile:
    """An uncompressed text, JSONL or Parquet corpus file and how its documents are read: what a worker needs."""

    path: str
    kind: str  # "text", "jsonl" or "parquet"
    text_column: str = "text"
    line_documents: bool = False

    def blocks(self, num_proc: int) -> Iterator[Block | RowGroup]:
        """The file's blocks for ``num_proc`` workers (text: ending after an empty line, where documents are
        paragraphs; Parquet: its row groups); lines are counted as Python's text mode reads them."""
        if self.kind == "parquet":
            return iter(row_groups(self.path))
        size = block_size(Path(self.path).stat().st_size, num_proc)
        paragraphs = self.kind == "text" and not self.line_documents
        return file_blocks(self.path, size, paragraphs=paragraphs, universal_newlines=True)


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="strict")
    return path.open("r", encoding="utf-8", errors="strict")


def _stem_suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    return suffixes[-2] if suffixes and suffixes[-1] == ".gz" and len(suffixes) > 1 else (suffixes or [""])[-1]


def open_corpus(
    source: str, text_column: str = "text", line_documents: bool = False, config: str | None = None,
    split: str = "train",
) -> Corpus:  # fmt: skip
    """The corpus ``source`` names (see the module docstring); an NlueError saying what it could not read."""
    path = Path(source)
    if path.is_file():
        kind = _stem_suffix(path)
        size = path.stat().st_size
        counter = _ByteCounter()
        plain = path.suffix.lower() != ".gz"  # gzip cannot be split into blocks
        if kind in TEXT_SUFFIXES:
            return Corpus(path.name, lambda: _text_documents(path, line_documents, counter), size, counter.get,
                          (CorpusFile(str(path), "text", text_column, line_documents),) if plain else ())  # fmt: skip
        if kind == ".jsonl":
            return Corpus(path.name, lambda: _jsonl_documents(path, text_column, counter), size, counter.get,
                          (CorpusFile(str(path), "jsonl", text_column),) if plain else ())  # fmt: skip
        if kind == ".parquet":
            return Corpus(path.name, lambda: _parquet_documents([path], text_column, counter), size, counter.get,
                          (CorpusFile(str(path), "parquet", text_column),))  # fmt: skip
        raise NlueError(
            f"{path}: cannot read a corpus from a {kind or 'suffix-less'} file; use .txt, .jsonl or .parquet"
        )
    if path.is_dir():
        if (path / "dataset_info.json").is_file() or (path / "state.json").is_file():
            return _dataset_corpus(source, text_column, config, split, from_disk=True)
        parquet = sorted(path.rglob("*.parquet"))
        if parquet:
            counter = _ByteCounter()
            total = sum(p.stat().st_size for p in parquet)
            return Corpus(path.name, lambda: _parquet_documents(parquet, text_column, counter), total, counter.get,
                          tuple(CorpusFile(str(p), "parquet", text_column) for p in parquet))  # fmt: skip
        raise NlueError(f"{path}: a folder with neither Parquet files nor a saved `datasets` dataset")
    if "/" in source and not source.startswith((".", "/")):
        return _dataset_corpus(source, text_column, config, split, from_disk=False)
    raise NlueError(f"{source}: no such file or folder, and not a Hub dataset id (owner/name)")


class _ByteCounter:
    """How many bytes of the corpus a pass has read, for a progress bar."""

    def __init__(self) -> None:
        self.value = 0

    def get(self) -> int:
        return self.value


def block_documents(source: CorpusFile, block: Block | RowGroup) -> Iterator[Document]:
    """The documents of one block of ``source``, read in a worker; a text file's are numbered from 1 in the block
    (:func:`file_document_id`), a JSONL file's by their line in the file, a Parquet file's by their row."""
    counter = _ByteCounter()
    if isinstance(block, RowGroup):
        return _parquet_documents([Path(source.path)], source.text_column, counter, block)
    if source.kind == "text":
        return _text_documents(Path(source.path), source.line_documents, counter, block)
    return _jsonl_documents(Path(source.path), source.text_column, counter, block)


def file_document_id(source: CorpusFile, documents_before: int, block_id: str) -> str:
    """A document's id in the file, from the one :func:`block_documents` gave it and the number of documents
    before its block."""
    if source.kind != "text":
        return block_id
    name, _, number = block_id.rpartition(":")  # <file name>:<number in the block>
    return f"{name}:{documents_before + int(number)}"


def _block_text(block: Block) -> IO[str]:
    return io.TextIOWrapper(io.BytesIO(block.read()), encoding="utf-8", errors="strict")


def _text_documents(
    path: Path, line_documents: bool, counter: _ByteCounter, part: Block | None = None
) -> Iterator[Document]:
    number, block = 0, []
    try:
        with _open_text(path) if part is None else _block_text(part) as handle:
            for line in handle:
                counter.value += len(line.encode("utf-8"))
                if line.strip() and not line_documents:
                    block.append(line)
                    continue
                text = line if line_documents else "".join(block)
                block = []
                if text.strip():
                    number += 1
                    yield Document(f"{path.name}:{number}", text)
            if block:
                yield Document(f"{path.name}:{number + 1}", "".join(block))
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, part, counter, exc) from None


def _not_utf8(path: Path, block: Block | None, counter: _ByteCounter, exc: UnicodeDecodeError) -> NlueError:
    """The error for a file that is not UTF-8, at the exact byte (the same whichever process read the file)."""
    place = None if path.suffix == ".gz" else first_bad_utf8(path, 0 if block is None else block.start)
    where = f"at byte {place}" if place is not None else f"near byte {counter.value + exc.start}"
    return NlueError(f"{path}: not UTF-8 text {where}")


def _jsonl_documents(path: Path, column: str, counter: _ByteCounter, block: Block | None = None) -> Iterator[Document]:
    try:
        with _open_text(path) if block is None else _block_text(block) as handle:
            for number, line in enumerate(handle, start=1 if block is None else block.first_line):
                counter.value += len(line.encode("utf-8"))
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise NlueError(f"{path}: row {number}: not JSON ({exc.msg})") from None
                yield _document(record, column, f"{path.name}:{number}", f"{path}: row {number}")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, block, counter, exc) from None


def _document(record: Any, column: str, default_id: str, where: str) -> Document:
    if not isinstance(record, dict) or column not in record:
        found = ", ".join(sorted(record)) if isinstance(record, dict) else type(record).__name__
        raise NlueError(f"{where}: no {column!r} column (found: {found}); name it with --text-column")
    text = record[column]
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise NlueError(f"{where}: column {column!r} holds {type(text).__name__}, not text")
    return Document(str(record.get("id") or default_id), text)


def _parquet_documents(
    paths: list[Path], column: str, counter: _ByteCounter, group: RowGroup | None = None
) -> Iterator[Document]:
    """The documents of Parquet files, or of one row ``group`` of one (numbered by their row in the file)."""
    import pyarrow.parquet as pq

    for path in paths:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        if column not in names:
            raise NlueError(f"{path}: no {column!r} column (found: {', '.join(names)}); name it with --text-column")
        wanted = [column, *(["id"] if "id" in names and column != "id" else [])]
        number = 0 if group is None else group.first_row - 1
        per_batch = path.stat().st_size / max(parquet.metadata.num_rows, 1)
        only = None if group is None else [group.index] if group.index >= 0 else []
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted, row_groups=only):
            ids = batch.column("id").to_pylist() if "id" in wanted else [None] * batch.num_rows
            for text, row_id in zip(batch.column(column).to_pylist(), ids, strict=True):
                number += 1
                yield Document(str(row_id or f"{path.name}:{number}"), text or "")
            counter.value += int(per_batch * batch.num_rows)


def _dataset_corpus(source: str, column: str, config: str | None, split: str, from_disk: bool) -> Corpus:
    import datasets

    counter = _ByteCounter()

    def documents() -> Iterator[Document]:
        if from_disk:
            loaded = datasets.load_from_disk(source)
            rows = loaded[split] if isinstance(loaded, datasets.DatasetDict) else loaded
        else:
            try:
                rows = datasets.load_dataset(source, config, split=split, streaming=True)
            except Exception as exc:  # offline, unknown id, gated: say which corpus failed and why
                raise NlueError(
                    f"cannot open the dataset {source!r} (config {config!r}, split {split!r}): {exc}"
                ) from exc
        for number, record in enumerate(rows, start=1):
            counter.value = number
            yield _document(dict(record), column, f"{Path(source).name}:{number}", f"{source}: row {number}")

    return Corpus(source, documents, None, counter.get)
