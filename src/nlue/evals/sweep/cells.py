"""Running one cell: a sub-command in a child process of its own, its output in the cell's log.

Why a child process per cell, and not ``nlue.cli.main(argv)`` in the sweep's own process: a cell
that crashes, runs out of memory or leaks a 7B model's memory takes only itself down; every cell
starts from the same clean state, whatever ran before; and a kill of the sweep is a kill of the
cell, exactly as when a user kills the command (each command's own journal or checkpoints make the
rerun cheap). On Linux the child is forked from the sweep, which has imported torch, transformers
and datasets once, so a cell starts in milliseconds, not in the 5-20 s of a fresh interpreter;
elsewhere (or with ``start="spawn"``) it is ``python -m nlue.cli ARGV``. Either way the child is
killed when the sweep dies (``PR_SET_PDEATHSIG`` on Linux), so no orphan goes on writing into a
results folder that a rerun is writing too.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

logger = logging.getLogger(__name__)

START_METHODS = ("fork", "spawn")
HEARTBEAT_SECONDS = 30.0  # how often a running sweep refreshes its claim while a cell runs
# What the commands of a sweep import, loaded once before the first fork. Imports only: no model is
# loaded and no torch or tokenizers thread pool started in the sweep, which is what makes forking safe
# (the threads numpy's BLAS and pyarrow's allocator start at import have fork handlers of their own,
# on which datasets' and torch's own forking workers rely too).
# transformers.modeling_utils is what every model class imports first, lazily: 2.5 s a cell when not preloaded.
_MODELS = ("torch", "transformers", "transformers.modeling_utils")
_PRELOAD = {
    "train": (*_MODELS, "nlue.training.cli", "nlue.training.run"),
    "llm": (*_MODELS, "nlue.evals.llm.cli", "nlue.lm.factory", "nlue.lm.local"),
    "gmet": (*_MODELS, "nlue.gmet.cli", "nlue.gmet.evaluate"),
    "idioms": (*_MODELS, "nlue.idioms.cli", "nlue.idioms.evaluate", "nlue.lm.factory"),
}


def default_start() -> str:
    """fork on Linux, when this process has not imported torch yet; else spawn.

    A process that imported torch before the sweep (a notebook, a test session) may have run it, and
    a child forked after torch's OpenMP pool started can hang in its first parallel region.
    """
    linux = sys.platform.startswith("linux") and hasattr(os, "fork")
    return "fork" if linux and "torch" not in sys.modules else "spawn"


def preload(commands: Sequence[str]) -> None:
    """Import what the cells' commands need, so that each forked cell finds it imported."""
    for name in ("datasets", "nlue.cli", *(m for c in dict.fromkeys(commands) for m in _PRELOAD.get(c, ()))):
        try:
            importlib.import_module(name)
        except Exception as exc:  # a missing extra is the cell's error to report, not ours
            logger.debug("not preloaded: %s (%s)", name, exc)


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when the sweep dies (Linux); elsewhere nothing can be promised."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the sweep died before the request took hold
        os._exit(128 + signal.SIGKILL)


def _child(argv: Sequence[str], log: Path, parent: int, keep_fds: Sequence[int]) -> None:
    """The forked cell: output to the log, logging set up afresh from the cell's own flags, then the command."""
    code = 3
    try:
        _die_with_parent(parent)
        for fd in keep_fds:  # the sweep's claim stays the sweep's (the cell dies with it)
            os.close(fd)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        from nlue.cli import main

        code = main(list(argv))
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # the child must exit with a code whatever happened
        traceback.print_exc()
    finally:
        try:
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)  # never return into the sweep's own code, nor run its exit handlers


def _exit_code(status: int) -> int:
    """A shell's exit code: the child's own, or 128 + the signal that killed it."""
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


@contextlib.contextmanager
def _beating(heartbeat: Callable[[], None] | None) -> Iterator[None]:
    """Call ``heartbeat`` every HEARTBEAT_SECONDS while the block runs, from a thread of its own. Used only while
    the sweep waits for a cell it has already started: no thread of this kind is alive when the sweep forks."""
    if heartbeat is None:
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_SECONDS):
            try:
                heartbeat()
            except OSError as exc:  # a shared file system gone for a moment: the next beat may reach it
                logger.warning("could not refresh the sweep's claim: %s", exc)

    thread = threading.Thread(target=beat, name="nlue-sweep-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run_cell(argv: Sequence[str], log: Path, start: str, keep_fds: Sequence[int] = (),
             heartbeat: Callable[[], None] | None = None) -> int:  # fmt: skip
    """Run ``nlue ARGV`` in a child process with its output appended to ``log``; return its exit code.
    ``heartbeat`` is called every HEARTBEAT_SECONDS while the cell runs."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ nlue {' '.join(argv)}\n")
    if start == "fork":
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(argv, log, parent, keep_fds)
        with _beating(heartbeat):
            return _wait(pid)
    with log.open("a", encoding="utf-8") as handle:
        parent = os.getpid()
        process = subprocess.Popen(
            [sys.executable, "-m", "nlue.cli", *argv],
            stdout=handle,
            stderr=subprocess.STDOUT,
            preexec_fn=(lambda: _die_with_parent(parent)) if sys.platform.startswith("linux") else None,
        )
        try:
            with _beating(heartbeat):
                return _exit_code_of(process.wait())
        except KeyboardInterrupt:
            process.send_signal(signal.SIGINT)
            process.wait()
            raise


def _exit_code_of(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _wait(pid: int) -> int:
    try:
        _, status = os.waitpid(pid, 0)
    except KeyboardInterrupt:
        # Ctrl-C reached the cell too (one process group); a SIGINT sent to the sweep alone is passed on.
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
        os.waitpid(pid, 0)
        raise
    return _exit_code(status)


def last_error(log: Path, limit: int = 16_384) -> str:
    """The cell's error message: its last ``nlue ...: error:`` line, else its last line."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - limit))
            lines = [line.strip() for line in handle.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return ""
    for line in reversed(lines):
        if line.startswith("nlue ") and (": error:" in line or ": internal error:" in line):
            return line
    return lines[-1] if lines else ""
