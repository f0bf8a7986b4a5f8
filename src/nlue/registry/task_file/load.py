"""Loading task files: the one path that the shipped tasks and a user's tasks take.

A file is read (:mod:`~nlue.registry.task_file.read`), checked against the schema and by
the checks a schema cannot express, and only when it has no problem at all turned into
tasks; otherwise :class:`~nlue.registry.task_file.problems.TaskFileError` lists every
problem (file, line, key path, what was expected). A file holds one task, or is a benchmark
file (``benchmark:`` and ``tasks:``) whose tasks are written inline or are task files beside
it. The package's own files live in :data:`SHIPPED_DIR` and are checked like any other: a copy of one,
anywhere, loads as the same task.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.registry.spec import Benchmark, TaskSpec
from nlue.registry.task_file.checks import task_problems
from nlue.registry.task_file.convert import task_from_declaration
from nlue.registry.task_file.problems import Path_, Problem, TaskFileError
from nlue.registry.task_file.read import ReadFile, read_task_file
from nlue.registry.task_file.schema import schema_problems

SHIPPED_DIR = Path(__file__).resolve().parents[1] / "shipped_tasks"
SHIPPED_BENCHMARKS = ("nlue", "mcq", "nediom")  # SHIPPED_DIR/<name>/benchmark.yaml, in registry order


def is_shipped(path: Path, doc: dict[str, Any], benchmark: str | None) -> bool:
    """Whether a declaration is one of the package's own tasks (its notes may speak of the papers): a file in
    the package, or a copy of one (a built dataset carries it), which declares one of the shipped benchmarks;
    a user's task cannot join those (their names are taken), so no user's task passes for one."""
    return Path(path).resolve().is_relative_to(SHIPPED_DIR) or (doc.get("benchmark") or benchmark) in SHIPPED_BENCHMARKS


SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class LoadedFile:
    """What one file declares: its tasks, the benchmark header of a benchmark file, the task files it lists."""

    path: Path
    tasks: tuple[TaskSpec, ...]
    benchmark: Benchmark | None = None
    listed: tuple[Path, ...] = ()


def is_user_task(task: TaskSpec) -> bool:
    """A task of a benchmark other than the package's own (NLUE, the exams, neDIOM): no paper of nlue's is behind it."""
    return task.benchmark not in SHIPPED_BENCHMARKS


def _problems_of(read: ReadFile, found: Iterable[tuple[Path_, str]], prefix: Path_ = ()) -> list[Problem]:
    return [read.problem((*prefix, *path), message) for path, message in found]


def _check(read: ReadFile) -> tuple[list[Problem], list[tuple[Path_, dict[str, Any]]], list[Path]]:
    """(problems, the task declarations with their key paths, the task files a benchmark file lists)."""
    problems = list(read.problems)
    data = read.data
    if problems or not isinstance(data, dict):
        if not problems:
            problems.append(read.problem((), "expected a mapping of keys (name, kind, ...), one per line"))
        return problems, [], []
    problems += _problems_of(read, schema_problems(data))
    declarations: list[tuple[Path_, dict[str, Any]]] = []
    listed: list[Path] = []
    if "tasks" in data:
        for i, entry in enumerate(data["tasks"] if isinstance(data["tasks"], list) else []):
            if isinstance(entry, dict):
                declarations.append((("tasks", i), entry))
            elif isinstance(entry, str):
                listed.append(read.path.parent / entry)
    else:
        declarations.append(((), data))
    for prefix, doc in declarations:
        problems += _problems_of(read, task_problems(doc, read.path.parent), prefix)
    header = data.get("benchmark") if "tasks" in data else None
    for prefix, doc in declarations:
        if isinstance(header, dict) and doc.get("benchmark", header.get("name")) != header.get("name"):
            problems.append(read.problem((*prefix, "benchmark"), f"expected {header.get('name')!r}, the file's"))
    return problems, declarations, listed


def load_with_problems(path: Path, seen: tuple[Path, ...] = ()) -> tuple[list[Problem], LoadedFile | None]:
    read = read_task_file(path)
    problems, declarations, listed = _check(read)
    header = read.data.get("benchmark") if isinstance(read.data, dict) and "tasks" in read.data else None
    included: list[TaskSpec] = []
    for i, child in enumerate(listed):
        if child.resolve() in seen or child.resolve() == path.resolve():
            problems.append(read.problem(("tasks", i), f"{child.name} lists itself or a file that lists it"))
            continue
        child_problems, child_file = load_with_problems(child, (*seen, path.resolve()))
        problems += child_problems
        if child_file is not None and (child_file.benchmark is not None or len(child_file.tasks) != 1):
            problems.append(read.problem(("tasks", i), f"{child.name} is a benchmark file; list task files here"))
        elif child_file is not None:
            included += child_file.tasks
    if problems:
        return _in_file_order(problems), None
    name = header["name"] if header else None
    citation = header.get("citation") if header else None
    tasks = [task_from_declaration(doc, path, name, citation, is_shipped(path, doc, name)) for _, doc in declarations]
    if header:  # listed files take the header's benchmark and citation, unless they give their own
        tasks = _in_order(read, tasks, [_rebased(task, name, citation) for task in included])
    names = [task.name for task in tasks]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        return [read.problem(("tasks",), f"the task name(s) {', '.join(repeated)} occur twice")], None
    benchmark = Benchmark(name, header["title"], citation or "", tuple(tasks), str(path)) if header else None
    return [], LoadedFile(path, tuple(tasks), benchmark, tuple(p.resolve() for p in listed))


def _in_file_order(problems: list[Problem]) -> list[Problem]:
    """Problems file by file (in the order the files were met), each file's by line."""
    files = list(dict.fromkeys(problem.file for problem in problems))
    return sorted(problems, key=lambda problem: (files.index(problem.file), problem.line or 0))


