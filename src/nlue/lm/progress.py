"""Progress bars for the engine: requests and requests/s (tqdm), or nothing when asked to be quiet."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


class _NoBar:
    """Stands in for a tqdm bar when progress is not shown."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(show: bool, total: int, what: str, from_journal: int = 0) -> Any:
    """A bar over the ``total`` requests still to ask; those answered from the journal are logged, not counted."""
    if from_journal:
        logger.info("%s: %d requests answered from the journal, %d to ask", what, from_journal, total)
    if not show:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=what, unit="req", dynamic_ncols=True)
