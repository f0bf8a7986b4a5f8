"""What a long model run tells the user: progress bars, and repeated warnings gathered into one line.

A warning that would repeat per item (a prompt cut to fit the window, a request that failed) is
logged the first time as it happens; the rest are counted, and :meth:`WarningTally.flush` says how
many there were in all, once, when the batch of work ends.
"""

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


def progress_bar(show: bool, total: int, what: str, from_journal: int = 0, unit: str = "req") -> Any:
    """A bar over the ``total`` requests still to ask (or other ``unit``s of work); those answered from the journal
    are logged, not counted."""
    if from_journal:
        logger.info("%s: %d requests answered from the journal, %d to ask", what, from_journal, total)
    if not show:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=what, unit=unit, dynamic_ncols=True)


class WarningTally:
    """Warnings of one kind: the first logged when it happens, the others counted and told once at :meth:`flush`."""

    def __init__(self, log: logging.Logger, what: str) -> None:
        self.log = log
        self.what = what
        self.count = 0

    def warn(self, message: str, *args: Any) -> None:
        if self.count == 0:
            self.log.warning(message + " (further ones are counted, not shown)", *args)
        self.count += 1

    def flush(self) -> None:
        if self.count > 1:
            self.log.warning("%s: %d in all", self.what, self.count)
        self.count = 0

    def __enter__(self) -> WarningTally:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
