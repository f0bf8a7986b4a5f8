"""Every problem found in one roster file, gathered so that all are reported at once."""

from __future__ import annotations

from nlue.errors import NlueError


class Problems:
    """Every problem found in one roster file, each where it is in the YAML."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}" if where else message)

    def raise_if_any(self) -> None:
        if self.items:
            lines = "\n".join(f"  {self.source}: {item}" for item in self.items)
            count = f"{len(self.items)} problem{'s' if len(self.items) > 1 else ''}"
            raise NlueError(f"the roster {self.source} has {count}; nothing was run:\n{lines}")
