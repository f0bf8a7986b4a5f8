"""What a text source (CSV, TSV, JSON, JSON Lines) must be before its rows are read: UTF-8.

nlue reads text sources as UTF-8, with or without a byte-order mark. A file saved as
UTF-16 or UTF-32 (Windows tools, Excel's "Unicode text") is valid UTF-8 byte by byte
when its text is ASCII: every other byte is NUL, so the header reads as ``t\\x00e\\x00...``
and the build would end with a "missing column" listing names full of NULs.
:func:`check_text_encoding` looks at the first bytes instead and names the encoding.
"""

from __future__ import annotations

import codecs
from pathlib import Path

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


def shown(text: str) -> str:
    """``text`` with characters a terminal would act on (NUL, escapes, direction overrides) written as escapes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else ascii(c)[1:-1] for c in text)


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


def check_text_encoding(path: Path) -> None:
    """Raise a :class:`SourceError` when ``path`` looks like UTF-16 or UTF-32 text rather than UTF-8."""
    with path.open("rb") as handle:
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
