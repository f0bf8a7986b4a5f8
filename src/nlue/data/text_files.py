"""What a text source (CSV, TSV, JSON, JSON Lines) must be before its rows are read: UTF-8.

nlue reads text sources as UTF-8, with or without a byte-order mark. A file saved as
UTF-16 or UTF-32 (Windows tools, Excel's "Unicode text") is valid UTF-8 byte by byte
when its text is ASCII: every other byte is NUL, so the header reads as ``t\\x00e\\x00...``
and the build would end with a "missing column" listing names full of NULs.
:func:`check_text_encoding` looks at the first bytes instead and names the encoding.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, TextIO

from nlue.errors import RowProblem, SourceError

_SNIFF_BYTES = 4096
# UTF-32 first: its little-endian mark begins with UTF-16's.
_BYTE_ORDER_MARKS: tuple[tuple[bytes, str, str], ...] = (
    (codecs.BOM_UTF32_LE, "UTF-32 (little-endian)", "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32 (big-endian)", "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16 (little-endian)", "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16 (big-endian)", "UTF-16"),
)
_WITHOUT_MARK: tuple[tuple[str, str, str, int], ...] = (
    ("utf-16-le", "UTF-16 (little-endian, no byte-order mark)", "UTF-16LE", 2),
    ("utf-16-be", "UTF-16 (big-endian, no byte-order mark)", "UTF-16BE", 2),
    ("utf-32-le", "UTF-32 (little-endian, no byte-order mark)", "UTF-32LE", 4),
    ("utf-32-be", "UTF-32 (big-endian, no byte-order mark)", "UTF-32BE", 4),
)
READ_ENCODINGS = "UTF-8, with or without a byte-order mark"
# The longest line (and CSV field) of a text source. A sentence, a passage or a whole article is far
# shorter; a longer "line" is a file that is not text (a sparse or binary file: no line end for
# gigabytes) or a quote left open, and reading it whole would hold it in memory several times over.
MAX_LINE_BYTES = 64 << 20
_SHOWN_NAMES = 12
_SHOWN_NAME_CHARS = 60


def shown(text: str) -> str:
    """``text`` with characters a terminal would act on (NUL, escapes, direction overrides) written as escapes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else ascii(c)[1:-1] for c in text)


def listed(names: Sequence[str], limit: int = _SHOWN_NAMES) -> str:
    """Column names for a message: the first ``limit``, each cut to a readable length, and how many more.

    A header of 100,000 columns must not become a message of a megabyte.
    """
    cut = [shown(name if len(name) <= _SHOWN_NAME_CHARS else name[: _SHOWN_NAME_CHARS - 1] + "…") for name in names]
    if len(cut) <= limit:
        return ", ".join(cut)
    return f"{', '.join(cut[:limit])}, … and {len(cut) - limit:,} more ({len(cut):,} columns)"


def line_too_long(path: Path, line: int, limit: int = MAX_LINE_BYTES) -> SourceError:
    return SourceError(
        RowProblem(
            str(path), 0, "(file)",
            f"line {line:,} is longer than {limit >> 20} MiB; nlue reads lines and fields of text sources up to "
            f"{limit >> 20} MiB: this is not a text file of rows (a sparse or binary file has no line ends), or a "
            "quote was left open",
        )
    )  # fmt: skip


class LineLengths:
    """Watches the bytes of a text file, chunk after chunk, for a line longer than ``limit`` bytes."""

    def __init__(self, path: Path, limit: int = MAX_LINE_BYTES) -> None:
        self.path = path
        self.limit = limit
        self.open_line = 0  # bytes since the last line end
        self.lines = 0  # line feeds seen before the current chunk

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk (at most ``limit`` bytes); raise a :class:`SourceError` naming the line."""
        ends = [i for i in (chunk.find(b"\n"), chunk.find(b"\r")) if i >= 0]
        if not ends:
            self.open_line += len(chunk)
        else:
            self.open_line += min(ends)  # the rest of the line the previous chunk left open
            if self.open_line <= self.limit:
                self.open_line = len(chunk) - max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) - 1
        if self.open_line > self.limit:
            raise line_too_long(self.path, self.lines + 1, self.limit)
        self.lines += chunk.count(b"\n")


def bounded_lines(handle: TextIO, path: Path, limit: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The lines of a text handle, each read with a bound, so that a line without end is refused, not held."""
    number = 0
    while line := handle.readline(limit + 1):
        number += 1
        if len(line) > limit:
            raise line_too_long(path, number, limit)
        yield line


def _looks_like(head: bytes) -> tuple[str, str] | None:
    """The encoding ``head`` (a file's first bytes) is in when it is UTF-16 or UTF-32: (name, iconv name)."""
    for mark, name, iconv in _BYTE_ORDER_MARKS:
        if head.startswith(mark):
            return f"{name}, with a byte-order mark", iconv
    if b"\x00" not in head:
        return None
    for codec, name, iconv, width in _WITHOUT_MARK:
        cut = head[: len(head) - len(head) % width]
        try:
            text = cut.decode(codec)
        except UnicodeDecodeError:
            continue
        # Text in that encoding decodes to printable characters and line ends, and holds no NUL;
        # UTF-8 text with a stray NUL decodes to noise without line ends, or fails.
        if "\x00" in text or "\n" not in text:
            continue
        readable = sum(c.isprintable() or c in "\t\r\n" for c in text)
        if readable >= 0.95 * len(text):
            return name, iconv
    return None


def check_text_encoding(path: Path, handle: BinaryIO | None = None) -> None:
    """Raise a :class:`SourceError` when ``path`` looks like UTF-16 or UTF-32 text rather than UTF-8.

    ``handle``: the file already open (binary), read from its start; else ``path`` is opened.
    """
    if handle is None:
        with path.open("rb") as opened:
            head = opened.read(_SNIFF_BYTES)
    else:
        head = handle.read(_SNIFF_BYTES)
    found = _looks_like(head)
    if found is None:
        return
    name, iconv = found
    raise SourceError(
        RowProblem(
            str(path), 0, "(file)",
            f"looks like {name} text; nlue reads {READ_ENCODINGS}: save it as UTF-8 "
            f"(e.g. iconv -f {iconv} -t UTF-8 {path.name} > {path.stem}.utf8{path.suffix})",
        )
    )  # fmt: skip
