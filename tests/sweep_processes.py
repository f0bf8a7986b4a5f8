"""`nlue sweep` run as a user runs it, in a process of its own: shared by the sweep tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def sweep_env() -> dict[str, str]:
    """The sweep in a child process imports this checkout's nlue, offline."""
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def start_sweep(*args: str, cwd: Path) -> subprocess.Popen:
    """``nlue sweep ARGS`` started in ``cwd``, its output piped."""
    return subprocess.Popen([sys.executable, "-m", "nlue.cli", "sweep", *args], cwd=cwd, env=sweep_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
