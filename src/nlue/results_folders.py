"""Several results folders read as one: sweep folders understood, every run named by where it sits.

`nlue report`, `nlue compare` and `nlue space` take one folder or several. Each is either

* a results folder: run folders of ``<task>.json`` files, as every command writes them
  (``build/results``, or any ``--results-dir``); or
* a sweep's output folder (``build/sweep/<name>``, holding ``results/``, ``runs/`` and ``sweep/``):
  its ``results/`` is read. The checkpoints under ``runs/`` keep their own copy of their results
  (``nlue_results.json``) and the cells' markers under ``sweep/`` are JSON too: neither is a run.

A run is named by its folder relative to the results folder it sits in. With several folders, each
run's name starts with its folder's label (the sweep's name, else the folder's own name, lengthened
by its parents until the labels differ), so that two sweeps' runs of the same name stay apart.
The files themselves are read by :func:`nlue.results.read_results`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.results import read_results
from nlue.results_files import BadResultsFile
from nlue.results_files import predictions_file as checked_predictions_file

logger = logging.getLogger(__name__)

SWEEP_RESULTS, SWEEP_STATE = "results", "sweep"  # nlue.evals.sweep.grid's folders (kept apart: no upward import)
FOLDER_HELP = (
    "a results folder (run folders of <task>.json files) or a sweep's folder (build/sweep/<name>: its results/ "
    "is read); several are read together, each run named after its folder"
)


def is_sweep_folder(path: Path) -> bool:
    """A sweep's output folder: ``results/`` beside the sweep's own ``sweep/`` state folder."""
    return (path / SWEEP_RESULTS).is_dir() and (path / SWEEP_STATE).is_dir()


@dataclass(frozen=True)
class ResultsFolder:
    """A folder of results files: where they are, what the user named, and its runs' prefix."""

    path: Path  # the folder the results files are under (a sweep's results/)
    given: Path  # as the user named it (the sweep folder, for a sweep)
    label: str = ""  # the prefix of its runs' names when several folders are read together

    def run_name(self, run_folder: Path) -> str:
        """A run folder's name: relative to this folder (its own name for files at the top), with the label."""
        relative = Path(run_folder).relative_to(self.path).as_posix()
        if relative == ".":
            relative = self.given.name or self.path.name
        return f"{self.label}/{relative}" if self.label else relative

    def __str__(self) -> str:
        return str(self.given) if self.given == self.path else f"{self.given} (its {self.path.name}/)"


def _labels(folders: Sequence[tuple[Path, Path]]) -> list[str]:
    """Short distinct labels: the sweep's or folder's name, with parents added until they differ."""
    parts = []
    for path, given in folders:
        named = given if given != path else (path.parent if path.name == SWEEP_RESULTS else path)
        parts.append(named.resolve().parts)
    depth = 1
    while True:
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels) or depth >= max(len(p) for p in parts):
            return labels
        depth += 1


def resolve_folders(paths: Iterable[str | Path], missing_ok: bool = False) -> list[ResultsFolder]:
    """The folders to read, each checked (a clear error for one that is not there), repeats left out.

    ``missing_ok``: a folder that is not there yet is kept and reads as empty (the Space, started
    before the first run, shows the papers' rows alone).
    """
    found: list[tuple[Path, Path]] = []
    seen: set[Path] = set()
    for value in paths:
        given = Path(value)
        if given.is_file():
            raise NlueError(f"{given} is a file; give a results folder or a sweep folder ({FOLDER_HELP})")
        if not given.is_dir() and not missing_ok:
            raise NlueError(f"{given}: no such results folder (give {FOLDER_HELP})")
        path = given / SWEEP_RESULTS if is_sweep_folder(given) else given
        if path.resolve() in seen:
            logger.info("results folder %s given twice: read once", given)
            continue
        seen.add(path.resolve())
        found.append((path, given))
    if not found:
        raise NlueError(f"no results folder given ({FOLDER_HELP})")
    if len(found) == 1:
        return [ResultsFolder(found[0][0], found[0][1])]
    return [ResultsFolder(path, given, label) for (path, given), label in zip(found, _labels(found), strict=True)]


@dataclass(frozen=True)
class FoundResults:
    """One results file of one of the folders, with the name of its run."""

    folder: ResultsFolder
    path: Path
    data: Mapping[str, Any]

    @property
    def run(self) -> str:
        return self.folder.run_name(self.path.parent)

    @property
    def predictions(self) -> Path | None:
        return predictions_file(self.path, self.data)


def predictions_file(path: Path, data: Mapping[str, Any]) -> Path | None:
    """The per-item predictions file a results file names, when it lies inside its folder; None otherwise.

    The checks are :func:`nlue.results_files.predictions_file`'s; here a refused path (absolute, ``..``,
    a symlink leading out) or a missing file only means the run has no predictions to read.
    """
    try:
        found = checked_predictions_file(path, data)
    except BadResultsFile as exc:
        logger.warning("%s", exc)
        return None
    return found if found is not None and found.is_file() else None


def gather_results(folders: Sequence[ResultsFolder]) -> list[FoundResults]:
    """Every results file of every folder, in folder order (what read_results reads in each)."""
    return [FoundResults(folder, path, data) for folder in folders for path, data in read_results(folder.path)]


def describe(folders: Sequence[ResultsFolder]) -> str:
    """The folders as a page or a console line names them."""
    return ", ".join(str(f) for f in folders)
