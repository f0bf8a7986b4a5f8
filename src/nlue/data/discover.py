"""Finding a build's source files: ``<root>/<config>/<split>*.<ext>``.

A config's splits are its task's (``train``/``validation``/``test`` for NLUE, ``demo``/``test``
for an exam); ``dev``, ``valid`` and ``val`` name validation where the task has one. One
build is one benchmark's dataset repo: a folder holding configs of several benchmarks
(the embedded sample holds NLUE's and the exams') builds the first registered benchmark's
unless ``configs`` names others, and configs of two benchmarks are not built together.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from nlue.data.report import SPLIT_ALIASES, TaskSources
from nlue.data.sources import SUPPORTED_SUFFIXES
from nlue.errors import NlueError
from nlue.registry.tasks import BENCHMARKS, TASKS, get_task

logger = logging.getLogger(__name__)


def discover_sources(root: Path) -> dict[str, dict[str, list[Path]]]:
    """Find ``<root>/<config>/<split>*.<ext>`` files (``dev``/``valid`` mean validation)."""
    if not root.is_dir():
        raise NlueError(f"{root}: source folder not found")
    found: dict[str, dict[str, list[Path]]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        if folder.name not in TASKS:
            raise NlueError(f"{folder}: not an NLUE config; folders must be named one of {', '.join(TASKS)}")
        splits: dict[str, list[Path]] = {}
        for path in sorted(folder.iterdir()):
            if path.name.startswith((".", "_")) or path.is_dir():
                continue
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise NlueError(f"{path}: unsupported file type; expected {', '.join(SUPPORTED_SUFFIXES)}")
            splits_of_task = TASKS[folder.name].splits
            split = split_of(path, splits_of_task)
            if split is None:
                names = ", ".join(f"{name}*" for name in splits_of_task)
                aliases = " (or dev*)" if "validation" in splits_of_task else ""
                raise NlueError(
                    f"{path}: cannot tell the split; config {folder.name!r} takes files named {names}{aliases}"
                )
            splits.setdefault(split, []).append(path)
        if splits:
            found[folder.name] = splits
    if not found:
        raise NlueError(f"{root}: no source files found (expected <config>/<split>.<ext>)")
    return found


def split_of(path: Path, splits: Sequence[str] = ("train", "validation", "test")) -> str | None:
    """The split a file's name gives (``test.jsonl``, ``train_part1.csv``, ``dev-2.tsv``), among ``splits``."""
    stem = path.name.split(".")[0].lower()
    aliases = [alias for alias, target in SPLIT_ALIASES.items() if target in splits]
    for split in (*splits, *aliases):
        if stem == split or stem.startswith((split + "_", split + "-")):
            return SPLIT_ALIASES.get(split, split)
    return None


def task_sources_from_folder(root: Path, configs: Sequence[str] | None = None) -> list[TaskSources]:
    """The sources of ``configs`` (default: every config found of one benchmark) under ``root``."""
    found = discover_sources(root)
    wanted = list(configs) if configs else list(found)
    missing = [c for c in wanted if c not in found]
    if missing:
        raise NlueError(f"{root}: no source files for {', '.join(missing)}")
    benchmarks = [name for name in BENCHMARKS if any(get_task(c).benchmark == name for c in wanted)]
    if len(benchmarks) > 1:
        if configs:
            raise NlueError(
                f"configs {', '.join(wanted)} belong to the benchmarks {', '.join(benchmarks)}; one build is one "
                "benchmark's dataset repo: build each benchmark's configs separately (--configs)"
            )
        left_out = [c for c in wanted if get_task(c).benchmark != benchmarks[0]]
        logger.info(
            "%s: building benchmark %r; left out the configs of other benchmarks: %s (name them with --configs)",
            root, benchmarks[0], ", ".join(left_out),
        )  # fmt: skip
        wanted = [c for c in wanted if get_task(c).benchmark == benchmarks[0]]
    return [TaskSources(get_task(name), found[name]) for name in wanted]
