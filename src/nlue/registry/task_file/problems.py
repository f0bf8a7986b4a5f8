"""A problem found in a task file, and the error that carries every one of them at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nlue.errors import NlueError
from nlue.text.safe import terminal_safe

Path_ = tuple[str | int, ...]


def key_path(path: Path_) -> str:
    """``("prompts", "ne", "label_words", 2)`` as ``prompts.ne.label_words[2]``; the file's top as ``(top)``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top)"


@dataclass(frozen=True)
class Problem:
    """What is wrong, where: the file, the line (when known), the key path and what was expected."""

    file: str
    path: Path_
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return terminal_safe(f"{where}: {key_path(self.path)}: {self.message}")


class TaskFileError(NlueError):
    """A task file that cannot be used, with every problem found in it (bad input: exit 2)."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        head = f"{count} problem{'s' if count != 1 else ''} in task file(s):"
        super().__init__("\n".join([head, *(f"  {problem}" for problem in self.problems)]))
