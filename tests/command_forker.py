"""Run ``nlue ...`` command lines without paying Python's imports each time: each is a fork of one warm process.

The docs' and the README's commands are run as a reader runs them, one process per command. Most of a
command's time on the tiny sample is its imports (torch, transformers and datasets: about 5 s of CPU per
command on the 2-core machine, against well under a second of work), and the guides hold over a hundred
commands. So a page's plain ``nlue`` lines are run by :class:`CommandForker`: one process (this module, run as
a script) imports what every command imports, then forks once per command. The child is the command's own
process: it takes the command's folder, environment and arguments, its output goes to files of its own, and it
ends with the exit code ``nlue`` would give (``nlue.cli:main``, the console script's target). Nothing runs in
the warm process itself, so no command sees another's state.

Only lines that are a bare ``nlue`` command go this way: no shell syntax (pipes, redirections, ``&``,
variables, globs, ``VAR=value`` prefixes), so that the shell would do nothing to them but split the words.
Everything else runs through ``bash -c`` as before. The fork is made before any thread exists in the warm
process (imports start none), as ``nlue sweep`` forks its cells. What a fork cannot show, that the console
script itself starts, is covered by the tests that run ``nlue`` as a process (the README's first command).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# What a command may hold to be run by a fork: words the shell would only split and unquote.
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`*?~{}\[\]!#\\]|^\w+=")
READY = "ready"
# What the commands of the guides import between them (torch, transformers with the tiny models' families, the
# Trainer, datasets, evaluate, the metrics' libraries, charts): measured with `python -X importtime`, about 5 s
# of CPU a command. A module imported here and not by a command costs that command nothing.
_WARM_IMPORTS = (
    "torch", "datasets", "evaluate", "sklearn.metrics", "scipy.stats", "matplotlib.pyplot", "transformers",
    "transformers.configuration_utils", "transformers.modeling_utils", "transformers.modeling_layers",
    "transformers.masking_utils", "transformers.trainer", "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto", "transformers.models.llama.modeling_llama",
    "transformers.models.bert.modeling_bert", "transformers.models.roberta.modeling_roberta", "nlue.cli",
)  # fmt: skip


def forkable(line: str) -> list[str] | None:
    """The argument list of ``line`` when it is a bare ``nlue`` command (module docstring), else None."""
    if _SHELL_SYNTAX.search(line):
        return None
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    return words[1:] if words and words[0] == "nlue" else None


class CommandForker:
    """The warm process and its pipe: :meth:`run` forks one command and waits for it (module docstring)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self.outputs = Path(tempfile.mkdtemp(prefix="nlue-fork-"))
        self.process = subprocess.Popen([sys.executable, __file__], env=self.env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)  # fmt: skip
        line = self.process.stdout.readline().strip()
        if line != READY:
            self.close()
            raise RuntimeError(f"the warm process did not start: {line!r}")

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str, str]:
        """Exit code, stdout and stderr of ``nlue ARGS`` run in ``cwd`` with ``env`` (killed after ``timeout``)."""
        out, err = self.outputs / "stdout", self.outputs / "stderr"  # not in cwd, where the command may look
        request = {"args": args, "cwd": str(cwd), "env": env, "out": str(out), "err": str(err)}
        self.process.stdin.write(json.dumps(request) + "\n")
        pid = int(self.process.stdout.readline())
        deadline = time.monotonic() + timeout
        status = None
        while status is None:
            line = self._line_before(deadline)
            if line is None:  # past the timeout: the command is killed, as subprocess.run's timeout would
                os.killpg(pid, signal.SIGKILL)  # the child leads its own group: the processes it started too
                line = self.process.stdout.readline()
            status = int(line)
        try:
            return status, out.read_text(errors="replace"), err.read_text(errors="replace")
        finally:
            out.unlink(missing_ok=True)
            err.unlink(missing_ok=True)

    def _line_before(self, deadline: float) -> str | None:
        import select

        left = deadline - time.monotonic()
        ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
        return self.process.stdout.readline() if ready else None

    def close(self) -> None:
        shutil.rmtree(self.outputs, ignore_errors=True)
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# Variables a command reads when it runs, not when it imports: they may differ between commands of one warm
# process. Any other difference (HF_HUB_OFFLINE, OMP_NUM_THREADS, ...) starts a new warm process.
_READ_WHEN_RUN = ("NLUE_ANSWER_CACHE", "NLUE_REPO", "PYTEST_")
_WARM: dict[tuple, CommandForker] = {}


def _import_time_environment(env: dict[str, str]) -> tuple:
    return tuple(sorted((k, v) for k, v in env.items() if not k.startswith(_READ_WHEN_RUN)))


def warm_forker(env: dict[str, str]) -> CommandForker:
    """This process's warm process for ``env`` (started on first use, stopped when this process ends)."""
    key = _import_time_environment(env)
    if key not in _WARM:
        for other in _WARM.values():  # one at a time: each holds torch and transformers in memory
            other.close()
        _WARM.clear()
        _WARM[key] = CommandForker(env)
    return _WARM[key]


@atexit.register
def _close_all() -> None:
    for forker in _WARM.values():
        forker.close()


def _child(request: dict) -> int:
    """In the forked process: become the command's process and run it; its exit code (the caller leaves with it
    through ``sys.exit``, so that the interpreter ends as the console script's would: atexit, threads, buffers)."""
    try:
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path in ((1, request["out"]), (2, request["err"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.argv = ["nlue", *request["args"]]
        from nlue.cli import main

        return main()
    except SystemExit as leaving:
        return leaving.code if isinstance(leaving.code, int) else (0 if leaving.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1


def _serve() -> None:
    """The warm process: import what commands import, say so, then fork one child per request line."""
    import importlib

    import matplotlib

    matplotlib.use("Agg")  # what a command's charts use, here without a display
    for name in _WARM_IMPORTS:
        importlib.import_module(name)

    # The imported modules' objects are kept out of the collector's reach (gc.freeze, as fork servers do): a
    # child then neither copies their pages by touching them nor walks them all when it ends (0.6 s -> 0.2 s).
    gc.freeze()
    print(READY, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            sys.exit(_child(request))
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status), flush=True)


if __name__ == "__main__":
    _serve()
