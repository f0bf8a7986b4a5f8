"""The folder nlue keeps its caches in: built sample datasets and the answer cache.

``$NLUE_CACHE``, else ``$XDG_CACHE_HOME/nlue``, else ``~/.cache/nlue``; read at each call, so a
test or a wrapper script may set it after nlue is imported.
"""

from __future__ import annotations

import os
from pathlib import Path


def nlue_cache_root() -> Path:
    """``$NLUE_CACHE``, else ``$XDG_CACHE_HOME/nlue``, else ``~/.cache/nlue``."""
    if os.environ.get("NLUE_CACHE"):
        return Path(os.environ["NLUE_CACHE"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "nlue"
    return Path.home() / ".cache" / "nlue"
