"""What `nlue` writes to a terminal is safe to show, whoever wrote the text (issue 29, items 17 and 18).

A server's error body, a model's answer, a name from a results file: control characters - and so ANSI
and OSC sequences, which clear a terminal, retitle it or hide text - reach the terminal as visible
escapes, in log lines, error messages and a command's printed output; credentials in a URL reach it
not at all. A pipe or a file gets a command's output byte for byte.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlue.cli_support import run_command
from nlue.errors import NlueError, ServiceError
from tests.lm_fault_server import FaultServer

ROOT = Path(__file__).resolve().parents[1]
ATTACK = "\x1b]0;pwned\x07\x1b[2J\x9b31m"  # retitle the window, clear the screen, a one-byte CSI


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault_server = FaultServer().start()
    yield fault_server
    fault_server.stop()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_servers_error_body_reaches_the_terminal_as_visible_escapes(
    server: FaultServer, exam_build, tmp_path: Path
) -> None:
    """issue 29, items 17 and 18: the CLI's log lines and error message show no raw ANSI/OSC, and no credential."""
    server.state.rules = {"Subject": "ansi"}  # every exam question: HTTP 500 with a body that attacks the terminal
    password = "pa55-w0rd-s3cret"
    endpoint = server.base_url.replace("http://", f"http://nlue-user:{password}@") + "?api_key=qk-0123456789abcdef"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    command = [sys.executable, "-m", "nlue.cli", "llm", "mcq", "--endpoint", endpoint, "--model", "m", "--dataset",
               str(exam_build.repo_dir), "--task", "mcq_ne", "--limit", "1", "--max-retries", "1",
               "--results-dir", str(tmp_path), "--no-chart", "-v"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "server on fire" in done.stderr and "\\x1b]0;pwned by the server\\x07\\x1b[2J" in done.stderr
    assert "\x1b" not in done.stderr + done.stdout and "\x07" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("nlue llm: error: ")
    assert "HTTP Request: POST http://127.0.0.1:" in done.stderr  # -v shows httpx's lines, without credentials
    assert password not in done.stderr and "nlue-user" not in done.stderr and "qk-0123" not in done.stderr


def test_what_a_command_prints_to_a_terminal_is_escaped_and_to_a_pipe_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """issue 29, item 17: every command's printed output (the console printers included) on a terminal."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert run_command("llm", lambda: print(f"model answered: {ATTACK}done")) == 0
    assert terminal.getvalue() == "model answered: \\x1b]0;pwned\\x07\\x1b[2J\\x9b31mdone\n"
    assert sys.stdout is terminal  # put back after the command
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    assert run_command("llm", lambda: print(ATTACK)) == 0
    assert pipe.getvalue() == ATTACK + "\n"  # what other programs read stays as written


@pytest.mark.parametrize(
    ("error", "code"), [(NlueError, 2), (ServiceError, 1), (RuntimeError, 3)], ids=["input", "service", "internal"]
)
def test_error_messages_are_escaped(capsys: pytest.CaptureFixture[str], error: type[Exception], code: int) -> None:
    """issue 29, item 17: an error that quotes outside text prints it as visible escapes, whatever its exit code."""

    def fail() -> None:
        raise error(f"the server said {ATTACK} at http://u:secret-pass@host/v1")

    assert run_command("llm", fail) == code
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x9b" not in err and "\\x1b]0;pwned" in err
    assert "secret-pass" not in err and "http://host/v1" in err
