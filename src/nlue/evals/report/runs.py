"""The results folders as `nlue report` reads them: every results file, its run's name, benchmark and data.

The Space's boards (:mod:`nlue.boards.sections`) read the same folders for the papers' tables; this
gathers what the report needs beyond them: which files were scored on the embedded sample, which
runs have per-item predictions for the paired tests (with the model, setting and data each was run
with, :mod:`nlue.evals.run_groups`), and the raw files of one benchmark for the tables the boards do
not hold (few-shot deltas, levels, figures). Several folders are read as :mod:`nlue.results_folders` says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.evals.run_groups import RunFile, run_files
from nlue.registry.tasks import TASKS
from nlue.results_folders import ResultsFolder, gather_results, predictions_file

# A size in a model's name: 560m, 1b1 (BLOOM's 1.1B), 7B, 0.5b, 35B (not the A3B of Qwen3.6-35B-A3B).
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([mMbB])(\d)?(?![A-Za-z0-9])")


@dataclass(frozen=True)
class ResultFile:
    """One results file and where it sits: ``<results folder>/<run>/<task>.json``."""

    path: Path
    run: str  # the run's name: its folder relative to the results folder, after the folder's label if several
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
        return predictions_file(self.path, self.data)


@dataclass
class Gathered:
    folders: list[ResultsFolder]
    files: list[ResultFile]

    def of(self, benchmark: str) -> list[ResultFile]:
        """The files of one benchmark (``nlue``, ``mcq``, ``nediom``), oldest first."""
        chosen = [f for f in self.files if f.benchmark == benchmark]
        return sorted(chosen, key=lambda f: str(f.data.get("created") or ""))

    def sample_count(self, benchmark: str | None = None) -> int:
        return sum(f.is_sample for f in self.files if benchmark is None or f.benchmark == benchmark)

    def run_files(self) -> list[RunFile]:
        """The results files with per-item predictions, keyed by model, setting and data for the paired tests."""
        return run_files((f.run, f.path, f.data) for f in self.files)

    def without_predictions(self) -> list[str]:
        """``run/task.json`` of every results file with no per-item predictions (left out of the paired tests)."""
        return [f"{f.run}/{f.path.name}" for f in self.files if f.predictions is None]


def gather(folders: Sequence[ResultsFolder]) -> Gathered:
    """Every readable results file of the folders (unreadable ones are logged by read_results)."""
    files = [ResultFile(found.path, found.run, found.data) for found in gather_results(folders)]
    return Gathered(list(folders), files)


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
