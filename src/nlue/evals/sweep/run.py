"""`nlue sweep`: run a roster's grid, skip what is done, resume after a kill.

A sweep writes under the roster's ``out`` folder::

    results/              the results tree every cell writes (what nlue space and nlue report read),
                          and summary.md / summary.csv
    runs/                 checkpoints and GMET run folders (kept out of results/: a checkpoint's own
                          nlue_results.json must not count twice on a leaderboard)
    sweep/done/<id>.json  a cell's marker, written atomically once the cell has succeeded: its argv,
                          exit code, time and the results files it wrote
    sweep/failed/<id>.json, sweep/logs/<id>.log, sweep/lock

A rerun skips every cell with a marker. A cell killed half-way has none and runs again; its
command's own resume (LLM answers from the journal, a fine-tuning from its last checkpoint) makes
that cheap. A failed cell is recorded and the sweep goes on (``stop_on_failure`` stops it).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.evals.sweep.cells import default_start, last_error, preload, run_cell
from nlue.evals.sweep.grid import RESULTS, STATE, Cell
from nlue.results import write_json_atomic

logger = logging.getLogger(__name__)

DONE, FAILED, TO_RUN, NOT_RUN, RAN = "done", "failed", "to run", "not run", "ran"


@dataclass
class CellOutcome:
    cell: Cell
    status: str  # RAN, DONE (skipped: done before), FAILED, NOT_RUN (after a stop or an interrupt)
    exit_code: int | None = None
    seconds: float = 0.0
    message: str = ""
    results: list[str] = field(default_factory=list)  # results files, relative to the results folder


@dataclass
class SweepOutcome:
    outcomes: list[CellOutcome]
    seconds: float
    interrupted: bool = False

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)


class SweepState:
    """The sweep's own records under ``<out>/sweep``: markers, failures, logs, the lock."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.root = self.out / STATE
        self.results = self.out / RESULTS

    def marker(self, cell: Cell, status: str = DONE) -> Path:
        return self.root / status / f"{cell.id}.json"

    def log(self, cell: Cell) -> Path:
        return self.root / "logs" / f"{cell.id}.log"

    def status(self, cell: Cell) -> str:
        if self.marker(cell).is_file() and self._results_intact(cell):
            return DONE
        return FAILED if self.marker(cell, FAILED).is_file() else TO_RUN

    def _results_intact(self, cell: Cell) -> bool:
        """A done cell whose results files were since deleted or rewritten (by a run with another --limit,
        say) is not done: its marker no longer describes what the results folder holds."""
        stamps = (self.read(cell) or {}).get("stamps", {})
        for name, stamp in stamps.items():
            try:
                stat = (self.results / name).stat()
            except OSError:
                return False
            if [stat.st_mtime_ns, stat.st_size] != stamp:
                return False
        return True

    def read(self, cell: Cell, status: str = DONE) -> dict[str, Any] | None:
        try:
            return json.loads(self.marker(cell, status).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None

    @contextmanager
    def lock(self):
        """One sweep at a time on one folder: a second would run the same cells into the same files."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:  # no fcntl (Windows): no lock
                pass
            except OSError:
                holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
                raise NlueError(f"another nlue sweep (pid {holder}) is running on {self.out}; wait for it to end "
                                "or give this one another out folder") from None  # fmt: skip
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, str(os.getpid()).encode())
            yield fd
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its (mtime, size): what a cell changed is what differs after it."""
    found = {}
    if root.is_dir():
        for path in root.rglob("*"):
            if path.is_file():
                stat = path.stat()
                found[path.relative_to(root).as_posix()] = (stat.st_mtime_ns, stat.st_size)
    return found


def _written_results(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    """Results files (``*.json`` outside journals/) new or rewritten between two listings."""
    return sorted(p for p, stamp in after.items()
                  if p.endswith(".json") and not p.startswith("journals/") and before.get(p) != stamp)  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _run_one(cell: Cell, state: SweepState, start: str, keep_fds: Sequence[int]) -> CellOutcome:
    before = _files(state.results)
    log = state.log(cell)
    began = time.perf_counter()
    code = run_cell(cell.argv, log, start, keep_fds)
    seconds = round(time.perf_counter() - began, 3)
    after = _files(state.results)
    written = _written_results(before, after)
    record = {"cell": cell.id, "label": cell.label, "model": cell.model, "command": cell.command,
              "setting": cell.setting, "argv": ["nlue", *cell.argv], "exit_code": code, "seconds": seconds,
              "finished": _now(), "results": written, "log": str(log.relative_to(state.out)),
              "stamps": {name: list(after[name]) for name in written}}  # fmt: skip
    if code == 0:
        write_json_atomic(state.marker(cell), record)  # written last: a cell is done only once this exists
        state.marker(cell, FAILED).unlink(missing_ok=True)
        return CellOutcome(cell, RAN, code, seconds, results=written)
    if code == 130:  # interrupted (Ctrl-C): not a failure of the cell, and the sweep stops
        return CellOutcome(cell, NOT_RUN, code, seconds, "interrupted")
    message = last_error(log)
    write_json_atomic(state.marker(cell, FAILED), {**record, "message": message})
    return CellOutcome(cell, FAILED, code, seconds, message, written)


@dataclass
class SweepOptions:
    stop_on_failure: bool = False
    progress: bool = True
    start: str = field(default_factory=default_start)


def run_sweep(cells: Sequence[Cell], out: Path, options: SweepOptions | None = None) -> SweepOutcome:
    """Run every cell of ``cells`` that is not done, in order; a progress bar over the whole grid."""
    options = options or SweepOptions()
    state = SweepState(out)
    began = time.perf_counter()
    outcomes: list[CellOutcome] = []
    todo = [c for c in cells if state.status(c) != DONE]
    for cell in cells:
        if cell not in todo:
            marker = state.read(cell) or {}
            outcomes.append(CellOutcome(cell, DONE, 0, marker.get("seconds", 0.0), results=marker.get("results", [])))
    logger.info("%d cells: %d done before, %d to run", len(cells), len(cells) - len(todo), len(todo))
    interrupted = False
    with state.lock() as lock_fd, _bar(options.progress, len(cells), len(cells) - len(todo)) as bar:
        if todo and options.start == "fork":
            preload([c.command.split()[0] for c in todo])
        for position, cell in enumerate(todo):
            bar.set_postfix_str(cell.label)
            logger.debug("cell %s: %s", cell.id, cell.label)
            try:
                outcome = _run_one(cell, state, options.start, [lock_fd])
            except KeyboardInterrupt:
                interrupted = True
                outcomes.extend(CellOutcome(c, NOT_RUN) for c in todo[position:])
                break
            outcomes.append(outcome)
            if outcome.exit_code == 130:  # the cell was interrupted: so is the sweep
                interrupted = True
                outcomes.extend(CellOutcome(c, NOT_RUN) for c in todo[position + 1 :])
                break
            bar.update(1)
            if outcome.status == FAILED:
                logger.warning("%s failed (exit %d): %s; log: %s", cell.label, outcome.exit_code, outcome.message,
                               state.log(cell))  # fmt: skip
                if options.stop_on_failure:
                    outcomes.extend(CellOutcome(c, NOT_RUN) for c in todo[position + 1 :])
                    break
    order = {c.id: i for i, c in enumerate(cells)}
    outcomes.sort(key=lambda o: order[o.cell.id])
    return SweepOutcome(outcomes, round(time.perf_counter() - began, 3), interrupted)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str) -> None:
        pass


@contextmanager
def _bar(show: bool, total: int, initial: int):
    if not show:
        yield _NoBar()
        return
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    # No monitor thread: a forked cell must not inherit a thread that may hold tqdm's lock.
    tqdm.monitor_interval = 0
    with logging_redirect_tqdm(), tqdm(total=total, initial=initial, desc="sweep", unit="cell",
                                       dynamic_ncols=True) as bar:  # fmt: skip
        yield bar
