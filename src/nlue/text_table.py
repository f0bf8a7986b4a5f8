"""Plain-text tables for the terminal (`nlue tasks`, the build summary)."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(rows: Sequence[Sequence[str]], numbers_right: bool = False) -> str:
    """Columns padded to their widest cell, a dashed rule under the first (header) row.

    With ``numbers_right``, every column but the first is right-aligned, as counts read best.
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: Sequence[str]) -> str:
        cells = (
            c.rjust(w) if numbers_right and i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        return "  ".join(cells).rstrip()

    lines = [line(row) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
