"""Byte ranges of a plain corpus file that worker processes read and cut themselves: ``--num-proc``'s blocks.

Reading a corpus and cutting it into documents costs about as much as the work on the documents (a profile of
``nlue idioms mine --num-proc 2``: 2.4 s of 5.1 s in the command's own process). So where a file can be split,
the command's process only places the blocks' borders and hands out ``(file, start, end)``; each worker opens
the file, reads its block and cuts it into documents with the same reader one process uses, and the results
are merged in block order (:func:`nlue.process_map.map_in_order`), so the output is the same bytes.

* A block starts at a line start and ends just after a newline (the first border at or after its nominal
  end), or at the end of the file: every line, the last one without a newline too, is in exactly one block,
  and a ``\\r\\n`` or a multi-byte UTF-8 character is never cut (a newline byte is never inside one).
* Where a document may span lines (blank-line separated paragraphs), ``paragraphs=True`` puts the borders only
  just after an empty line (``\\n\\n`` or ``\\n\\r\\n``): a block then never cuts a document.
* The command's process reads the file once, raw, to find the borders and count the lines before each block
  (``bytes.count``: gigabytes a second), so that a worker names a line by its number in the file.
* A Parquet file's blocks are its row groups (:func:`row_groups`), numbered from their first row.
* Gzip cannot be split (a stream has no place to start reading but its beginning): a ``.gz`` corpus is read
  and cut by the command's process, as before.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BLOCK_BYTES = 4 << 20  # a block takes a worker a fraction of a second: Ctrl-C waits for no more
MIN_BLOCK_BYTES = 64 << 10
BLOCKS_PER_WORKER = 4  # a small file still gives every worker several blocks
SCAN_BYTES = 1 << 16
LINE_BORDER = re.compile(rb"\n")
PARAGRAPH_BORDER = re.compile(rb"\n\r?\n")


@dataclass(frozen=True)
class Block:
    """Bytes ``start`` to ``end`` of the file at ``path``; ``first_line`` is the number (from 1) of its first line."""

    path: str
    start: int
    end: int
    first_line: int

    @property
    def size(self) -> int:
        return self.end - self.start

    def describe(self) -> str:
        return f"{Path(self.path).name}, bytes {self.start}-{self.end} (from line {self.first_line})"

    def read(self) -> bytes:
        with open(self.path, "rb") as handle:
            handle.seek(self.start)
            return handle.read(self.size)


@dataclass(frozen=True)
class RowGroup:
    """Row group ``index`` of the Parquet file at ``path``; ``first_row`` is the number (from 1) of its first row
    in the file and ``size`` its share of the file's bytes (for a progress bar)."""

    path: str
    index: int
    first_row: int
    size: int

    def describe(self) -> str:
        return f"{Path(self.path).name}, row group {self.index} (from row {self.first_row})"


def row_groups(path: Path | str) -> list[RowGroup]:
    """The row groups of a Parquet file, in order (pyarrow's error for a file that is not Parquet); a group with
    index -1 stands for none."""
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    total_bytes, total_rows = Path(path).stat().st_size, max(metadata.num_rows, 1)
    groups, first, shared = [], 1, 0
    for index in range(metadata.num_row_groups):
        rows = metadata.row_group(index).num_rows
        share = total_bytes - shared if index == metadata.num_row_groups - 1 else total_bytes * rows // total_rows
        groups.append(RowGroup(str(path), index, first, share))
        first, shared = first + rows, shared + share
    return groups or [RowGroup(str(path), -1, 1, total_bytes)]  # no rows: one empty group, its columns still read


def block_size(total_bytes: int, num_proc: int) -> int:
    """Bytes per block for a corpus of ``total_bytes`` on ``num_proc`` workers: :data:`BLOCK_BYTES` at most, and
    small enough that each worker gets :data:`BLOCKS_PER_WORKER` blocks, but not under :data:`MIN_BLOCK_BYTES`."""
    return max(MIN_BLOCK_BYTES, min(BLOCK_BYTES, total_bytes // (BLOCKS_PER_WORKER * max(num_proc, 1)) + 1))


def count_lines(data: bytes | bytearray, universal_newlines: bool, end: int | None = None) -> int:
    """The line ends in ``data`` (up to ``end``): newlines, and with ``universal_newlines`` (Python's text mode)
    lone ``\\r`` too."""
    end = len(data) if end is None else end
    newlines = data.count(b"\n", 0, end)
    if not universal_newlines or data.find(b"\r", 0, end) < 0:
        return newlines
    return newlines + data.count(b"\r", 0, end) - data.count(b"\r\n", 0, end)


def file_blocks(
    path: Path | str, size: int, *, paragraphs: bool = False, universal_newlines: bool = False,
    max_line: int | None = None,
) -> Iterator[Block]:  # fmt: skip
    """The blocks of the file at ``path``, of about ``size`` bytes each, in order (see the module docstring).

    ``universal_newlines``: lines are counted as Python's text mode cuts them (a lone ``\\r`` ends one too);
    ``max_line``: a block is cut past that many bytes without a border (the reader then refuses the line as too
    long, naming it), so a file with no newline is not read whole here.
    """
    border = PARAGRAPH_BORDER if paragraphs else LINE_BORDER
    overlap = 2 if paragraphs else 1  # a border may begin this many bytes before the nominal end
    start, line, buffer, at_end = 0, 1, bytearray(), False
    with open(path, "rb") as handle:
        while True:
            while len(buffer) < size and not at_end:
                more = handle.read(size - len(buffer))
                at_end = not more
                buffer += more
            if not buffer:
                return
            end, searched = None, max(size - overlap, 0)
            while end is None:
                found = border.search(buffer, searched)
                if found is not None:
                    end = found.end()
                elif at_end or (max_line is not None and len(buffer) - size > max_line):
                    end = len(buffer)
                else:
                    searched = max(len(buffer) - overlap, searched)
                    more = handle.read(SCAN_BYTES)
                    at_end = not more
                    buffer += more
            yield Block(str(path), start, start + end, line)
            line += count_lines(buffer, universal_newlines, end)
            start += end
            del buffer[:end]


def first_bad_utf8(path: Path | str, start: int = 0) -> int | None:
    """The offset in the file of its first byte at or after ``start`` that is not UTF-8 (``start`` at a
    character's start), or None: an error message's exact place, whichever process read the file."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    position = start
    with open(path, "rb") as handle:
        handle.seek(start)
        while True:
            data = handle.read(SCAN_BYTES)
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                return position - pending + exc.start
            if not data:
                return None
            position += len(data)
