"""Strict JSON for every file nlue writes for others to read: results, predictions, raw outputs, run summaries.

Python's ``json`` writes ``NaN`` and ``Infinity`` by default, which no other JSON parser accepts
(``JSON.parse`` in a browser, ``jq``, Go, Rust...). Here a value that is not a finite number is
stored as ``null``, the JSON for "no value", and said in a warning that names where it was
(``metrics.accuracy_parseable``), then the text is made with ``allow_nan=False``, so nothing
non-finite can slip through. A results file says *why* a metric is null
(``details.null_metrics``, :class:`nlue.results.RunResult`); this module is the last guard for
everything else.

:func:`loads` is the matching strict reader: ``NaN``, ``Infinity`` and ``-Infinity`` are refused,
as other tools refuse them.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

SHOWN_PATHS = 5  # where non-finite values were, at most this many named in the warning


def finite_or_none(value: Any, path: str = "", found: list[str] | None = None) -> Any:
    """``value`` with every float that is not finite (NaN, ±inf, also numpy's) replaced by None.

    ``found`` collects the dotted paths of the replaced values (``metrics.pearson``, ``rows[3].score``).
    """
    found = [] if found is None else found
    if isinstance(value, float) or getattr(getattr(value, "dtype", None), "kind", None) == "f":
        if getattr(value, "shape", ()) == () and not math.isfinite(float(value)):
            found.append(path or "(value)")
            return None
        return value
    if isinstance(value, Mapping):
        return {k: finite_or_none(v, f"{path}.{k}" if path else str(k), found) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(v, f"{path}[{i}]", found) for i, v in enumerate(value)]
    return value


def _warn(found: list[str], where: str) -> None:
    if found:
        more = f" and {len(found) - SHOWN_PATHS} more" if len(found) > SHOWN_PATHS else ""
        logger.warning("%s: %d value(s) that are not finite numbers stored as null: %s%s", where or "JSON",
                       len(found), ", ".join(found[:SHOWN_PATHS]), more)  # fmt: skip


def dumps(value: Any, *, where: str = "", **options: Any) -> str:
    """``json.dumps`` that never writes NaN or Infinity: such values become null, with a warning naming them."""
    found: list[str] = []
    clean = finite_or_none(value, "", found)
    _warn(found, where)
    options.setdefault("ensure_ascii", False)
    return json.dumps(clean, allow_nan=False, **options)


def dumps_lines(rows: Any, *, where: str = "") -> str:
    """JSON lines (one object a line, each ending in a newline), strict as :func:`dumps`; one warning for all."""
    found: list[str] = []
    lines = [
        json.dumps(finite_or_none(row, f"line {number}", found), ensure_ascii=False, allow_nan=False) + "\n"
        for number, row in enumerate(rows, start=1)
    ]
    _warn(found, where)
    return "".join(lines)


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON (a number that is not finite); strict JSON has no such value")


def loads(text: str | bytes) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity``, as strict JSON parsers do."""
    return json.loads(text, parse_constant=_refuse)
