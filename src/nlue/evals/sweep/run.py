"""`nlue sweep`: run a roster's grid, skip what is done, resume after a kill.

A sweep writes under the roster's ``out`` folder::

    results/              the results tree every cell writes (what nlue space and nlue report read),
                          and summary.md / summary.csv
    runs/                 checkpoints and GMET run folders (kept out of results/: a checkpoint's own
                          nlue_results.json must not count twice on a leaderboard)
    sweep/done/<id>.json  a cell's marker, written atomically once the cell has succeeded: its argv,
                          exit code, time and the results files it wrote
    sweep/failed/<id>.json, sweep/logs/<id>.log
    sweep/claims/<group>.lock   held by the job running that results group's cells

Several jobs may run into one ``out`` folder at once (the shards of ``--shard K/N``, or a rerun beside a
running sweep): each claims a results group (the cells writing one results folder name,
:mod:`nlue.evals.sweep.shards`) before running its cells and passes over a group another live job holds.
A claim is an exclusive ``flock`` on the group's lock file, which the kernel lets go when the holding
process ends however it ends, so a killed job's groups are taken over by the next job that reaches them.
The lock file also says who holds it (``host pid N: group``), and its modification time is the holder's
heartbeat, refreshed every HEARTBEAT_SECONDS while the job runs; a job that lets a claim go empties the
file. So the dry run can show which job runs which group, and where ``flock`` does not reach across
machines (an NFS mount without working locks), a job that gets a lock whose file names a live job on
another host (its heartbeat younger than STALE_SECONDS) says so: either that job died a moment ago, or
two jobs may be running one group, and each job should have its own ``--out``.

A rerun skips every cell with a marker. A cell killed half-way has none and runs again; its
command's own resume (LLM answers from the journal, a fine-tuning from its last checkpoint) makes
that cheap. A failed cell is recorded and the sweep goes on (``stop_on_failure`` stops it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nlue.evals.sweep.cells import HEARTBEAT_SECONDS, default_start, last_error, preload, run_cell
from nlue.evals.sweep.grid import RESULTS, STATE, Cell
from nlue.evals.sweep.shards import results_groups
from nlue.results import write_json_atomic

logger = logging.getLogger(__name__)

DONE, FAILED, TO_RUN, NOT_RUN, RAN = "done", "failed", "to run", "not run", "ran"
ELSEWHERE = "running elsewhere"  # its results group is claimed by another live job
STALE_SECONDS = 4 * HEARTBEAT_SECONDS  # a claim whose heartbeat is older than this is its dead job's leftover
_HOLDER = re.compile(r"^(\S+) pid (\d+): ")


@dataclass
class CellOutcome:
    cell: Cell
    status: str  # RAN, DONE (skipped: done before), FAILED, NOT_RUN (after a stop or an interrupt), ELSEWHERE
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
    """The sweep's own records under ``<out>/sweep``: markers, failures, logs, the claims."""

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

    def claim_path(self, results_name: str) -> Path:
        digest = hashlib.sha256(results_name.encode("utf-8")).hexdigest()[:16]
        return self.root / "claims" / f"{digest}.lock"

    @contextmanager
    def claim(self, results_name: str) -> Iterator[int | None]:
        """Hold the results group ``results_name`` while the block runs (module docstring): yields the claim's
        file descriptor, or None when another live process holds the group."""
        path = self.claim_path(results_name)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        held = False
        try:
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:  # no fcntl (Windows): no claims; give each job its own --out
                pass
            except OSError:
                yield None
                return
            other = self.live_claim(results_name)
            if other:
                logger.warning("%s: its lock was free, yet its claim names a job that was alive a moment ago (%s): "
                               "either that job has just died, or locks on this file system do not reach across "
                               "machines and two jobs may run this group; then give each job its own --out and "
                               "gather them with --collect --from", results_name, other)  # fmt: skip
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{socket.gethostname()} pid {os.getpid()}: {results_name}\n".encode())
            held = True
            yield fd
        finally:
            if held:  # let go in good order: no holder named (a killed job's name stays, its heartbeat going stale)
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
            os.close(fd)  # closing the descriptor lets the claim go

    def holder(self, results_name: str) -> str:
        """Who holds the group's claim, as the holder wrote it ("host pid N: group")."""
        try:
            return self.claim_path(results_name).read_text(encoding="utf-8", errors="replace").strip()[:200]
        except OSError:
            return "?"

    def live_claim(self, results_name: str) -> str:
        """Who holds the group, with the age of its heartbeat, when its claim names a job that looks alive: a
        heartbeat younger than STALE_SECONDS, from another host or from a process of this host that still runs
        ("" otherwise). Reads the file and takes no lock."""
        path = self.claim_path(results_name)
        try:
            age = time.time() - path.stat().st_mtime
            holder = path.read_text(encoding="utf-8", errors="replace").strip()[:200]
        except OSError:
            return ""
        if not holder or age > STALE_SECONDS:
            return ""
        named = _HOLDER.match(holder)
        if named and named.group(1) == socket.gethostname() and not _alive(int(named.group(2))):
            return ""
        return f"{holder} (heartbeat {max(0, round(age))} s ago)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its (mtime, size): what a cell changed is what differs after it."""
    found = {}
    if root.is_dir():
        for path in root.rglob("*"):
            if path.is_file():
                stat = path.stat()
                found[path.relative_to(root).as_posix()] = (stat.st_mtime_ns, stat.st_size)
    return found


