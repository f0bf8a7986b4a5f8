"""A process's task files: those named on its command line and in ``NLUE_TASK_FILES``, registered together.

``NLUE_TASK_FILES`` names task files, folders of them or benchmark files, separated by ``os.pathsep``
(``:`` on Linux and macOS, ``;`` on Windows), for everything that cannot take ``--task-file``: a Space
started by ``python app.py``, the ``nlue`` evaluate module, a notebook. :func:`active_task_files` is the
one place that reads it: the Space wraps its whole life in it (``nlue space --task-file FILE``), and
any command may do the same.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from nlue.registry.spec import TaskSpec
from nlue.registry.task_file.register import registered_task_files

logger = logging.getLogger(__name__)

TASK_FILES_VARIABLE = "NLUE_TASK_FILES"


def task_files_from_environment(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The paths ``NLUE_TASK_FILES`` names, in order (none when it is unset or empty)."""
    value = (os.environ if environ is None else environ).get(TASK_FILES_VARIABLE, "")
    return [Path(part.strip()) for part in value.split(os.pathsep) if part.strip()]


@contextlib.contextmanager
def active_task_files(given: Iterable[str | Path] = ()) -> Iterator[tuple[TaskSpec, ...]]:
    """Register the task files ``given`` (a command's ``--task-file``) and those of ``NLUE_TASK_FILES`` while the
    block runs; yields their tasks (none registered, and nothing read, when neither names a file)."""
    paths = [*given, *task_files_from_environment()]
    if not paths:
        yield ()
        return
    with registered_task_files(paths) as tasks:
        logger.info("task files: %s registered from %s", ", ".join(t.name for t in tasks), ", ".join(map(str, paths)))
        yield tasks
