"""`nlue sweep ROSTER --collect --from DIR ...`: the done cells of jobs that ran into folders of their own,
gathered into one ``--out`` before its summary is written.

For each cell of the grid done in a ``--from`` folder (its marker there, its results files as the marker
recorded them), the cell's results files and what belongs to each (its per-item predictions and
human-readable copy beside it, a generation's raw answers in the folder of its name) are copied into
``--out``'s results tree with a new marker saying where they came from. A cell done in two places (two
folders, or a folder and ``--out``) is taken once, and only when both give the same numbers: the same
results files with the same task, primary score and metrics, and the same per-item predictions and
answers (``*.jsonl``) byte for byte (a run's date and timings may differ). Every disagreement is
reported at once and nothing is copied (exit 2). Checkpoints and GMET run folders (``runs/``) stay where
their job wrote them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.atomic_files import copy_file_atomic
from nlue.errors import NlueError
from nlue.evals.sweep.grid import Cell
from nlue.evals.sweep.run import DONE, SweepState
from nlue.results import write_json_atomic
from nlue.results_files import BadResultsFile, read_json_object

NUMBERS = ("task", "primary_metric", "primary_score", "metrics")  # what must agree between two runs of a cell


def _companions(results: Path, relative: str) -> list[str]:
    """The results file and the files that belong to it: beside it (``sa.json``: ``sa.predictions.jsonl``...) and
    in the folder of its name (``sa/raw_outputs.jsonl``, a generation's answers, which the results file names)."""
    path = results / relative
    stem = path.name.removesuffix(".json")
    found = [relative]
    if path.parent.is_dir():
        for sibling in sorted(path.parent.iterdir()):
            if sibling.is_file() and sibling.name != path.name and sibling.name.startswith(f"{stem}."):
                found.append(sibling.relative_to(results).as_posix())
    folder = path.parent / stem
    if folder.is_dir():
        found += sorted(p.relative_to(results).as_posix() for p in folder.rglob("*") if p.is_file())
    return found


def _numbers(path: Path) -> dict[str, Any]:
    try:
        data = read_json_object(path)
    except BadResultsFile as exc:
        return {"unreadable": str(exc)}
    return {key: data.get(key) for key in NUMBERS}


def _difference(cell: Cell, first: Path, other: Path) -> str:
    """What differs between the cell's results in two folders ("" when they give the same numbers)."""
    mine, theirs = SweepState(first), SweepState(other)
    files = sorted((mine.read(cell) or {}).get("results", []))
    if files != sorted((theirs.read(cell) or {}).get("results", [])):
        return "other results files"
    for relative in files:
        if _numbers(mine.results / relative) != _numbers(theirs.results / relative):
            return f"other numbers in {relative}"
        for companion in _companions(mine.results, relative)[1:]:
            if companion.endswith(".jsonl"):
                there = theirs.results / companion
                if not there.is_file() or there.read_bytes() != (mine.results / companion).read_bytes():
                    return f"other per-item predictions in {companion}"
    return ""


def gather(cells: Sequence[Cell], out: Path, sources: Sequence[Path]) -> int:
    """Copy into ``out`` the cells done in ``sources`` (module docstring); the number of cells copied."""
    target = SweepState(out)
    missing = [str(s) for s in sources if not (Path(s) / "sweep").is_dir()]
    if missing:
        raise NlueError(f"--from {', '.join(missing)}: not a sweep's output folder (no sweep/ in it)")
    plan: list[tuple[Cell, Path]] = []
    problems = []
    for cell in cells:
        places = [Path(s) for s in sources if SweepState(Path(s)).status(cell) == DONE]
        if target.status(cell) == DONE:
            places.insert(0, Path(out))
        for other in places[1:]:
            why = _difference(cell, places[0], other)
            if why:
                problems.append(f"  {cell.label}: done in {places[0]} and in {other}, with {why}")
        if places and places[0] != Path(out):
            plan.append((cell, places[0]))
    if problems:
        raise NlueError(f"{len(problems)} cells were run twice with different results; nothing was "
                        "gathered (remove one of each, or run the cell again in one place):\n" + "\n".join(problems))  # fmt: skip
    for cell, source in plan:
        _copy_cell(cell, SweepState(source), target)
    return len(plan)


def _copy_cell(cell: Cell, source: SweepState, target: SweepState) -> None:
    record = dict(source.read(cell) or {})
    stamps = {}
    for relative in record.get("results", []):
        for name in _companions(source.results, relative):
            destination = copy_file_atomic(source.results / name, target.results / name)
            if name == relative:
                stat = destination.stat()
                stamps[relative] = [stat.st_mtime_ns, stat.st_size]
    log = source.log(cell)
    if log.is_file():
        copy_file_atomic(log, target.log(cell))
    record.update(stamps=stamps, collected_from=str(source.out))
    write_json_atomic(target.marker(cell), record)  # last: the cell is done here only once its files are