def _in_group(path: str, results_name: str) -> bool:
    """Whether results file ``path`` is in a folder the group ``results_name`` writes: the name itself, the name
    with a setting (``<name>__en-0shot-generate``) or with a limit (``<name>-limit8``)."""
    folder = path.split("/", 1)[0]
    return folder == results_name or folder.startswith((f"{results_name}__", f"{results_name}-limit"))


def _written_results(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
                     results_name: str) -> list[str]:  # fmt: skip
    """Results files (``*.json`` outside journals/) of the group's folders, new or rewritten between two listings
    (another job's cells, running meanwhile into the same tree, write other groups' folders)."""
    return sorted(p for p, stamp in after.items() if p.endswith(".json") and not p.startswith("journals/")
                  and before.get(p) != stamp and _in_group(p, results_name))  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _run_one(cell: Cell, state: SweepState, start: str, claim: int) -> CellOutcome:
    before = _files(state.results)
    log = state.log(cell)
    began = time.perf_counter()
    beat = state.claim_path(cell.results_name)
    code = run_cell(cell.argv, log, start, [claim], heartbeat=lambda: os.utime(beat))
    seconds = round(time.perf_counter() - began, 3)
    after = _files(state.results)
    written = _written_results(before, after, cell.results_name)
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
    """Run every cell of ``cells`` that is not done, a results group at a time (each claimed first, and passed
    over while another job holds it); a progress bar over the whole grid."""
    options = options or SweepOptions()
    state = SweepState(out)
    began = time.perf_counter()
    outcomes: list[CellOutcome] = []
    todo = [c for c in cells if state.status(c) != DONE]
    for cell in cells:
        if cell not in todo:
            outcomes.append(_done_before(cell, state))
    logger.info("%d cells: %d done before, %d to run", len(cells), len(cells) - len(todo), len(todo))
    stopped = interrupted = False
    with _bar(options.progress, len(cells), len(cells) - len(todo)) as bar:
        if todo and options.start == "fork":
            preload([c.command.split()[0] for c in todo])
        for name, group in results_groups(todo).items():
            if stopped:
                outcomes.extend(CellOutcome(c, NOT_RUN) for c in group)
                continue
            with state.claim(name) as claim:
                if claim is None:
                    holder = state.holder(name)
                    logger.info("%s: held by another job (%s); passed over", name, holder)
                    outcomes.extend(CellOutcome(c, ELSEWHERE, message=holder) for c in group)
                    bar.update(len(group))
                    continue
                for position, cell in enumerate(group):
                    if state.status(cell) == DONE:  # done by another job between the listing and the claim
                        outcomes.append(_done_before(cell, state))
                        bar.update(1)
                        continue
                    bar.set_postfix_str(cell.label)
                    logger.debug("cell %s: %s", cell.id, cell.label)
                    try:
                        outcome = _run_one(cell, state, options.start, claim)
                    except KeyboardInterrupt:
                        interrupted = stopped = True
                        outcomes.extend(CellOutcome(c, NOT_RUN) for c in group[position:])
                        break
                    outcomes.append(outcome)
                    if outcome.exit_code == 130:  # the cell was interrupted: so is the sweep
                        interrupted = stopped = True
                        outcomes.extend(CellOutcome(c, NOT_RUN) for c in group[position + 1 :])
                        break
                    bar.update(1)
                    if outcome.status == FAILED:
                        logger.warning("%s failed (exit %d): %s; log: %s", cell.label, outcome.exit_code,
                                       outcome.message, state.log(cell))  # fmt: skip
                        if options.stop_on_failure:
                            stopped = True
                            outcomes.extend(CellOutcome(c, NOT_RUN) for c in group[position + 1 :])
                            break
    order = {c.id: i for i, c in enumerate(cells)}
    outcomes.sort(key=lambda o: order[o.cell.id])
    return SweepOutcome(outcomes, round(time.perf_counter() - began, 3), interrupted)


def _done_before(cell: Cell, state: SweepState) -> CellOutcome:
    marker = state.read(cell) or {}
    return CellOutcome(cell, DONE, 0, marker.get("seconds", 0.0), results=marker.get("results", []))


def collected(cells: Sequence[Cell], out: Path) -> SweepOutcome:
    """The grid's state as the jobs left it, nothing run (``--collect``): done cells with their results, failed
    cells with their reason, the rest not run. A collection takes no claim (a job starting meanwhile must not
    find its group held), so a cell still running in a job counts as not run until it is done."""
    state = SweepState(out)
    outcomes = []
    for cell in cells:
        status = state.status(cell)
        if status == DONE:
            outcomes.append(_done_before(cell, state))
        elif status == FAILED:
            record = state.read(cell, FAILED) or {}
            outcomes.append(CellOutcome(cell, FAILED, record.get("exit_code"), record.get("seconds", 0.0),
                                        record.get("message", ""), record.get("results", [])))  # fmt: skip
        else:
            outcomes.append(CellOutcome(cell, NOT_RUN))
    return SweepOutcome(outcomes, 0.0)


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
