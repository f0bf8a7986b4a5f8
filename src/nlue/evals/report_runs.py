"""The results folder as `nlue report` reads it: every results file, its run folder, benchmark and data.

The Space's boards (:mod:`nlue.space.leaderboard`, ``exam_board``, ``nediom_board``) read the same
folder for the papers' tables; this gathers what the report needs beyond them: which files were
scored on the embedded sample, which runs have per-item predictions for the paired tests, and the
raw files of one benchmark for the tables the boards do not hold (few-shot deltas, levels, figures).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.registry.tasks import TASKS
from nlue.results import read_results

# A size in a model's name: 560m, 1b1 (BLOOM's 1.1B), 7B, 0.5b, 35B (not the A3B of Qwen3.6-35B-A3B).
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([mMbB])(\d)?(?![A-Za-z0-9])")


@dataclass(frozen=True)
class ResultFile:
    """One results file and where it sits: ``<results_dir>/<run>/<task>.json``."""

    path: Path
    run: str  # the run folder, relative to the results folder ("." for a file at the top)
    data: Mapping[str, Any]

    def _mapping(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key)
        return value if isinstance(value, Mapping) else {}

    @property
    def task(self) -> str:
        return str(self.data.get("task"))

    @property
    def benchmark(self) -> str | None:
        spec = TASKS.get(self.task)
        return spec.benchmark if spec is not None else None

    @property
    def metrics(self) -> Mapping[str, Any]:
        return self._mapping("metrics")

    @property
    def hyperparameters(self) -> Mapping[str, Any]:
        return self._mapping("hyperparameters")

    @property
    def details(self) -> Mapping[str, Any]:
        return self._mapping("details")

    @property
    def is_sample(self) -> bool:
        return bool(self._mapping("dataset").get("is_sample", False))

    @property
    def predictions(self) -> Path | None:
        """The per-item predictions file beside this one, when it names one that exists."""
        name = self.data.get("predictions")
        path = self.path.parent / str(name) if name else None
        return path if path is not None and path.is_file() else None


@dataclass
class Gathered:
    root: Path
    files: list[ResultFile]

    def of(self, benchmark: str) -> list[ResultFile]:
        """The files of one benchmark (``nlue``, ``mcq``, ``nediom``), oldest first."""
        chosen = [f for f in self.files if f.benchmark == benchmark]
        return sorted(chosen, key=lambda f: str(f.data.get("created") or ""))

    def sample_count(self, benchmark: str | None = None) -> int:
        return sum(f.is_sample for f in self.files if benchmark is None or f.benchmark == benchmark)

    def run_folders(self) -> list[Path]:
        """Run folders with at least one results file that has its per-item predictions."""
        return sorted({f.path.parent for f in self.files if f.predictions is not None})

    def without_predictions(self) -> list[str]:
        """``run/task.json`` of every results file with no per-item predictions (left out of the paired tests)."""
        return [f.path.relative_to(self.root).as_posix() for f in self.files if f.predictions is None]

    def run_label(self, folder: Path) -> str:
        """A run folder as the report names it: relative to the results folder."""
        relative = Path(folder).relative_to(self.root).as_posix()
        return relative if relative != "." else self.root.name


def gather(results_dir: Path) -> Gathered:
    """Every readable results file under ``results_dir`` (unreadable ones are logged by read_results)."""
    root = Path(results_dir)
    files = [ResultFile(path, path.parent.relative_to(root).as_posix(), data) for path, data in read_results(root)]
    return Gathered(root, files)


def model_size(name: str) -> float | None:
    """Parameters in millions read from a model's name (``bloom-560m`` 560, ``bloom-1b1`` 1100), else None."""
    match = _SIZE.search(Path(str(name).rstrip("/")).name)
    if match is None:
        return None
    number = float(match.group(1) + (f".{match.group(3)}" if match.group(3) else ""))
    return number * (1000.0 if match.group(2).lower() == "b" else 1.0)


def model_family(name: str) -> str:
    """A model's name without its size (``bloom-560m`` and ``bloom-1b1`` are both ``bloom``)."""
    base = Path(str(name).rstrip("/")).name
    return _SIZE.sub("", base).strip("-_. ").casefold() or base.casefold()
