"""The errors nlue reports to a user, each with what went wrong, where, and what was expected.

* :class:`NlueError` - the user's input is wrong (a file, a row, an option, a model that cannot do
  what was asked). The CLI exits 2. It is a ``ValueError``, so Python callers may catch either.
* :class:`ServiceError` - a server or service outside nlue failed and stopped the work (every retry
  spent, a run whose every request failed). Not the user's input; the CLI exits 1, as for a
  failing disk.

Anything else that escapes (a library's exception, a bug of ours) is an *internal* error: the
CLI says so, with its type and where it was raised, and exits 3 (:mod:`nlue.cli_support`).
"""

from __future__ import annotations

from dataclasses import dataclass


class NlueError(ValueError):
    """An error caused by user input; the CLI prints it and exits 2."""


class ServiceError(Exception):
    """A server or service outside nlue failed and the work stopped; the CLI prints it and exits 1."""


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
