"""Where a build is staged, and the staging folders killed builds leave behind.

A build writes everything into ``.<name>.staging-*`` beside its output and moves it into
place only when the whole build succeeded (:func:`nlue.data.swap.swap_into_place`), retiring
the previous output through ``.<name>.old-*``. Both carry an owner marker, so that the next
build into the same place can tell a folder left by a build that is gone (and remove it)
from one of a build still running, or from anything else (never touched).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


BUILD_OWNER_MARKER = ".nlue-build-owner.json"
_OWNER_TOOL = "nlue build"
# A build never runs this long; past it, a folder whose owner cannot be checked (another
# host on a shared disk, or no process start time to tell a reused pid) is stale.
STALE_AFTER_SECONDS = 7 * 24 * 3600


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, Linux), to tell a reused pid; else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # Field 22 (starttime); the command name in field 2 may hold spaces, so count after its ")".
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    except (OSError, OverflowError):
        return False
    return True


def owner_marker() -> dict[str, Any]:
    """Who this build is: tool, pid, host, start times (what :func:`owner_is_gone` checks)."""
    return {
        "tool": _OWNER_TOOL,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.time(),
        "process_start": _process_start(os.getpid()),
    }


def write_owner_marker(folder: Path) -> None:
    """Mark ``folder`` as this process's build folder: pid, host, start times.

    Written to a temporary name and renamed, so a folder holds a whole marker or none; a
    folder without one is never removed by :func:`remove_stale_build_folders`, which also
    covers a build caught between creating its folder and marking it.
    """
    marker = owner_marker()
    partial = folder / f"{BUILD_OWNER_MARKER}.partial"
    partial.write_text(json.dumps(marker) + "\n", encoding="utf-8")
    os.replace(partial, folder / BUILD_OWNER_MARKER)


def stale_build_folder(folder: Path) -> dict[str, Any] | None:
    """The owner marker of ``folder`` when the build that made it is gone, else None.

    Stale means the marker is ours and complete, and either its owner ran on this host and
    that pid is not alive (or is alive but started at another time: the pid was reused), or
    the marker is older than ``STALE_AFTER_SECONDS`` and its owner cannot be checked (another
    host). A running build's folder, a folder without a readable marker, and a symlink are
    never stale.
    """
    if folder.is_symlink() or not folder.is_dir():
        return None
    try:
        marker = json.loads((folder / BUILD_OWNER_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if owner_is_gone(marker) else None


def owner_is_gone(marker: Any) -> bool:
    """Whether the build an owner marker names is gone (see :func:`stale_build_folder`); False when unsure."""
    try:
        pid, host, started = int(marker["pid"]), str(marker["host"]), float(marker["started"])
    except (ValueError, TypeError, KeyError):
        return False
    if not isinstance(marker, dict) or marker.get("tool") != _OWNER_TOOL:
        return False
    too_old = time.time() - started > STALE_AFTER_SECONDS
    if host != socket.gethostname():
        return too_old
    if not _pid_alive(pid):
        return True
    recorded, current = marker.get("process_start"), _process_start(pid)
    if recorded is not None and current is not None:
        return recorded != current
    return too_old


def _remove_marked_folder(folder: Path) -> None:
    """Remove ``folder``, its marker last, so that a removal cut short can be finished next time."""
    for entry in folder.iterdir():
        if entry.name == BUILD_OWNER_MARKER:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (folder / BUILD_OWNER_MARKER).unlink(missing_ok=True)
    folder.rmdir()


def remove_stale_build_folders(
    out_dir: Path, name: str, kinds: Sequence[str] = ("staging", "old"), keep: Collection[str] = ()
) -> list[Path]:
    """Remove the ``.<name>.staging-*`` / ``.<name>.old-*`` folders that killed builds left in ``out_dir``.

    Only folders with this exact prefix and a stale owner marker (:func:`stale_build_folder`)
    are touched, never one named in ``keep`` (those a swap journal still needs); each removal is
    logged. A folder that cannot be removed (permissions, or another build removing it at the same
    time) is logged and left.
    """
    prefixes = tuple(f".{name}.{kind}-" for kind in kinds)
    removed: list[Path] = []
    for folder in sorted(out_dir.iterdir()):
        if not folder.name.startswith(prefixes) or folder.name in keep:
            continue
        marker = stale_build_folder(folder)
        if marker is None:
            continue
        try:
            _remove_marked_folder(folder)
        except FileNotFoundError:
            continue  # a concurrent build removed it first
        except OSError as exc:
            logger.warning("could not remove stale build folder %s: %s", folder, exc)
            continue
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(marker["started"])))
        logger.info(
            "removed stale build folder %s, left by a build that is gone (pid %s on %s, started %s)",
            folder, marker["pid"], marker["host"], started,
        )  # fmt: skip
        removed.append(folder)
    return removed
