"""Files written whole or not at all: into a temporary file beside the target, then moved over it.

A reader (the Space, `nlue report`, a second sweep) never sees half a file, and a write that fails
leaves the earlier file as it was and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def _beside(path: Path) -> Iterator[tuple[int, str]]:
    """A temporary file in ``path``'s folder (made if missing), moved over ``path`` once the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        yield fd, temporary
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str, newline: str | None = None) -> Path:
    """``text`` as UTF-8 (``newline``: as :func:`open` takes it; "" for a CSV the csv module wrote)."""
    with _beside(path) as (fd, _), os.fdopen(fd, "w", encoding="utf-8", newline=newline) as handle:
        handle.write(text)
    return path


def copy_file_atomic(source: Path, path: Path) -> Path:
    """A byte copy of ``source`` at ``path``."""
    with _beside(path) as (fd, temporary):
        os.close(fd)
        shutil.copyfile(source, temporary)
    return path
