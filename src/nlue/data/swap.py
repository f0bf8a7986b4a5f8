"""Swapping a finished build in for the previous one, so that a kill at any moment loses nothing.

A build's output is three entries of ``<out>``: the repo folder ``<name>/``, ``<name>.report.json``
and ``<name>.rejects.jsonl``. No file system replaces three entries at once, so the swap is
written down first, in a journal ``<out>/.<name>.swap.json`` (created whole, and only by one build
at a time), then made:

1. the repo folder: where the system can exchange two paths in one step (Linux's
   ``renameat2(RENAME_EXCHANGE)``, on ext4, XFS, Btrfs, tmpfs and most local file systems),
   the new folder and the previous one trade places, so ``<out>/<name>`` is a whole build at
   every instant; elsewhere the previous folder is moved aside and the new one moved in, two
   renames with a moment between them when ``<out>/<name>`` is missing;
2. the rejects file, then the report, each replaced in one step;
3. the journal is removed; the previous build and the emptied staging folder are deleted.

A build killed between steps leaves the journal. The next ``nlue build`` into ``<out>``, or the
next load of ``<out>/<name>`` through nlue (:func:`nlue.data.access.load_task`), finishes the swap
(:func:`finish_interrupted_swap`): it tells the new repo from the previous one by the SHA-256 of
its card, which the journal records, moves what is left into place, and logs what happened.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from nlue.data.staging import BUILD_OWNER_MARKER, owner_is_gone, owner_marker, write_owner_marker
from nlue.errors import NlueError

logger = logging.getLogger(__name__)

_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
# Errors that mean "this system or file system cannot exchange": fall back to two renames.
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}
WAIT_FOR_LIVE_SWAP_SECONDS = 10.0


def journal_path(out_dir: Path, name: str) -> Path:
    return out_dir / f".{name}.swap.json"


def card_digest(repo: Path) -> str | None:
    """SHA-256 of a repo's card: which build a repo folder is (None when it has no card)."""
    try:
        return hashlib.sha256((repo / "README.md").read_bytes()).hexdigest()
    except OSError:
        return None


def _swap_step(step: str) -> None:
    """Called after each step of a swap; does nothing. Tests replace it to kill a build at that point."""


def _libc_renameat2() -> Any:
    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not Linux, or a C library older than glibc 2.28
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int
    return call


_RENAMEAT2 = _libc_renameat2()