def _in_order(read: ReadFile, inline: list[TaskSpec], listed: list[TaskSpec]) -> list[TaskSpec]:
    """A benchmark file's tasks in the order its ``tasks`` list gives them, inline and listed alike."""
    inline_iter, listed_iter = iter(inline), iter(listed)
    return [next(inline_iter) if isinstance(entry, dict) else next(listed_iter) for entry in read.data["tasks"]]


def _rebased(task: TaskSpec, benchmark: str, citation: str | None) -> TaskSpec:
    """A listed task file's task as a member of the benchmark that lists it."""
    from dataclasses import replace

    own_citation = task.citation or citation or ""
    return replace(task, benchmark=benchmark, citation=own_citation)


def load_file(path: str | Path) -> LoadedFile:
    """Every task a task file or benchmark file declares; a TaskFileError with every problem otherwise."""
    problems, loaded = load_with_problems(Path(path))
    if problems or loaded is None:
        raise TaskFileError(problems)
    return loaded


def load_task_file(path: str | Path) -> TaskSpec:
    """The one task a task file declares (a benchmark file of several: use :func:`load_file`)."""
    loaded = load_file(path)
    if len(loaded.tasks) != 1:
        raise NlueError(f"{path} declares {len(loaded.tasks)} tasks ({', '.join(t.name for t in loaded.tasks)}); "
                        "expected a file of one task")  # fmt: skip
    return loaded.tasks[0]


def check_file(path: str | Path) -> list[Problem]:
    """Every problem of a task file (none: it loads); what `nlue tasks validate` prints."""
    return load_with_problems(Path(path))[0]


def task_file_paths(paths: Iterable[str | Path]) -> list[Path]:
    """The files named, with each folder replaced by its ``*.yaml``/``*.yml`` files (sorted, not recursive)."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix.lower() in SUFFIXES and p.is_file())
            if not found:
                raise NlueError(f"{path}: a folder with no task files (*.yaml, *.yml) in it")
            out += found
        elif path.exists():
            out.append(path)
        else:
            raise NlueError(f"{path}: no such task file or folder")
    return list(dict.fromkeys(out))


def shipped_benchmarks() -> tuple[Benchmark, ...]:
    """The package's benchmarks, loaded from their files through the same path as a user's."""
    out = []
    for name in SHIPPED_BENCHMARKS:
        loaded = load_file(SHIPPED_DIR / name / "benchmark.yaml")
        if loaded.benchmark is None or loaded.benchmark.name != name:
            raise NlueError(f"the shipped file {loaded.path} does not declare the benchmark {name!r}")
        out.append(loaded.benchmark)
    return tuple(out)
