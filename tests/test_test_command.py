"""The test command itself (issue 29, item 30): the suite on every core, one thread per process, no fixed port.

`bash scripts/test.sh` took 15 min 35 s on the 2-core machine. It now runs pytest on one worker per core
(pytest-xdist), every process a test starts runs one torch thread, and no test starts a server on a fixed
port, so two workers (or two people's runs on one machine) never meet at the same one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_test_command_runs_the_suite_on_workers() -> None:
    """issue 29, item 30: pytest-xdist is in the test extra and scripts/test.sh starts its workers."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(re.match(r"pytest-xdist\b", requirement) for requirement in extra["test"])
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert re.search(r"^python -m pytest -n \"\$workers\" --dist loadscope\b.*\"\$@\"$", script, re.M)


def test_a_command_a_test_starts_runs_one_torch_thread() -> None:
    """issue 29, item 30: with two threads per process, a loaded machine spent 8x the CPU on the README's server.

    tests/conftest.py sets OMP_NUM_THREADS=1 unless the run sets it itself.
    """
    assert os.environ.get("OMP_NUM_THREADS")
    shown = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                           capture_output=True, text=True, check=True, timeout=120).stdout  # fmt: skip
    assert shown.strip() == os.environ["OMP_NUM_THREADS"]
    import torch

    assert torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])  # and in the test process itself


def test_no_test_starts_a_server_on_a_fixed_port() -> None:
    """issue 29, item 30: torchrun with a fixed master port (29533) failed while another run used it."""
    fixed = re.compile(r"(--master[_-]port|MASTER_PORT)\W+\d+|(?<![-\w])port=\d{2,5}\b")
    found = [f"{path.name}:{number}: {line.strip()}" for path in sorted((ROOT / "tests").glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if fixed.search(line)]  # fmt: skip
    assert found == []
