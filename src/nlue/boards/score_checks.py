"""Every score a leaderboard shows is recomputed from its per-item predictions first (:mod:`nlue.evals.verify`).

The three tables (NLUE, exams, neDIOM) ask :func:`check_results_file` about each results file:

* **verified** (``✓ recomputed``): the stored scores are what the predictions give; ranked as usual;
* **unverified**: no predictions to recompute from (a file from an older nlue, or written by hand). It
  is shown, marked, and ranked after every checked row, never among them;
* **refused**: a stored score disagrees with its predictions or lies outside its metric's range, or
  the predictions file is unreadable, outside the run folder or not the file's own. The file is left
  out (its scores are neither shown nor ranked) and listed below the table with the reason.

Rescoring reads every predictions file; the outcome is kept per file and reused while neither the
results file nor its predictions file changes (size and modification time), so that re-reading a
results repo after a refresh costs only what changed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nlue.evals.verify import REFUSED, UNVERIFIED, ScoreCheck, check_file
from nlue.text.safe import markdown_text

VERIFIED_CELL = "✓ recomputed"
PAPER_CELL = "as printed"
UNVERIFIED_CELL = "unverified"
LEFT_OUT_CELL = "⚠ left out"
_KEEP = 4096  # outcomes remembered; far more than a results repo's files

_cache: dict[tuple[Any, ...], ScoreCheck] = {}
_lock = threading.Lock()


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def check_results_file(path: Path, data: Mapping[str, Any]) -> ScoreCheck:
    """:func:`nlue.evals.verify.check_file`, remembered while the file and its predictions are unchanged."""
    name = data.get("predictions")
    rows = Path(path).parent / name if isinstance(name, str) and name else None
    key = (str(Path(path).resolve()), _stamp(Path(path)), str(name), _stamp(rows) if rows is not None else None)
    with _lock:
        found = _cache.get(key)
    if found is not None:
        return found
    outcome = check_file(Path(path), data)
    with _lock:
        if len(_cache) >= _KEEP:
            _cache.clear()
        _cache[key] = outcome
    return outcome


def check_cell(unverified: Iterable[str] = (), left_out: Iterable[str] = ()) -> str:
    """A row's Check cell: ``✓ recomputed``, or which of its tasks are unverified or left out."""
    parts = []
    if left_out := list(left_out):
        parts.append(f"{LEFT_OUT_CELL}: {', '.join(left_out)}")
    if unverified := list(unverified):
        parts.append(f"{UNVERIFIED_CELL}: {', '.join(unverified)}")
    return " · ".join(parts) or VERIFIED_CELL


def is_refused(check: ScoreCheck) -> bool:
    return check.status == REFUSED


def is_unverified(check: ScoreCheck) -> bool:
    return check.status == UNVERIFIED


def skipped_markdown(skipped: list[str], shown: int | None = None) -> str:
    """The files a table skipped or left out, each with its reason, as one Markdown line or (``shown``) a list.

    The names and reasons come from the files: they are shown as text, never as markup. With ``shown``,
    a bullet list of the first ``shown`` entries and how many more there are.
    """
    if shown is None:
        return "; ".join(markdown_text(entry) for entry in skipped)
    lines = [f"- {markdown_text(entry)}" for entry in skipped[:shown]]
    if len(skipped) > shown:
        lines.append(f"- … and {len(skipped) - shown} more (each is in the Space's log)")
    return "\n".join(lines)
