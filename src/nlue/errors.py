"""User-facing errors: each says where the problem is and what was expected."""

from __future__ import annotations

from dataclasses import dataclass


class NlueError(Exception):
    """An error caused by user input; the CLI prints it and exits non-zero."""


@dataclass(frozen=True)
class RowProblem:
    """One problem with one input row: where it is and what was expected."""

    file: str
    row: int  # 1-based data row (header excluded); 0 when the problem is file-wide
    field: str
    reason: str
    value: str = ""

    def describe(self) -> str:
        where = f"{self.file}, row {self.row}" if self.row else self.file
        shown = f" (got {self.value!r})" if self.value else ""
        return f"{where}, field {self.field!r}: {self.reason}{shown}"

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "row": self.row,
            "field": self.field,
            "reason": self.reason,
            "value": self.value,
        }


class SourceError(NlueError):
    """A source file cannot be used at all (missing column, bad encoding, empty, ...)."""

    def __init__(self, problem: RowProblem) -> None:
        super().__init__(problem.describe())
        self.problem = problem
