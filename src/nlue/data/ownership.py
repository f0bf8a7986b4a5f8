"""Which entries of a build's output folder are nlue's own, and so may be replaced by the next build.

A build replaces three entries of ``<out>``: the repo folder ``<name>/``, ``<name>.report.json`` and
``<name>.rejects.jsonl`` (:mod:`nlue.data.swap`). Whatever else sits under those names (a checkout
that happens to be called ``nlue``, a user's own JSON file) is never deleted or replaced: the build
stops before reading any source, says which path is in the way and how to go on, and exits 2.

An entry is ours when:

* the repo folder holds the marker :data:`BUILD_MARKER` that every build writes into it (a hidden
  file: ``nlue push`` and ``load_dataset`` leave it out), or, for a build made before the marker
  existed, when the report beside it names this very repo (its ``card_sha256`` is the SHA-256 of the
  folder's ``README.md``). An empty folder holds nothing to lose and may be replaced too;
* the report is a JSON object with the keys a build report has;
* the rejects file is empty or starts with a line holding a rejected row as the builder writes it.

A symbolic link under any of the names is never ours: replacing it would replace the link, and the
folder it points to is someone's.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from nlue.data.report import REJECTS_SUFFIX, REPORT_SUFFIX
from nlue.data.swap import card_digest
from nlue.errors import NlueError
from nlue.version import __version__

BUILD_MARKER = ".nlue-build.json"
_TOOL = "nlue build"
_REPORT_KEYS = frozenset({"name", "configs", "rejects", "card_sha256"})
_REJECT_KEYS = frozenset({"config", "split", "file", "row", "field", "reason"})
_MAX_REPORT_BYTES = 64 << 20  # a build report is a few KiB per config; anything this large is not one
_FIRST_LINE_BYTES = 1 << 16


def write_build_marker(repo: Path, name: str, card_sha256: str | None) -> Path:
    """Mark ``repo`` (still in its staging folder) as a build of nlue's, so a later build may replace it.

    No time stamp: the same sources give the same files, byte for byte, the marker included.
    """
    path = repo / BUILD_MARKER
    record = {"tool": _TOOL, "nlue_version": __version__, "name": name, "card_sha256": card_sha256}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def check_replaceable(out_dir: Path, name: str) -> None:
    """Raise an :class:`NlueError` when ``out_dir`` holds, under a name a build of ``name`` writes, an entry that
    is not nlue's (see the module docstring); nothing is touched."""
    repo = out_dir / name
    report = out_dir / f"{name}{REPORT_SUFFIX}"
    rejects = out_dir / f"{name}{REJECTS_SUFFIX}"
    checks = ((repo, _repo_is_ours, "folder"), (report, _report_is_ours, "file"), (rejects, _rejects_is_ours, "file"))
    for path, is_ours, kind in checks:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise NlueError(
                f"{path}: cannot tell whether it is an nlue build ({exc.strerror}); {_how_to_go_on(path)}"
            ) from None
        if stat.S_ISLNK(mode):
            why = "is a symbolic link"
        elif (kind == "folder") != stat.S_ISDIR(mode):
            why = f"is not a {kind}"
        else:
            why = is_ours(path)
        if why:
            raise NlueError(
                f"{path} {why}: it is not the output of an nlue build, and a build replaces only what nlue "
                f"wrote; nothing was changed. {_how_to_go_on(path)}"
            )


def _how_to_go_on(path: Path) -> str:
    return (
        f"Build into another folder (--out elsewhere, or --name another-name), or move {path} away first if it may go."
    )


def _read_json(path: Path, limit: int) -> Any:
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError("too large")
    return json.loads(data.decode("utf-8"))


def _repo_is_ours(repo: Path) -> str:
    """ "" when ``repo`` is a build of ours (or empty), else why not."""
    try:
        marker = _read_json(repo / BUILD_MARKER, _FIRST_LINE_BYTES)
        if isinstance(marker, dict) and marker.get("tool") == _TOOL:
            return ""
    except (OSError, ValueError):
        pass
    try:
        if not any(repo.iterdir()):
            return ""
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if _described_by_report(repo):
        return ""
    return f"holds no {BUILD_MARKER} marker and no build report beside it describes it"


def _described_by_report(repo: Path) -> bool:
    """A build from before the marker: its report names the repo's card by its SHA-256."""
    try:
        report = _read_json(repo.parent / f"{repo.name}{REPORT_SUFFIX}", _MAX_REPORT_BYTES)
    except (OSError, ValueError):
        return False
    digest = card_digest(repo)
    return isinstance(report, dict) and digest is not None and report.get("card_sha256") == digest


def _report_is_ours(report: Path) -> str:
    try:
        data = _read_json(report, _MAX_REPORT_BYTES)
    except (OSError, ValueError):
        return "is not a build report (not a JSON object nlue wrote)"
    if isinstance(data, dict) and set(data) >= _REPORT_KEYS:
        return ""
    return f"is not a build report (a build report holds {', '.join(sorted(_REPORT_KEYS))})"


def _rejects_is_ours(rejects: Path) -> str:
    try:
        with rejects.open("rb") as handle:
            first = handle.readline(_FIRST_LINE_BYTES)
        if not first:
            return ""
        record = json.loads(first.decode("utf-8"))
    except (OSError, ValueError):
        return "is not a rejects file (its first line is not a rejected row as nlue writes it)"
    if isinstance(record, dict) and set(record) >= _REJECT_KEYS:
        return ""
    return "is not a rejects file (its first line is not a rejected row as nlue writes it)"
