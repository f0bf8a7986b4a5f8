"""The embedded sample data: a few dozen items per task, written by the nlue developers.

It exists to try every tool end to end without downloading anything; it is not the
NLUE benchmark and scores on it mean nothing about a model.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def sample_data_dir() -> Path:
    """The folder of ``<config>/<split>.jsonl`` sample files shipped inside the package."""
    return Path(str(files("nlue") / "sample_data"))
