"""Every cell's argv parsed by its own command's parser before the sweep starts, so that a wrong
``args:`` entry or a setting a command does not take fails now, with the others, and not hours in."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence

from nlue.errors import NlueError
from nlue.evals.sweep.grid import Cell


def argv_problem(argv: Sequence[str]) -> str | None:
    """What the command's parser says about ``argv`` (``nlue`` left out), or None when it parses."""
    from nlue.cli import HF_ARGUMENT_COMMANDS, OWN_PARSER_COMMANDS

    command, rest = argv[0], list(argv[1:])
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            if command in HF_ARGUMENT_COMMANDS:
                _parse_recipe(command, rest)
            else:
                import importlib

                from nlue.cli_support import accept_both_spellings, parse_or_exit_code

                module = importlib.import_module(OWN_PARSER_COMMANDS[command])
                parsed = parse_or_exit_code(accept_both_spellings(module.build_parser()), rest)
                if isinstance(parsed, int):
                    raise SystemExit(parsed)
    except SystemExit:
        lines = [line for line in stderr.getvalue().splitlines() if line.strip()]
        return lines[-1] if lines else "the command's parser refused it"
    except (ValueError, TypeError) as exc:  # HfArgumentParser: unused arguments, a value of the wrong type
        return str(exc).splitlines()[0]
    return None


def _parse_recipe(command: str, argv: list[str]) -> None:
    from nlue.cli_support import split_logging_flags
    from nlue.training.args import (
        DataArguments,
        LoraArguments,
        ModelArguments,
        NlueTrainingArguments,
        RecipeArguments,
        parse,
    )

    _, _, rest = split_logging_flags(argv)
    parse((ModelArguments, DataArguments, LoraArguments, RecipeArguments, NlueTrainingArguments), rest,
          f"nlue {command}")  # fmt: skip


def check_cells(cells: Sequence[Cell], source: str, free_form: Sequence[str] = ()) -> None:
    """NlueError naming every cell whose argv its command refuses (each distinct problem once).

    A fine-tuning cell is parsed only when its run passes ``args:`` of its own (``free_form`` lists
    those runs): its parser is transformers' HfArgumentParser, whose import costs a dry run 5-20 s,
    and the options the grid itself writes are checked by the tests.
    """
    from nlue.cli import HF_ARGUMENT_COMMANDS

    problems: dict[str, str] = {}
    for cell in cells:
        if cell.argv[0] in HF_ARGUMENT_COMMANDS and cell.where not in free_form:
            continue
        problem = argv_problem(cell.argv)
        if problem:
            problems.setdefault(f"{cell.where}: {problem}", cell.label)
    if problems:
        lines = "\n".join(f"  {source}: {where} (first in {label})" for where, label in problems.items())
        raise NlueError(f"the roster {source} makes commands their parsers refuse; nothing was run:\n{lines}")
