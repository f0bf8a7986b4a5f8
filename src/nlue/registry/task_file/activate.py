"""A command's task files, registered for the whole command before its options are parsed.

Every entry point (``nlue.cli.main``, each sub-command's ``main``, ``nlue train``/``search`` and the
trainer scripts) runs its command inside :func:`command_task_files`. Before any parser is built it
registers, all or nothing:

1. the files of every ``--task-file FILE`` (or ``--task_file``, ``--task-file=FILE``) on the command
   line: a task file, a folder of them or a benchmark file;
2. those of the environment variable ``NLUE_TASK_FILES`` (paths separated by ``os.pathsep``): how a
   Space, a sweep's cells or a script hand task files to every command they run;
3. the task files carried by each dataset the command names (``--dataset``, ``--release``; a sweep's
   ``--dataset BENCHMARK=PATH``): every one of a built folder, and of a Hub id those of the tasks the
   command asks for (``--tasks``, ``--task``, ``--configs``) that the registry lacks
   (:mod:`nlue.registry.task_file.carry`).

So a list option checked while parsing (``--tasks topic``) accepts the user's task, and everything the
command runs sees it, as it sees the shipped tasks. Every problem of every file named by 1 and 2 is
reported at once (:class:`~nlue.registry.task_file.problems.TaskFileError`, exit 2) and nothing is
registered then. A carried task whose name is registered already (by 1 or 2) keeps the registered one.

Python code that is not a command (the Space's app, a notebook) calls :func:`activated_task_files`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nlue.registry.spec import TaskSpec
from nlue.registry.task_file.carry import carried_task_files
from nlue.registry.task_file.problems import Problem, TaskFileError
from nlue.registry.task_file.register import load_files, registered_task_files

ENV_VARIABLE = "NLUE_TASK_FILES"
TASK_FILE_OPTIONS = ("--task-file", "--task_file")
DATASET_OPTIONS = ("--dataset", "--release")
NAME_OPTIONS = ("--tasks", "--task", "--configs", "--config")
ALL = "all"  # `--tasks all`: every task, not a name


@dataclass(frozen=True)
class CommandLineTasks:
    """What a command line says about tasks, read before it is parsed."""

    task_files: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # task names asked for: the carried files a Hub dataset is asked for


def _values(argv: Sequence[str], options: Sequence[str], many: bool = False) -> list[str]:
    """The values given to ``options`` in ``argv`` (``--opt V``, ``--opt=V``; ``many``: ``--opt A B,C``)."""
    found: list[str] = []
    position = 0
    while position < len(argv):
        token = argv[position]
        position += 1
        if token == "--":  # what follows is positional
            break
        flag, equals, value = token.partition("=")
        if flag not in options:
            continue
        if equals:
            found.append(value)
            continue
        while position < len(argv) and not argv[position].startswith("-"):
            found.append(argv[position])
            position += 1
            if not many:
                break
    return found


def scan_command_line(argv: Sequence[str]) -> CommandLineTasks:
    """The task files, datasets and task names ``argv`` names (any sub-command's spelling)."""
    datasets = []
    for value in _values(argv, DATASET_OPTIONS):
        key, equals, path = value.partition("=")  # a sweep's --dataset BENCHMARK=PATH
        datasets.append(path if equals and key and "/" not in key else value)
    names = [part.strip() for value in _values(argv, NAME_OPTIONS, many=True) for part in value.split(",")]
    return CommandLineTasks(
        task_files=tuple(_values(argv, TASK_FILE_OPTIONS)),
        datasets=tuple(datasets),
        names=tuple(name for name in names if name),
    )


def env_task_files(environ: Mapping[str, str] | None = None) -> list[str]:
    """The paths of ``NLUE_TASK_FILES`` (``os.pathsep``-separated; empty parts skipped)."""
    value = (os.environ if environ is None else environ).get(ENV_VARIABLE, "")
    return [part for part in value.split(os.pathsep) if part.strip()]


@contextlib.contextmanager
def activated_task_files(
    task_files: Iterable[str | Path] = (),
    datasets: Iterable[str | None] = (),
    names: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Iterator[tuple[TaskSpec, ...]]:
    """Register ``task_files``, those of ``NLUE_TASK_FILES`` and those ``datasets`` carry while the block runs.

    Yields every task registered this way (the registry's specs). ``names``: the task names the caller
    will ask for, whose carried files a Hub dataset is asked for (none given: every file it lists, when
    the Hub answers). All or nothing: a problem in any file
    of ``task_files`` or the environment is a TaskFileError listing every one, before anything is
    registered; a dataset's carried file with a problem names the dataset.
    """
    from_env = env_task_files(environ)
    given = [*map(str, task_files), *from_env]
    if from_env:
        _check_env_paths(from_env)
    with contextlib.ExitStack() as stack:
        tasks: list[TaskSpec] = []
        if given:
            tasks += stack.enter_context(registered_task_files(given))
        from nlue.registry.benchmarks import TASKS

        asked = list(names)
        # A Hub dataset is asked for the files of the unknown names given, or (no name given) for all it lists.
        wanted = [name for name in asked if name not in TASKS and name != ALL] if asked else None
        carried = [path for dataset in dict.fromkeys(datasets) for path in carried_task_files(dataset, wanted)]
        if carried:
            tasks += stack.enter_context(registered_task_files(carried, keep_known=True))
        yield tuple({task.name: task for task in tasks}.values())


def _check_env_paths(paths: Sequence[str]) -> None:
    """A path of NLUE_TASK_FILES that is not there, named as the variable's (not as if typed on the command line)."""
    missing = [path for path in paths if not Path(path).exists()]
    if missing:
        raise TaskFileError(
            [Problem(path, (), f"named by {ENV_VARIABLE}, but there is no such file or folder") for path in missing]
        )


@contextlib.contextmanager
def command_task_files(argv: Sequence[str]) -> Iterator[tuple[TaskSpec, ...]]:
    """:func:`activated_task_files` for what the command line ``argv`` names (:func:`scan_command_line`)."""
    scanned = scan_command_line(argv)
    with activated_task_files(scanned.task_files, scanned.datasets, scanned.names) as tasks:
        yield tasks


def declared_tasks(paths: Iterable[str | Path]) -> tuple[TaskSpec, ...]:
    """The registered tasks that the files ``paths`` declare, in their order (the files are registered already)."""
    from nlue.registry.benchmarks import get_task

    return tuple(get_task(task.name) for loaded in load_files(paths) for task in loaded.tasks)
