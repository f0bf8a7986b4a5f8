"""Start `transformers serve` (transformers[serving]) on a free loopback port, for tests and benchmarks.

It is the OpenAI-compatible server the HTTP backend is tried against without leaving the
machine: the model is a local folder, the server is offline, and it is stopped (killed if
need be) when the block ends. Plain ``transformers serve`` answers one request at a time;
``continuous_batching=True`` lets concurrent requests share forward passes.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

SERVE_START_TIMEOUT = 180.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def transformers_serve(
    model: Path, log_path: Path, start_timeout: float = SERVE_START_TIMEOUT, continuous_batching: bool = False
) -> Iterator[tuple[str, subprocess.Popen]]:
    """``transformers serve`` on a free loopback port with ``model`` preloaded: (its /v1 URL, the process)."""
    executable = Path(sys.executable).with_name("transformers")
    if not executable.exists():
        raise RuntimeError(f"no transformers CLI beside {sys.executable}: pip install 'transformers[serving]'")
    port = free_port()
    command = [str(executable), "serve", "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", str(model)]
    if continuous_batching:  # without it the server answers one request at a time, whatever the client sends
        command.insert(2, "--continuous-batching")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with log_path.open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + start_timeout
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(encoding="utf-8", errors="replace")[-1500:]
                    raise RuntimeError(f"`transformers serve` did not start within {start_timeout:.0f}s: {tail}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    time.sleep(0.5)
            yield f"http://127.0.0.1:{port}/v1", process
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
