"""A folder name for a model: what results folders, journals and checkpoints are named by."""

from __future__ import annotations

import os
import re
from pathlib import Path


def model_slug(name_or_path: str) -> str:
    """A folder name for a model id or path: `org/model` -> `org__model`."""
    text = str(name_or_path).rstrip("/")
    if os.path.isdir(text):
        text = Path(text).name
    return re.sub(r"[^A-Za-z0-9._-]+", "__", text).strip("_") or "model"
