"""A user's task files registered into the live registry for one process (one ``with`` block).

Every command that takes ``--task-file FILE`` (a file, a folder of them, or a benchmark
file) wraps its work in :func:`registered_task_files`: inside the block ``get_task``,
``TASKS`` and every view of the registry know the user's tasks, exactly as they know the
shipped ones. A name that a shipped task (or benchmark) already has is refused, unless the
file declares that very task (a copy of a shipped task file, or the file itself): then the
shipped task is used and nothing is added. The tasks a built dataset carries
(:mod:`nlue.registry.task_file.carry`) are registered with ``keep_known=True``: a name already
registered (the same task given by ``--task-file``) keeps its registered declaration.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from nlue.errors import NlueError
from nlue.registry.benchmarks import BENCHMARKS, TASKS, registered
from nlue.registry.spec import Benchmark, TaskSpec
from nlue.registry.task_file.load import LoadedFile, load_with_problems, task_file_paths
from nlue.registry.task_file.problems import Problem, TaskFileError

logger = logging.getLogger(__name__)


def load_files(paths: Iterable[str | Path]) -> list[LoadedFile]:
    """Every file named (folders expanded) loaded; one TaskFileError with the problems of all of them.

    A task file that a benchmark file among them lists is taken once, as that benchmark's. A path that
    is no file, or a folder without task files, is a problem like the others (all are reported at once).
    """
    files: list[Path] = []
    problems: list[Problem] = []
    for given in paths:
        try:
            files += task_file_paths([given])
        except NlueError as exc:
            problems.append(Problem(str(given), (), str(exc).removeprefix(f"{given}: ")))
    files = list(dict.fromkeys(files))
    loaded: list[LoadedFile] = []
    for path in files:
        found, result = load_with_problems(path)
        problems += found
        if result is not None:
            loaded.append(result)
    if problems:
        raise TaskFileError(problems)
    listed = {path for result in loaded for path in result.listed}
    return [result for result in loaded if result.path.resolve() not in listed]


def _benchmarks(loaded: list[LoadedFile]) -> list[Benchmark]:
    """The user's benchmarks: a benchmark file's own, and single task files grouped by their benchmark name."""
    out: list[Benchmark] = [result.benchmark for result in loaded if result.benchmark is not None]
    grouped: dict[str, list[TaskSpec]] = {}
    for result in loaded:
        if result.benchmark is None:
            for task in result.tasks:
                grouped.setdefault(task.benchmark, []).append(task)
    for name, tasks in grouped.items():
        title = tasks[0].title if len(tasks) == 1 else name
        out.append(Benchmark(name, title, tasks[0].citation, tuple(tasks), tasks[0].task_file))
    return out


def _same_task(task: TaskSpec, taken: TaskSpec) -> bool:
    """Whether ``task`` declares the registered ``taken`` again (a shipped task file loaded on its own
    lacks only the citation its benchmark file lends it)."""
    return replace(task, citation=task.citation or taken.citation) == taken


def _new_tasks(benchmark: Benchmark, keep_known: bool = False) -> Benchmark | None:
    """``benchmark`` less the tasks that are shipped ones declared again; None when nothing is new.

    A different task under a taken name is refused, with the name and where the taken one comes from;
    with ``keep_known`` it is left out, the registered one kept (a warning when their labels differ).
    """
    fresh = []
    for task in benchmark.tasks:
        taken = TASKS.get(task.name)
        if taken is None:
            fresh.append(task)
        elif keep_known:
            if (task.problem_type, task.label_names) != (taken.problem_type, taken.label_names):
                logger.warning("%s declares the task %r with other labels than the one registered from %s; "
                               "the registered one is used", task.task_file, task.name, taken.task_file)  # fmt: skip
        elif not _same_task(task, taken):
            raise NlueError(
                f"{task.task_file}: the task name {task.name!r} is taken by the {taken.benchmark!r} task of that "
                f"name ({taken.task_file or 'declared in Python'}); rename your task (its `name:` key)"
            )
    if not fresh:
        return None
    if benchmark.name in BENCHMARKS and keep_known:
        logger.warning("%s: the benchmark name %r is taken; its tasks %s are left out", benchmark.task_file,
                       benchmark.name, ", ".join(task.name for task in fresh))  # fmt: skip
        return None
    if benchmark.name in BENCHMARKS:
        raise NlueError(
            f"{fresh[0].task_file}: the benchmark name {benchmark.name!r} is taken; tasks cannot be added to it. "
            "Name your own benchmark (`benchmark:`)"
        )
    return Benchmark(benchmark.name, benchmark.title, benchmark.citation, tuple(fresh), benchmark.task_file)


@contextlib.contextmanager
def registered_task_files(paths: Iterable[str | Path], keep_known: bool = False) -> Iterator[tuple[TaskSpec, ...]]:
    """Register the tasks of ``paths`` (files, folders, benchmark files) while the block runs.

    Yields every task the files declare, as the registry holds it (a shipped task declared again is
    the shipped one). Nothing is registered when any file has a problem or any name is refused;
    ``keep_known``: a name already registered keeps its task instead of being refused.
    """
    loaded = load_files(paths)
    benchmarks = _benchmarks(loaded)
    names = [task.name for b in benchmarks for task in b.tasks]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise NlueError(f"the task name(s) {', '.join(repeated)} are declared by more than one of the files given")
    adding = [b for b in (_new_tasks(benchmark, keep_known) for benchmark in benchmarks) if b is not None]
    with contextlib.ExitStack() as stack:
        for benchmark in adding:
            stack.enter_context(registered(benchmark))
        yield tuple(TASKS[task.name] for b in benchmarks for task in b.tasks)
