"""Options that take a list of names (``--tasks``, ``--configs``, ``--models``, ...): one rule for every command.

A list may be written with spaces, with commas, or both, and the option may be repeated:
``--tasks sa rte``, ``--tasks sa,rte``, ``--tasks sa, rte`` and ``--tasks sa --tasks rte`` all
give ``["sa", "rte"]``. Names are checked while the command line is parsed, so an unknown
name is a usage error (exit 2) that lists the valid ones, before any data or model loads.

:func:`add_name_list` declares such an option on a parser (or an argument group);
:func:`split_names` is the same splitting for lists read from elsewhere (a Python caller's
``"sa,rte"``).
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# Where the valid names come from: a fixed list, or a function read at parse time (the task
# registry is live: a benchmark registered after the parser was built still counts).
Choices = Sequence[str] | Callable[[], Iterable[str]] | None

LIST_HELP = "separated by spaces or commas"
TASK_FILE_HINT = "a task of your own: --task-file FILE, $NLUE_TASK_FILES, or a --dataset built from its task file"


def split_names(values: str | Iterable[str]) -> list[str]:
    """``"sa,rte"``, ``["sa", "rte"]`` or ``["sa,", "rte"]`` as ``["sa", "rte"]``: blanks dropped, order kept, once each."""
    tokens = [values] if isinstance(values, str) else list(values)
    names = (part.strip() for token in tokens for part in str(token).split(","))
    return list(dict.fromkeys(name for name in names if name))


class _NameList(list):
    """A list this option stored, told apart from a default so that a repeated option adds to it."""


class NameListAction(argparse.Action):
    """``nargs="+"`` that splits commas, checks each name against ``valid`` and extends on repetition."""

    def __init__(self, option_strings: Sequence[str], dest: str, valid: Choices = None, what: str = "name",
                 all_word: str | None = None, **kwargs: Any) -> None:  # fmt: skip
        kwargs.setdefault("nargs", "+")
        super().__init__(option_strings, dest, **kwargs)
        self.valid, self.what, self.all_word = valid, what, all_word

    def valid_names(self) -> list[str] | None:
        if self.valid is None:
            return None
        return list(self.valid() if callable(self.valid) else self.valid)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        names = split_names(values)
        if not names:
            raise argparse.ArgumentError(self, f"give at least one {self.what} ({LIST_HELP})")
        earlier = getattr(namespace, self.dest, None)
        if self.all_word is not None and self.all_word in names:
            if len(names) > 1 or isinstance(earlier, _NameList):
                raise argparse.ArgumentError(self, f"{self.all_word!r} stands alone: it means every {self.what}")
            setattr(namespace, self.dest, None)  # the command's own "every ..." default
            return
        valid = self.valid_names()
        if valid is not None:
            unknown = [name for name in names if name not in valid]
            if unknown:
                message = unknown_names_message(unknown, valid, self.what, self.all_word)
                if self.what == "task":  # the registry is the shipped tasks and those of the task files named
                    message += f" ({TASK_FILE_HINT})"
                raise argparse.ArgumentError(self, message)
        kept = list(earlier) if isinstance(earlier, _NameList) else []
        setattr(namespace, self.dest, _NameList(dict.fromkeys([*kept, *names])))


def unknown_names_message(
    unknown: Sequence[str], valid: Sequence[str], what: str, all_word: str | None = None,
    where: str = "this command takes",
) -> str:  # fmt: skip
    """``'rtee' (did you mean 'rte'?) is not a task here; valid: sa, cola, ...``: every valid name, the nearest one."""
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name.lower(), valid, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    verb = f"are not {what}s" if len(unknown) > 1 else f"is not a {what}"
    everything = f", or {all_word!r} for every one" if all_word else ""
    return f"{', '.join(parts)} {verb} {where}; valid: {', '.join(valid) or '(none)'}{everything}"


def task_names(wanted: Callable[[Any], bool] | None = None) -> Callable[[], list[str]]:
    """The registered tasks that ``wanted`` (a test on a TaskSpec) accepts, read when the command line is parsed."""

    def names() -> list[str]:
        from nlue.registry.tasks import TASKS

        return [name for name, task in TASKS.items() if wanted is None or wanted(task)]

    return names


def add_name_list(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    *flags: str,
    valid: Choices = None,
    what: str = "name",
    all_word: str | None = None,
    help: str = "",
    **kwargs: Any,
) -> argparse.Action:
    """Declare a list-of-names option: spaces or commas, repeatable, names checked against ``valid``.

    ``valid`` is None where the names are known only later (a roster's models): the command
    checks them then. With ``all_word`` (``"all"``), that word alone leaves the option at its
    default (None), which the command reads as "every one". The option's help says how to
    write the list; its metavar is ``what`` in capitals unless given.
    """
    kwargs.setdefault("metavar", what.upper().replace(" ", "_"))
    how = f"{help}; {LIST_HELP}" if help else f"one or more {what}s, {LIST_HELP}"
    return parser.add_argument(
        *flags, action=NameListAction, valid=valid, what=what, all_word=all_word, help=how, **kwargs
    )
