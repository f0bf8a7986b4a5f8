"""The README stays true: generated tables match the registry, the two commands are wired up."""

from __future__ import annotations

import re
from pathlib import Path

from nlue.registry.views import README_TABLE_END, README_TABLE_START, readme_tasks_table

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_tasks_table_matches_registry() -> None:
    start, end = README.index(README_TABLE_START), README.index(README_TABLE_END) + len(README_TABLE_END)
    assert README[start:end] == readme_tasks_table(), "run `python -m nlue.registry.views`"


def test_two_commands_come_first_and_ci_runs_the_second() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).strip().splitlines()]
    assert commands == ["bash scripts/quickstart.sh", "bash scripts/test.sh"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash scripts/test.sh" in ci
    for script in ("quickstart.sh", "test.sh"):
        text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
        assert "bash scripts/setup.sh" in text  # each command does all set-up itself
    assert "torch==2.13.0" in (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")


def test_sample_data_is_called_sample_data() -> None:
    assert "Sample data, not the benchmark" in README
