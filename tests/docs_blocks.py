"""The runnable blocks of the documentation: find them, and run them as a reader would.

A guide marks a fenced ``bash`` or ``python`` block it promises will run with ``<!-- runnable -->``
on the line before it. :func:`run_page` runs a page's marked blocks in order in one fresh folder (the
reader's working folder: nothing lands in the repository), through a shell line by line for bash
(continuation lines joined, comments dropped, as ``benchmarks/readme_llm_commands.py`` does for the
README) and with the venv's Python for python. A line that is a bare ``nlue`` command, with nothing for the shell
to do but split its words, is run as a fork of one warm process that has made the imports every command makes
(``tests/command_forker.py``: the command's own process, folder, environment and exit code, without 5 s of
imports each; the guides' pages ran in 92 s rather than 196 s). One command is run once per session and its output copied
into the later pages that run it again: ``nlue sweep --make-tiny-models build/tiny-models`` writes the
same three random models every time (fixed seeds), and making them costs 10-20 s per page. A bash line ending in ``&`` starts a server in the
background: it is moved from the port the guides name (8000 for ``transformers serve``, 7860 for
``nlue space``) to a free port of its own (the commands naming ``127.0.0.1:8000`` or ``127.0.0.1:7860``
follow it), waited for until it answers (``/health``, or ``/`` for the Space, which has no ``/health``)
and stopped when the page is done. ``$NLUE_REPO`` is the repository's folder, as it is for a reader who
cloned it, so that a block can copy the example files under ``docs/examples/``. Blocks that need the
Hub, a GPU or files only the reader has are not marked, and say so.
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARK = "<!-- runnable -->"
DOC_PORTS = ("8000", "7860")  # transformers serve's and the Space's ports, as the guides write them
# Commands whose output is the same every time: run once per session, then copied (command -> folder it writes).
REPLAYED = {"nlue sweep --make-tiny-models build/tiny-models": "build/tiny-models"}
_REPLAY_CACHE = Path(tempfile.mkdtemp(prefix="nlue-docs-replay-"))
atexit.register(shutil.rmtree, _REPLAY_CACHE, True)
BLOCK = re.compile(re.escape(MARK) + r"\s*```(\w+)\n(.*?)```", re.S)

sys.path.insert(0, str(ROOT / "benchmarks"))
from readme_llm_commands import free_port, shell_lines, stop_servers  # noqa: E402

from tests.command_forker import forkable, warm_forker  # noqa: E402


@dataclass(frozen=True)
class Block:
    page: str
    language: str
    code: str


def runnable_blocks(page: Path) -> list[Block]:
    name = page.resolve().relative_to(ROOT).as_posix()
    return [Block(name, lang, code) for lang, code in BLOCK.findall(page.read_text(encoding="utf-8"))]


def pages_with_blocks() -> list[Path]:
    return sorted(page for page in DOCS.rglob("*.md") if MARK in page.read_text(encoding="utf-8"))


@dataclass
class Ran:
    what: str
    seconds: float
    status: int
    output: str


def _environment() -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "NO_MKDOCS_2_WARNING": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    env.pop("NLUE_RESULTS_DIR", None)  # the guides' commands write where a reader's would: build/results
    env["NLUE_REPO"] = str(ROOT)  # a reader's clone of the repository (docs/examples/ is copied from it)
    return env


def _free_ports(count: int) -> list[str]:
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return [str(port) for port in sorted(ports)]


def _wait_until_answering(port: int, server: subprocess.Popen, timeout: float = 180.0) -> None:
    """Until ``/health`` answers 200, or, for a server without one (a Gradio Space: 404), ``/`` does."""
    deadline = time.monotonic() + timeout
    path = "/health"
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode} before it answered")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
                if answer.status == 200:
                    return
        except urllib.error.HTTPError as error:  # answering, but not ready or with no /health
            path = "/" if error.code == 404 else path
            time.sleep(0.5)
        except OSError:  # not listening yet
            time.sleep(0.5)
    raise RuntimeError(f"the server on port {port} did not answer within {timeout:.0f} s")


def _start_server(argv: list[str], port: int, work: Path, env: dict[str, str], log: Path) -> subprocess.Popen:
    """A server in its own process group (so that it can be stopped whole), once it answers."""
    with log.open("w") as out:
        server = subprocess.Popen(argv, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_until_answering(port, server)
    except RuntimeError:
        if server.poll() is None:
            stop_servers([server])
        raise
    return server


def run_page(page: Path, work: Path, timeout: float = 600) -> list[Ran]:
    """Run every marked block of ``page`` in ``work``; stop at the first command that fails."""
    env = _environment()
    ports = dict(zip(DOC_PORTS, _free_ports(len(DOC_PORTS)), strict=True))
    servers: list[subprocess.Popen] = []
    ran: list[Ran] = []
    try:
        for block in runnable_blocks(page):
            if block.language == "python":
                steps = [("python", block.code)]
            elif block.language == "bash":
                steps = [("bash", line) for line in shell_lines(block.code)]
            else:
                raise ValueError(f"{block.page}: a runnable block must be bash or python, not {block.language!r}")
            for kind, code in steps:
                started = time.perf_counter()
                for documented, free in ports.items():
                    code = code.replace(f"127.0.0.1:{documented}", f"127.0.0.1:{free}")
                if kind == "bash" and code.endswith("&"):  # a server, left running for the page's next commands
                    argv = [ports.get(a, a) for a in shlex.split(code[:-1])]
                    port = next((ports[a] for a in shlex.split(code[:-1]) if a in ports), None)
                    if port is None:
                        raise ValueError(f"{block.page}: `{code}` names none of the ports {DOC_PORTS} (--port)")
                    log = work / f"server-{len(servers)}.log"
                    try:
                        servers.append(_start_server(argv, int(port), work, env, log))
                        status, output = 0, ""
                    except RuntimeError as error:
                        status, output = 1, f"{error}\n{log.read_text(errors='replace')[-4000:]}"
                elif kind == "bash" and code in REPLAYED and (_REPLAY_CACHE / REPLAYED[code]).is_dir():
                    shutil.copytree(_REPLAY_CACHE / REPLAYED[code], work / REPLAYED[code], dirs_exist_ok=True)
                    status, output = 0, "(copied from this session's first run)"
                elif kind == "bash" and (args := forkable(code)) is not None:  # a bare nlue command: forked
                    status, stdout, stderr = warm_forker(env).run(args, work, env, timeout)
                    output = stdout[-4000:] + stderr[-4000:]
                else:
                    argv = ["bash", "-c", code] if kind == "bash" else [sys.executable, "-c", code]
                    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=timeout,
                                          check=False)  # fmt: skip
                    status, output = done.returncode, done.stdout[-4000:] + done.stderr[-4000:]
                    if status == 0 and code in REPLAYED:
                        shutil.copytree(work / REPLAYED[code], _REPLAY_CACHE / REPLAYED[code], dirs_exist_ok=True)
                ran.append(
                    Ran(code if kind == "bash" else "python block", time.perf_counter() - started, status, output)
                )
                if status != 0:
                    return ran
    finally:
        stop_servers(servers)
    return ran
