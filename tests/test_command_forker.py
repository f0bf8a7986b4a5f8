"""The warm process the docs' commands are forked from gives what the ``nlue`` console script gives."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.command_forker import CommandForker, forkable


@pytest.mark.parametrize(
    ("line", "args"),
    [
        ("nlue build --out build", ["build", "--out", "build"]),
        ("nlue tasks validate 'my task.yaml'", ["tasks", "validate", "my task.yaml"]),
        ("nlue report build/results | head", None),
        ("nlue build --out build > log.txt", None),
        ("NLUE_RESULTS_DIR=x nlue report", None),
        ("nlue report $HOME/results", None),
        ("nlue report build/*.json", None),
        ("nlue tasks validate broken.yaml || echo failed", None),
        ("transformers serve ./my-model &", None),
        ("python -m nlue.cli build", None),
    ],
)
def test_only_a_bare_nlue_command_is_forked(line: str, args: list[str] | None) -> None:
    assert forkable(line) == args


@pytest.fixture(scope="module")
def forker() -> Iterator[CommandForker]:
    warm = CommandForker(dict(os.environ))
    yield warm
    warm.close()


def test_a_forked_command_exits_writes_and_prints_as_the_console_script(tmp_path: Path, forker: CommandForker) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for args in (["build", "--configs", "sa", "--out", "out", "-q"], ["tasks", "validate", "missing.yaml"]):
        forked, real = tmp_path / "forked", tmp_path / "real"
        for folder in (forked, real):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        code, stdout, stderr = forker.run(args, forked, env, timeout=120)
        done = subprocess.run([shutil.which("nlue", path=env["PATH"]), *args], cwd=real, env=env,
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert (code, stdout, stderr) == (done.returncode, done.stdout, done.stderr), args
        written = sorted(p.relative_to(forked).as_posix() for p in forked.rglob("*"))
        assert written == sorted(p.relative_to(real).as_posix() for p in real.rglob("*"))
    assert code == 2 and "missing.yaml" in stdout + stderr  # the second: bad input, named
    assert written == []


def test_a_command_past_its_time_is_killed(tmp_path: Path, forker: CommandForker) -> None:
    with socket.socket() as probe:  # a free port on loopback: the Space serves there until it is stopped
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    code, _, _ = forker.run(["space", "--host", "127.0.0.1", "--port", port], tmp_path, dict(os.environ), timeout=3)
    assert code == 128 + 9  # SIGKILL
    code, stdout, _ = forker.run(["--version"], tmp_path, dict(os.environ), timeout=60)  # the warm one goes on
    assert code == 0 and stdout.strip()
