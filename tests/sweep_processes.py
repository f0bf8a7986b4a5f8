"""`nlue sweep` run as a user runs it, in a process of its own: shared by the sweep tests."""

from __future__ import annotations

import json
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


def results_of(out: Path) -> dict[str, tuple]:
    """What two runs of a sweep's cells must agree on, per results file: its task, primary score and metrics, and
    its per-item predictions and answers byte for byte (the ``*.jsonl`` beside it, and in the folder of its name:
    a generation's ``sa/raw_outputs.jsonl``); dates and timings may differ."""
    results = out / "results"
    found = {}
    for path in sorted(results.glob("*/*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        stem = path.name.removesuffix(".json")
        jsonl = [*path.parent.glob(f"{stem}.*.jsonl"), *path.parent.glob(f"{stem}/**/*.jsonl")]
        predictions = {p.relative_to(path.parent).as_posix(): p.read_bytes() for p in sorted(jsonl)}
        found[path.relative_to(results).as_posix()] = (data["task"], data["primary_score"], data["metrics"],
                                                       predictions)  # fmt: skip
    return found
