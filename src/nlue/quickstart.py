"""The README's main job on the embedded sample: build, summarise, load back, check."""

from __future__ import annotations

import logging
from pathlib import Path

from nlue.build import BuildOptions, build_repo, task_sources_from_folder
from nlue.errors import NlueError
from nlue.sample import sample_data_dir
from nlue.summary import build_summary
from nlue.tasks import TASKS

logger = logging.getLogger(__name__)


def load_and_check(repo_dir: Path) -> list[str]:
    """Load every config with `datasets.load_dataset`; check features against the registry."""
    import datasets

    lines = []
    for name, task in TASKS.items():
        ds = datasets.load_dataset(str(repo_dir), name)
        if task.label_field and task.label_names:
            names = ds[task.splits[0]].features[task.label_field].names
            if tuple(names) != task.label_names:
                raise NlueError(f"{name}: built label names {names} differ from the registry's {task.label_names}")
        sizes = ", ".join(f"{split} {ds[split].num_rows}" for split in ds)
        lines.append(f"load_dataset({str(repo_dir)!r}, {name!r}) -> {sizes}")
    return lines


def run_quickstart(out: Path) -> int:
    print("Building the embedded SAMPLE data (written by the nlue developers; not the NLUE benchmark)...")
    options = BuildOptions(is_sample=True, license="apache-2.0")
    result = build_repo(task_sources_from_folder(sample_data_dir()), out, options)
    print(build_summary(result))
    print("\nLoading every config back with datasets.load_dataset (offline, from the folder):")
    for line in load_and_check(result.repo_dir):
        print("  " + line)
    print(f"\nDone. Read the card at {result.repo_dir / 'README.md'}; publish with "
          f"`nlue push {result.repo_dir} --repo-id <you>/nlue --dry-run`.")  # fmt: skip
    return 0
