"""Tiny, randomly initialised models laid out the way the Space scans them, built locally in seconds.

For the Space's tests and latency benchmark, and for trying the Space on a machine with no
checkpoints yet: ``<root>/<task>/`` classifiers with the registry's labels and
``<root>/encoder/`` a masked LM. Their predictions are noise; they exercise the plumbing.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from nlue.lm.tiny import Family, save_tiny_classifier, save_tiny_encoder

ENCODER_FOLDER = "encoder"


def build_demo_models(
    root: Path, tasks: Iterable[str] = ("sa", "mnli", "stsb"), encoder: bool = True, family: Family = "bert"
) -> Path:
    """Write tiny classifiers for ``tasks`` (and a masked LM) under ``root``; existing folders are kept."""
    root = Path(root)
    for task in tasks:
        if not (root / task / "config.json").is_file():
            save_tiny_classifier(root / task, family, task)
    if encoder and not (root / ENCODER_FOLDER / "config.json").is_file():
        save_tiny_encoder(root / ENCODER_FOLDER, family)
    return root
