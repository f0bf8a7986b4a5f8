"""The README's language-model commands run as written: built data, a local model, a real server on loopback.

`benchmarks/readme_llm_commands.py` takes the blocks the README marks, runs each line in a fresh
folder with a tiny model at ./my-model and a real `transformers serve`, and times them; this test
runs it and holds every command to exit 0 (the times are the benchmark's, quoted in the README), and the
server to under 2 GiB of memory (a continuous-batching server with no cache size gets one: see
``CB_CACHE_SIZE`` there).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from readme_llm_commands import SERVER_MEMORY_GOAL, readme_commands, sets_cache_size  # noqa: E402


def test_the_marked_blocks_cover_every_benchmark_locally_and_behind_a_server() -> None:
    commands = readme_commands()
    served = [c for c in commands if "--endpoint http://127.0.0.1:8000/v1" in c]
    assert any(c.startswith("transformers serve") and c.endswith("&") for c in commands)
    for suite in ("nlue llm nlue", "nlue llm mcq", "nlue idioms eval"):
        assert any(c.startswith(suite) and "--endpoint" not in c for c in commands), suite
        assert any(c.startswith(suite) for c in served), suite


def test_every_readme_llm_command_runs_as_written(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "readme_llm_commands.py"), "--keep", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=1500, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = re.findall(r"^\s*[\d.]+ s  exit (\d+)  (.*)$", done.stdout, re.M)
    assert len(ran) == len(readme_commands()) and all(status == "0" for status, _ in ran), done.stdout
    peak = re.search(r"^server peak memory: ([\d.]+) GiB", done.stdout, re.M)
    assert peak and float(peak.group(1)) * 2**30 < SERVER_MEMORY_GOAL, done.stdout[-1000:]
    results = tmp_path / "work" / "build" / "results"  # where `nlue space` looks by default
    assert any(results.glob("*-generate/sa.json")) and any(results.glob("*/mcq_ne.json"))
    assert any(results.glob("*__zero-shot-en-generate__*/nediom.json"))


def test_the_readme_server_gives_its_cache_a_size() -> None:
    """issue 29, item 30: unsized, `transformers serve --continuous-batching` took 90% of free memory on CPU."""
    servers = [c for c in readme_commands() if c.startswith("transformers serve")]
    assert servers and all(sets_cache_size(shlex.split(c.rstrip("&"))) for c in servers), servers
    line = ["transformers", "serve", "--continuous-batching", "--host", "127.0.0.1", "--port", "8000", "./my-model"]
    assert not sets_cache_size(line)
    assert sets_cache_size([*line[:3], "--cb-num-blocks=8", *line[3:]])
    assert sets_cache_size([a for a in line if a != "--continuous-batching"])  # one at a time: no paged cache
