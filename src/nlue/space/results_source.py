"""Where the leaderboard's results come from: a local folder, or a results repo on the Hub mirrored locally.

``NLUE_SPACE_RESULTS`` (or ``nlue space --results-dir``) names either a local folder of results
files, or, when no such folder exists and the value looks like ``<org>/<repo>``, a Hub *dataset*
repo that ``nlue submit`` opens pull requests on. A Hub repo is downloaded into a local mirror when
the Space starts (``huggingface_hub.snapshot_download``) and again every
``NLUE_SPACE_RESULTS_REFRESH_MINUTES`` (default 30) in a background thread; after a refresh that
changed files the leaderboard is read again. A failed download is logged and the last mirror (or an
empty table, with the paper's rows) stays: the Space never fails for it.

Rows say where they came from: ``paper`` (the papers' tables), ``submitted`` (a Hub results repo,
checked by ``nlue submit``) or ``local`` (a folder on this machine).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

ENV_REFRESH = "NLUE_SPACE_RESULTS_REFRESH_MINUTES"
DEFAULT_REFRESH_MINUTES = 30.0
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
Fetch = Callable[[str, Path], None]  # (repo id, local folder) -> the folder holds the repo's files


def looks_like_repo(value: str | os.PathLike[str]) -> bool:
    """A Hub repo id, not a local folder: ``org/repo`` that is not a path on this machine."""
    text = os.fspath(value)
    return not Path(text).exists() and bool(_REPO_ID.match(text)) and not text.startswith(".")


def hub_fetch(repo_id: str, folder: Path) -> None:
    """The repo's files into ``folder`` (only what changed is downloaded again)."""
    from huggingface_hub import snapshot_download

    snapshot_download(repo_id, repo_type="dataset", local_dir=folder, allow_patterns=["*.json", "*.jsonl"])


def mirror_folder(repo_id: str) -> Path:
    """Where a Hub results repo is mirrored: ``$NLUE_SPACE_RESULTS_CACHE`` or the user's cache, one folder per repo."""
    root = Path(os.environ.get("NLUE_SPACE_RESULTS_CACHE") or Path.home() / ".cache" / "nlue" / "space-results")
    return root / repo_id.replace("/", "__")


def _signature(folder: Path) -> str:
    """What a refresh compares: every results file's path, size and modification time."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.json*")) if folder.is_dir() else ():
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class ResultsSource:
    """A local results folder, or a Hub results repo kept in a local mirror (module docstring)."""

    def __init__(
        self, repo_id: str | None, folder: Path, fetch: Fetch | None = None, refresh_minutes: float = 0
    ) -> None:
        self.repo_id = repo_id
        self.folder = Path(folder)
        self.fetch = fetch or hub_fetch
        self.refresh_minutes = refresh_minutes
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def label(self) -> str:
        """The rows' source: ``submitted`` for a Hub results repo, ``local`` for a folder."""
        return "submitted" if self.repo_id else "local"

    def update(self) -> bool:
        """Mirror the Hub repo again (a no-op for a local folder); True when the results files changed."""
        if not self.repo_id:
            return True  # a local folder is read as it is at every reload
        before = _signature(self.folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.fetch(self.repo_id, self.folder)
        except Exception as exc:  # the Hub is out of reach, the repo private or gone: keep what is mirrored
            logger.warning("results repo %s not refreshed (%s: %s); showing the last copy", self.repo_id,
                           type(exc).__name__, exc)  # fmt: skip
            return False
        changed = _signature(self.folder) != before
        logger.info("results repo %s mirrored in %s%s", self.repo_id, self.folder, "" if changed else " (no change)")
        return changed

    def start(self, on_change: Callable[[], object]) -> threading.Thread | None:
        """Refresh every ``refresh_minutes`` in the background, calling ``on_change`` after a change."""
        if not self.repo_id or self.refresh_minutes <= 0:
            return None

        def loop() -> None:
            while not self._stop.wait(self.refresh_minutes * 60):
                if self.update():
                    on_change()

        self._thread = threading.Thread(target=loop, name="nlue-results-refresh", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self) -> None:
        self._stop.set()


def refresh_minutes() -> float:
    """The schedule from ``NLUE_SPACE_RESULTS_REFRESH_MINUTES`` (0: no refresh after the start)."""
    raw = os.environ.get(ENV_REFRESH)
    try:
        return float(raw) if raw else DEFAULT_REFRESH_MINUTES
    except ValueError:
        logger.warning("%s=%r is not a number of minutes; refreshing every %.0f", ENV_REFRESH, raw,
                       DEFAULT_REFRESH_MINUTES)  # fmt: skip
        return DEFAULT_REFRESH_MINUTES
