"""What `nlue gmet` prints on the console (its sub-commands share it; library code logs instead)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.gmet.report import headline


def print_scores(title: str, metrics: dict[str, Any], notes: Sequence[str]) -> None:
    print(title)
    print(f"  {headline(metrics)}")
    if "sigma" in metrics:
        print(f"  sigma of the category accuracies = {metrics['sigma']:.4f}")
    for note in notes:
        print(f"  note: {note}")


def print_paths(paths: dict[str, Path]) -> None:
    for key, path in paths.items():
        print(f"  {key:>15}: {path}")
