"""Reading results and predictions files that anyone may have written: bounded, and confined to the run folder.

A results folder (a local one, a Hub results repo's mirror, a run sent to ``nlue submit``) is input
from outside. Everything that reads one (the leaderboard and its exam and neDIOM tables, ``nlue
report``, ``nlue compare``, ``nlue submit``, the sweep's summary) reads it through here, so that:

* a results file is a regular file of at most :data:`RESULTS_MAX_BYTES`, read whole, holding one
  JSON object nested at most :data:`MAX_DEPTH` deep. The depth is measured on the text before it is
  parsed, so a file nested 5,000 deep is refused with a reason instead of ending the program in a
  ``RecursionError``;
* a predictions file (``.jsonl``, one row per test item) is read line by line, never whole: at most
  :data:`PREDICTIONS_MAX_BYTES` in all and :data:`LINE_MAX_BYTES` a line, each line under the same
  depth limit;
* the predictions file a results file names is a plain relative path inside the results file's own
  folder: an absolute path, ``..`` or a symlink leading out of the folder is refused.

A file that breaks a rule raises :class:`BadResultsFile` (an :class:`~nlue.errors.NlueError`) naming
the file and the rule, so that a reader of many files can set that one file aside with its reason.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from nlue.errors import NlueError

MIB = 1024 * 1024
# The largest results file nlue writes is an exam's, with its per-domain tables: tens of KB. 8 MiB is far past
# any real one and still quick to parse.
RESULTS_MAX_BYTES = 8 * MIB
# A predictions file holds one row per test item with what the evaluator kept (log-likelihoods, a raw output
# of up to a few thousand tokens): a 100,000-item test split of long outputs fits in 1 GiB.
PREDICTIONS_MAX_BYTES = 1024 * MIB
LINE_MAX_BYTES = 4 * MIB
# nlue's own files nest 6 deep at most (details.tables.domain[i].<field>); 32 leaves room for any extra.
MAX_DEPTH = 32

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, escapes included
_NOT_BRACKET = re.compile(r"[^\[\]{}]")


class BadResultsFile(NlueError):
    """A results or predictions file that breaks one of the reading rules (module docstring)."""


def nesting_depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings do not count).

    Linear and without recursion, so it is safe on any text; on text that is not JSON the count
    can only be too high, never too low.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    steps = (1 if c in "[{" else -1 for c in brackets)
    return max(itertools.accumulate(steps, initial=0))


def parse_bounded(text: str, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` for a text from outside: refused (BadResultsFile naming ``where``) when too deep."""
    depth = nesting_depth(text)
    if depth > max_depth:
        raise BadResultsFile(f"{where}: nested {depth} levels deep; at most {max_depth} are read")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadResultsFile(f"{where}: not JSON ({exc})") from None


def _regular_file(path: Path, what: str) -> int:
    """The size of ``path``, refusing what is not a regular file (a FIFO would block the reader for ever)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise BadResultsFile(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not path.is_file():
        raise BadResultsFile(f"{path}: the {what} is not a regular file")
    return stat.st_size


def _size(limit: int) -> str:
    return f"{limit / MIB:g} MiB" if limit >= MIB else f"{limit:,} bytes"


def _too_big(path: Path, what: str, limit: int) -> BadResultsFile:
    return BadResultsFile(f"{path}: the {what} is larger than {_size(limit)}, the most that is read")


def read_versioned_object(
    path: Path, *, file_format: str, schema_version: int, max_bytes: int, what: str, error: type[Exception]
) -> dict[str, Any]:
    """A JSON object of nlue's own versioned kinds (a contamination or memorisation file): read under the limits of
    :func:`read_json_object`, its ``format`` and ``schema_version`` checked and ``tasks`` an object; anything else
    raises ``error`` naming the file and the field."""
    try:
        data = read_json_object(path, max_bytes=max_bytes, what=what)
    except BadResultsFile as exc:
        raise error(str(exc)) from None
    for field, expected, wanted in (("format", file_format, repr(file_format)),
                                    ("schema_version", schema_version, f"{schema_version} (this nlue reads no other)")):  # fmt: skip
        if data.get(field) != expected:
            raise error(f"{path}: {field}: expected {wanted}")
    if not isinstance(data.get("tasks"), dict):
        raise error(f"{path}: tasks: expected an object of tasks")
    return data


def read_json_object(path: Path, max_bytes: int = RESULTS_MAX_BYTES, what: str = "results file") -> dict[str, Any]:
    """One JSON object from ``path``, under the size and depth limits; BadResultsFile says which rule broke."""
    path = Path(path)
    if _regular_file(path, what) > max_bytes:
        raise _too_big(path, what, max_bytes)
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)  # the file may have grown since stat
    except OSError as exc:
        raise BadResultsFile(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise _too_big(path, what, max_bytes)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadResultsFile(f"{path}: the {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    data = parse_bounded(text, str(path))
    if not isinstance(data, dict):
        raise BadResultsFile(f"{path}: the {what} holds a JSON {type(data).__name__}, not an object")
    return data


def iter_json_lines(
    path: Path, max_bytes: int = PREDICTIONS_MAX_BYTES, line_bytes: int = LINE_MAX_BYTES
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line of a JSON-lines file, streamed under the limits."""
    path = Path(path)
    what = "predictions file"
    if _regular_file(path, what) > max_bytes:
        raise _too_big(path, what, max_bytes)
    total = 0
    try:
        with path.open("rb") as handle:
            for number in itertools.count(1):
                raw = handle.readline(line_bytes + 1)
                if not raw:
                    return
                total += len(raw)
                if total > max_bytes:
                    raise _too_big(path, what, max_bytes)
                if len(raw) > line_bytes:
                    raise BadResultsFile(f"{path}, line {number}: longer than {_size(line_bytes)}")
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise BadResultsFile(f"{path}, line {number}: not UTF-8 text ({exc.reason})") from None
                if text.strip():
                    yield number, parse_bounded(text, f"{path}, line {number}")
    except OSError as exc:
        raise BadResultsFile(f"{path}: cannot be read ({exc.strerror or exc})") from None


def predictions_file(results_path: Path, data: Mapping[str, Any]) -> Path | None:
    """The predictions file a results file names (``predictions``), checked to lie inside its folder.

    None when the results file names none. Refused (BadResultsFile): an absolute path, a ``..``
    part, a backslash, or a path whose symlinks lead out of the results file's folder.
    """
    name = data.get("predictions")
    if name is None or name == "":
        return None
    where = f"{results_path}: its `predictions`"
    if not isinstance(name, str):
        raise BadResultsFile(f"{where} is {type(name).__name__}, not the name of a file beside it")
    pure = PurePosixPath(name)
    if pure.is_absolute() or PureWindowsPath(name).drive:
        raise BadResultsFile(f"{where} {name!r} is an absolute path; it must name a file inside {results_path.parent}")
    if "\\" in name:
        raise BadResultsFile(f"{where} {name!r} holds a backslash; name the file with '/' inside the run folder")
    if ".." in pure.parts:
        raise BadResultsFile(f"{where} {name!r} leads out of the run folder with '..'")
    folder = Path(results_path).parent
    candidate = folder.joinpath(*pure.parts)
    try:
        resolved, inside = candidate.resolve(strict=True), folder.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
        raise BadResultsFile(f"{candidate}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if not resolved.is_relative_to(inside):
        raise BadResultsFile(f"{where} {name!r} is a symlink to {resolved}, outside the run folder {inside}")
    return candidate
