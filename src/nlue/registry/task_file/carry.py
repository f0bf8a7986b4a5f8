"""The task files a built dataset carries: written by `nlue build`, found again by whatever reads the dataset.

A dataset built from a user's task file holds that task's declaration in ``<repo>/tasks/<task>.yaml``
(the shipped tasks are the package's and are not carried). The declaration is the file's own, less
its ``data:`` (the Parquet files now hold the data, and a local path would point into the builder's
machine), with ``benchmark`` and ``citation`` written in, so that each file stands alone; a task of a
benchmark file brings the benchmark's header too (``tasks/benchmark-<name>.yaml``, listing its files:
a task name holds no ``-``, so the two never clash). Anything that reads the dataset later (a load, the
Space, a submission check) knows the task from it, without the user naming the file again:

* a local folder: every ``*.yaml`` under ``<repo>/tasks/``;
* a Hub id: ``tasks/<task>.yaml`` of each task asked for that the registry lacks, fetched with
  ``huggingface_hub`` (from its cache when offline; when it is not there, a warning says that the task
  stays unknown and to pass ``--task-file``, and the command's own check of the name follows).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from nlue.errors import NlueError
from nlue.registry.spec import Benchmark, TaskSpec
from nlue.registry.task_file.load import is_user_task, load_file
from nlue.registry.task_file.read import read_task_file

logger = logging.getLogger(__name__)

CARRIED_FOLDER = "tasks"
BENCHMARK_PREFIX = "benchmark-"
HEADER = (
    "# Carried by `nlue build`: the declaration of a task this dataset holds, so that whoever reads the\n"
    "# dataset knows the task. Its data is the Parquet in ../{name}/ (the file's own data: key is left out).\n"
)
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


def is_carried(task: TaskSpec) -> bool:
    """Whether a build carries ``task``'s file: a task declared in a file that is not the package's own."""
    return task.task_file is not None and is_user_task(task)


def _declaration(task: TaskSpec) -> dict[str, Any]:
    """The mapping that declares ``task`` in its file (the file itself, or its entry of a benchmark file)."""
    read = read_task_file(Path(str(task.task_file)))
    data = read.data if isinstance(read.data, dict) and not read.problems else None
    if data is None:
        raise NlueError(f"{task.task_file}: the task file of {task.name!r} changed or went away since it was loaded")
    entries = data.get("tasks") if "tasks" in data else [data]
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == task.name:
            return dict(entry)
    raise NlueError(f"{task.task_file}: no longer declares the task {task.name!r} (it changed since it was loaded)")


def carried_text(task: TaskSpec) -> str:
    """The carried file of ``task``: its declaration less ``data``, with its benchmark and citation."""
    doc = {key: value for key, value in _declaration(task).items() if key != "data"}
    doc["benchmark"] = task.benchmark
    if task.citation:
        doc["citation"] = task.citation
    body = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=100)
    return HEADER.format(name=task.name) + body


def _benchmark_text(benchmark: Benchmark, names: Sequence[str]) -> str:
    header: dict[str, Any] = {"name": benchmark.name, "title": benchmark.title}
    if benchmark.citation:
        header["citation"] = benchmark.citation
    doc = {"benchmark": header, "tasks": [f"{name}.yaml" for name in names]}
    return "# Carried by `nlue build`: the header of the benchmark the tasks beside it belong to.\n" + yaml.safe_dump(
        doc, allow_unicode=True, sort_keys=False, width=100
    )


def write_carried_task_files(repo: Path, tasks: Iterable[TaskSpec], benchmark: Benchmark | None) -> list[str]:
    """Write the task files ``tasks`` (those that :func:`is_carried`) into ``repo/tasks/``; their repo paths.

    ``benchmark``: the benchmark they belong to, whose header is written too when it comes from a
    benchmark file. Each file written is loaded back and must declare its task exactly (less its data):
    anything else is our bug, not the user's input.
    """
    carried = [task for task in tasks if is_carried(task)]
    if not carried:
        return []
    folder = repo / CARRIED_FOLDER
    folder.mkdir()
    written = []
    for task in carried:
        path = folder / f"{task.name}.yaml"
        path.write_text(carried_text(task), encoding="utf-8")
        again = load_file(path).tasks
        expected = replace(task, data=MappingProxyType({}))
        if len(again) != 1 or again[0] != expected:
            raise RuntimeError(f"the carried task file {path} does not declare {task.name!r} as registered")
        written.append(f"{CARRIED_FOLDER}/{path.name}")
    from_benchmark_file = benchmark is not None and benchmark.task_file not in (None, carried[0].task_file)
    if benchmark is not None and from_benchmark_file and len(carried) > 1:
        path = folder / f"{BENCHMARK_PREFIX}{benchmark.name}.yaml"
        path.write_text(_benchmark_text(benchmark, [task.name for task in carried]), encoding="utf-8")
        written.append(f"{CARRIED_FOLDER}/{path.name}")
    return written


def is_hub_id(dataset: str) -> bool:
    return HUB_ID.fullmatch(dataset) is not None and not Path(dataset).exists()


def carried_task_files(dataset: str | None, wanted: Iterable[str] | None = None) -> list[Path]:
    """The task files ``dataset`` carries: all of a local folder's; of a Hub id, those of the ``wanted`` names
    (None: every one the repo lists, when the Hub can be asked; a Space reading a dataset names no task).

    A Hub file that cannot be fetched (offline, unreachable) is a warning that says how to name the task
    file instead; a Hub dataset without such a file (or no such dataset) gives none. Either way the
    command then says the task is unknown, as for any name.
    """
    if not dataset or dataset == "sample":
        return []
    folder = Path(dataset).expanduser() / CARRIED_FOLDER
    if folder.is_dir():
        return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    if not is_hub_id(dataset):
        return []
    names = _listed(dataset) if wanted is None else list(dict.fromkeys(wanted))
    return [path for name in names if (path := _fetch(dataset, name)) is not None]


def _listed(dataset: str) -> list[str]:
    """The task names of the files under ``tasks/`` of the Hub dataset ``dataset``; none when the Hub cannot say."""
    from huggingface_hub import HfApi

    try:
        files = HfApi().list_repo_files(dataset, repo_type="dataset")
    except Exception as exc:  # unreachable (the HTTP client's own errors), no such repo: the
        # command goes on and says which task is unknown; the reason is logged, never swallowed
        logger.warning("cannot list the task files of %s: %s: %.200s", dataset, type(exc).__name__, exc)
        return []
    folder = f"{CARRIED_FOLDER}/"
    return [f[len(folder) : -len(".yaml")] for f in files if f.startswith(folder) and f.endswith(".yaml")
            and "/" not in f[len(folder) :] and not f[len(folder) :].startswith(BENCHMARK_PREFIX)]  # fmt: skip


def _fetch(dataset: str, name: str) -> Path | None:
    """``tasks/<name>.yaml`` of the Hub dataset ``dataset`` (the cached copy when offline), or None when absent."""
    from huggingface_hub import hf_hub_download, is_offline_mode
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HFValidationError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    filename = f"{CARRIED_FOLDER}/{name}.yaml"
    try:
        return Path(hf_hub_download(dataset, filename, repo_type="dataset"))
    except LocalEntryNotFoundError as exc:  # offline, or the Hub unreachable, and no cached copy
        offline = " (HF_HUB_OFFLINE is set)" if is_offline_mode() or os.environ.get("HF_HUB_OFFLINE") == "1" else ""
        logger.warning(
            "the task %r is unknown here: the dataset %s may carry its task file (%s), but it could not be fetched"
            "%s: %s. Pass the task file: --task-file FILE (or NLUE_TASK_FILES=FILE)",
            name, dataset, filename, offline, " ".join(str(exc).split())[:200],
        )  # fmt: skip
        return None
    except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError, HFValidationError) as exc:
        logger.debug("%s carries no %s (%s)", dataset, filename, type(exc).__name__)
        return None
