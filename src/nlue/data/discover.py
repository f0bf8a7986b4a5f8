"""Finding a build's source files: ``<root>/<config>/<split>*.<ext>``, and their checksums."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from nlue.data.report import SPLIT_ALIASES, SPLITS, TaskSources
from nlue.data.sources import SUPPORTED_SUFFIXES
from nlue.errors import NlueError
from nlue.registry.tasks import TASKS, get_task


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
            split = split_of(path)
            if split is None:
                raise NlueError(f"{path}: cannot tell the split; name files train*, validation* (or dev*), test*")
            splits.setdefault(split, []).append(path)
        if splits:
            found[folder.name] = splits
    if not found:
        raise NlueError(f"{root}: no source files found (expected <config>/<split>.<ext>)")
    return found


def split_of(path: Path) -> str | None:
    stem = path.name.split(".")[0].lower()
    for split in (*SPLITS, *SPLIT_ALIASES):
        if stem == split or stem.startswith((split + "_", split + "-")):
            return SPLIT_ALIASES.get(split, split)
    return None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def task_sources_from_folder(root: Path, configs: Sequence[str] | None = None) -> list[TaskSources]:
    found = discover_sources(root)
    wanted = list(configs) if configs else list(found)
    missing = [c for c in wanted if c not in found]
    if missing:
        raise NlueError(f"{root}: no source files for {', '.join(missing)}")
    return [TaskSources(get_task(name), found[name]) for name in wanted]
