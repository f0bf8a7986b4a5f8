"""Benchmarks -> tasks: which benchmarks the package knows, and one lookup over all their tasks.

A benchmark (NLUE, the native-language MCQ exams, the neDIOM idiom set) has a name, a
title, a citation and its tasks, all declared in task files (:mod:`nlue.registry.task_file`).
Task names are unique across benchmarks, so ``get_task(name)`` finds any task. :func:`registered` adds a benchmark for as long as a
``with`` block lasts (tests add a throwaway task this way, and
:func:`nlue.registry.task_file.register.registered_task_files` a user's task files); the
views below are live, so every part of the package sees it with no other code touched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from types import MappingProxyType
from typing import Any

from nlue.errors import NlueError
from nlue.registry.spec import Benchmark, TaskSpec
from nlue.registry.task_file.load import SHIPPED_BENCHMARKS, shipped_benchmarks

# The shipped benchmarks, loaded from their task files (nlue/registry/shipped_tasks) by the loader a user's take.
_BENCHMARKS: dict[str, Benchmark] = {benchmark.name: benchmark for benchmark in shipped_benchmarks()}
_TASKS: dict[str, TaskSpec] = {task.name: task for benchmark in _BENCHMARKS.values() for task in benchmark.tasks}
NLUE, MCQ, NEDIOM = _BENCHMARKS["nlue"], _BENCHMARKS["mcq"], _BENCHMARKS["nediom"]

BENCHMARKS: MappingProxyType[str, Benchmark] = MappingProxyType(_BENCHMARKS)
TASKS: MappingProxyType[str, TaskSpec] = MappingProxyType(_TASKS)
"""Every task of every registered benchmark, by name (a live view)."""


class TaskNames(Sequence[str]):
    """The task names of a benchmark, read live from the registry; compares equal to a tuple of them."""

    def __init__(self, benchmark: str) -> None:
        self._benchmark = benchmark

    def _names(self) -> tuple[str, ...]:
        return BENCHMARKS[self._benchmark].task_names

    def __getitem__(self, index: Any) -> Any:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._names())


TASK_NAMES: Sequence[str] = TaskNames(NLUE.name)
"""NLUE's task names in the paper's order (a live view)."""


class TaskSelection(Sequence[str]):
    """The names of every registered task (all benchmarks) that ``wanted`` accepts, read live."""

    def __init__(self, wanted: Callable[[TaskSpec], bool]) -> None:
        self._wanted = wanted

    def _names(self) -> tuple[str, ...]:
        return tuple(name for name, task in _TASKS.items() if self._wanted(task))

    def __getitem__(self, index: Any) -> Any:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __repr__(self) -> str:
        return repr(self._names())


TRAINABLE_TASKS: Sequence[str] = TaskSelection(lambda task: task.kind.trainable)
"""Every task fine-tuned as a sequence classifier, across benchmarks (a live view)."""


def get_task(name: str) -> TaskSpec:
    """The spec of task ``name`` in any benchmark; a ValueError listing the valid names."""
    try:
        return _TASKS[name]
    except KeyError:
        raise NlueError(
            f"unknown NLUE task {name!r}; expected one of: {', '.join(_TASKS)} (a task of your own is declared "
            "in a task file: see `nlue tasks new --help`)"
        ) from None


def benchmark_of(task: TaskSpec) -> Benchmark:
    return _BENCHMARKS[task.benchmark]


@contextlib.contextmanager
def registered(benchmark: Benchmark) -> Iterator[Benchmark]:
    """Register ``benchmark`` (and its tasks) while the block runs; refuse a name already taken."""
    taken = [task.name for task in benchmark.tasks if task.name in _TASKS]
    if benchmark.name in _BENCHMARKS or taken:
        raise NlueError(f"benchmark {benchmark.name!r} or task(s) {taken} already registered")
    mismatched = [task.name for task in benchmark.tasks if task.benchmark != benchmark.name]
    if mismatched:
        raise NlueError(f"task(s) {mismatched} name another benchmark than {benchmark.name!r}")
    _BENCHMARKS[benchmark.name] = benchmark
    _TASKS.update({task.name: task for task in benchmark.tasks})
    try:
        yield benchmark
    finally:
        del _BENCHMARKS[benchmark.name]
        for task in benchmark.tasks:
            _TASKS.pop(task.name, None)


def is_shipped_task(task: TaskSpec) -> bool:
    """Whether ``task`` is one of the package's own benchmarks (NLUE, the exams, neDIOM), which papers printed.

    Every other registered task is declared by a user's task file: its results are shown in tables of
    their own, never in a paper's tables or the NLUE score.
    """
    return task.benchmark in SHIPPED_BENCHMARKS


def declared_tasks() -> tuple[TaskSpec, ...]:
    """Every registered task that no shipped benchmark holds (a user's task files), in registry order."""
    return tuple(task for task in _TASKS.values() if not is_shipped_task(task))


def tasks_in_category(category: str) -> tuple[TaskSpec, ...]:
    return tuple(t for t in TASKS.values() if t.category == category)