def _exchange(first: Path, second: Path) -> bool:
    """Exchange two existing paths in one step; False where the system or file system cannot."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, f"cannot exchange {first} and {second}: {os.strerror(code)}")


def _write_journal(journal: Path, record: dict[str, Any]) -> bool:
    """Create ``journal`` holding ``record`` whole, unless it exists; whether this call created it."""
    text = json.dumps(record) + "\n"
    partial = journal.with_name(f"{journal.name}.{os.getpid()}.partial")
    partial.write_text(text, encoding="utf-8")
    try:
        os.link(partial, journal)  # fails if the journal exists: one swap at a time
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: create it exclusively (a kill may leave it partial)
        try:
            with journal.open("x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            return False
    finally:
        partial.unlink()
    return True


def _read_journal(journal: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise NlueError(f"{journal}: unreadable record of an interrupted build ({exc}); remove it by hand") from None
    return record if isinstance(record, dict) else {}


def swap_into_place(staging: Path, out_dir: Path, name: str) -> None:
    """Move the finished build in ``staging`` into ``out_dir``, retiring the previous one (see the module docstring)."""
    journal = journal_path(out_dir, name)
    retired = Path(tempfile.mkdtemp(prefix=f".{name}.old-", dir=out_dir))
    write_owner_marker(retired)  # if the journal is lost, the stale-folder sweep still removes it
    entries = sorted(entry.name for entry in staging.iterdir() if entry.name != BUILD_OWNER_MARKER)
    record = {
        **owner_marker(),
        "staging": staging.name,
        "retired": retired.name,
        "card_sha256": card_digest(staging / name),
        "entries": entries,
    }
    try:
        deadline = time.monotonic() + WAIT_FOR_LIVE_SWAP_SECONDS
        while not _write_journal(journal, record):
            if finish_interrupted_swap(out_dir, name) is None and time.monotonic() > deadline:
                raise NlueError(f"another build is moving its output into {out_dir} now ({journal}); try again")
            time.sleep(0.05)
        _swap_step("journal")
        _move_in(staging, out_dir, name, retired, entries)
        journal.unlink()
        _swap_step("done")
    finally:
        shutil.rmtree(retired, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)


def _move(source: Path, target: Path, tolerant: bool) -> None:
    """``os.replace``; ``tolerant``: a source already gone was moved by another process finishing the same swap."""
    try:
        os.replace(source, target)
    except FileNotFoundError:
        if not tolerant or source.exists():
            raise


def _move_in(
    staging: Path, out_dir: Path, name: str, retired: Path, entries: list[str], tolerant: bool = False
) -> None:
    """Steps 1 and 2 of the module docstring: the repo folder first, then the files, the report last."""
    repo, target = staging / name, out_dir / name
    if repo.exists():
        if not target.exists():
            os.rename(repo, target)
            _swap_step("repo moved in")
        elif _exchange(repo, target):
            _swap_step("repo exchanged")
            os.rename(repo, retired / name)  # the previous build, now in the staging folder
            _swap_step("previous repo retired")
        else:
            os.rename(target, retired / name)
            _swap_step("previous repo retired")
            os.rename(repo, target)
            _swap_step("repo moved in")
    report = f"{name}.report.json"
    for entry in sorted(entries, key=lambda e: (e == report, e)):
        if entry != name and (staging / entry).exists():
            _move(staging / entry, out_dir / entry, tolerant)
            _swap_step(f"{entry} moved in")


def finish_interrupted_swap(out_dir: Path, name: str) -> str | None:
    """Finish a swap that a killed build left half done in ``out_dir``; what happened, in words.

    None when there is none to finish: no journal, or one whose build is still running.
    """
    journal = journal_path(out_dir, name)
    record = _read_journal(journal)
    if record is None or not owner_is_gone(record):
        return None
    staging_name, retired_name = str(record.get("staging", "")), str(record.get("retired", ""))
    if not (staging_name.startswith(f".{name}.staging-") and retired_name.startswith(f".{name}.old-")):
        raise NlueError(f"{journal}: not a record of an nlue build's swap; remove it by hand")
    staging, retired = out_dir / staging_name, out_dir / retired_name
    retired.mkdir(exist_ok=True)
    new_repo, target = staging / name, out_dir / name
    # Each step tolerates a source already gone: a build and a load may finish the same swap at once.
    if new_repo.is_dir() and not new_repo.is_symlink():
        if card_digest(new_repo) == record.get("card_sha256"):  # the new build is not in place yet
            if target.exists():
                _move(target, retired / f"{name}.previous", tolerant=True)
            _move(new_repo, target, tolerant=True)
        else:  # the previous build, which the exchange put in the staging folder
            _move(new_repo, retired / f"{name}.previous", tolerant=True)
    _move_in(staging, out_dir, name, retired, [str(e) for e in record.get("entries", [])], tolerant=True)
    journal.unlink(missing_ok=True)
    shutil.rmtree(retired, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(record.get("started", 0))))
    return (
        f"the build of {out_dir / name} started {started} (pid {record.get('pid')}) was stopped while it moved "
        f"its output into place; that move is now finished: {out_dir / name} and its report are that build's, "
        "and the previous build is removed"
    )


def folders_in_swap(out_dir: Path, name: str) -> set[str]:
    """The staging and retired folders a swap journal in ``out_dir`` names: never swept as stale."""
    try:
        record = _read_journal(journal_path(out_dir, name)) or {}
    except NlueError:
        return set()
    return {str(record.get("staging", "")), str(record.get("retired", ""))} - {""}


def settle(out_dir: Path, name: str) -> str | None:
    """Before reading ``out_dir/name``: wait for a swap under way, finish one a killed build left; what happened."""
    journal = journal_path(out_dir, name)
    deadline = time.monotonic() + WAIT_FOR_LIVE_SWAP_SECONDS
    while journal.exists():
        message = finish_interrupted_swap(out_dir, name)
        if message is not None or not journal.exists():
            return message
        if time.monotonic() > deadline:
            logger.warning("a build is moving its output into %s (%s); reading it as it is", out_dir, journal)
            return None
        time.sleep(0.05)
    return None
