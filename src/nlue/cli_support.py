"""The one command-line backbone every `nlue` sub-command runs on.

* :func:`configure_logging` - one format, ``-v/--verbose`` for debug, ``-q/--quiet`` for warnings
  only; every sub-command takes both flags, before or after its name (:func:`add_logging_options`,
  :func:`split_logging_flags` for the parsers that do not declare them);
* :func:`run_command` - one mapping of failures to exit codes and messages:

  ====  ===============================================================================
  0     done
  1     the system failed (a file could not be written, a disk is full: ``OSError``)
  2     the input was wrong (``NlueError``, ``ValueError``, an unusable option, a missing
        optional dependency), with ``nlue <command>: error: <what, where, what was expected>``
  130   interrupted (Ctrl-C)
  ====  ===============================================================================

* :func:`accept_both_spellings` - every long option answers to its kebab and its snake
  spelling (``--results-dir`` and ``--results_dir``), as transformers' HfArgumentParser
  already does for `nlue train` and `nlue search`: one rule for every sub-command;
* :func:`parse_or_exit_code` - argparse's ``--help`` and usage errors as exit codes, not
  exceptions, so that sub-commands can be called as functions;
* :func:`run_with_parser` - all of the above for a sub-command with its own parser: its ``main``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from nlue.errors import NlueError

EXIT_OK, EXIT_SYSTEM, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
# What to install for an optional dependency that is missing (the extras of pyproject.toml).
_EXTRA_OF = {
    "torch": "train",
    "transformers": "train",
    "peft": "train",
    "accelerate": "train",
    "evaluate": "metrics",
    "scipy": "metrics",
    "matplotlib": "plots",
    "gradio": "space",
    "sklearn": "baseline",
}


def configure_logging(verbose: bool = False, quiet: bool = False) -> None:
    """Log to stderr in one format; a caller that configured logging already keeps its set-up untouched."""
    if logging.getLogger().handlers:
        return
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=level, format=LOG_FORMAT)


LOGGING_FLAGS = {"-v": "verbose", "--verbose": "verbose", "-q": "quiet", "--quiet": "quiet"}


def split_logging_flags(argv: Sequence[str]) -> tuple[bool, bool, list[str]]:
    """(verbose, quiet, the other arguments): the logging flags taken out of ``argv``.

    For parsers that do not declare them (HfArgumentParser) and for the flags written
    before a sub-command's name (``nlue -v train ...``).
    """
    found = {"verbose": False, "quiet": False}
    rest = []
    for position, token in enumerate(argv):
        if token == "--":  # what follows is positional
            rest.extend(argv[position:])
            break
        if token in LOGGING_FLAGS:
            found[LOGGING_FLAGS[token]] = True
        else:
            rest.append(token)
    return found["verbose"], found["quiet"], rest


def add_logging_options(parser: argparse.ArgumentParser, quiet_help: str = "warnings and errors only") -> None:
    """``-v/--verbose`` and ``-q/--quiet`` on a sub-command's parser.

    Unset flags leave the namespace alone (``SUPPRESS``), so ``nlue -v build ...`` and
    ``nlue build -v ...`` mean the same.
    """
    group = parser.add_argument_group("logging")
    group.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logging")
    group.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=quiet_help)


def run_command(command: str, action: Callable[[], int | None]) -> int:
    """Run ``action`` and turn what it raises into the exit codes and messages of the module docstring."""
    prefix = f"nlue {command}: error:"
    try:
        return int(action() or EXIT_OK)
    except SystemExit as exc:  # a parser inside the command: --help, or a usage error it has printed
        return exit_code(exc)
    except (NlueError, ValueError) as exc:
        print(f"{prefix} {exc}", file=sys.stderr)
        return EXIT_INPUT
    except ImportError as exc:
        module = (exc.name or str(exc)).split(".")[0]
        extra = _EXTRA_OF.get(module, "all")
        print(f"{prefix} {module} is not installed; pip install 'nlue[{extra}]'", file=sys.stderr)
        return EXIT_INPUT
    except OSError as exc:
        print(f"{prefix} {exc}", file=sys.stderr)
        return EXIT_SYSTEM
    except KeyboardInterrupt:
        print(f"nlue {command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def accept_both_spellings(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give every long option of ``parser`` (and its sub-parsers) its other spelling, kebab or snake."""
    # The other spelling is registered for parsing only, so help shows each option once.
    # Abbreviations are off: "--results" would match both spellings, and scripts should not
    # rely on a prefix that a later option can make ambiguous.
    parser.allow_abbrev = False
    for action in list(parser._actions):  # argparse keeps no public list of actions
        for option in list(action.option_strings):
            if not option.startswith("--"):
                continue
            body = option[2:]
            for other in (body.replace("_", "-"), body.replace("-", "_")):
                alternative = f"--{other}"
                if alternative != option and alternative not in parser._option_string_actions:
                    parser._option_string_actions[alternative] = action
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                accept_both_spellings(sub)
    return parser


def exit_code(exc: SystemExit) -> int:
    """The exit code a ``SystemExit`` carries: None is 0, a message is a usage error (2)."""
    if exc.code is None:
        return EXIT_OK
    return exc.code if isinstance(exc.code, int) else EXIT_INPUT


def parse_or_exit_code(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    """Parsed arguments, or the exit code argparse chose (0 after --help, 2 after a usage error).

    An unknown option after a sub-command's name is that sub-command's usage error
    (``nlue build: error: ...``, like every other bad input of it), not the top-level parser's.
    """
    try:
        known, extras = parser.parse_known_args(list(argv))
        if extras:
            _chosen_parser(parser, known).error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:
        return exit_code(exc)
    return known


def run_with_parser(
    command: str,
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    action: Callable[[argparse.Namespace], int | None],
) -> int:
    """Parse ``argv`` (``sys.argv[1:]`` when None) in both spellings, set up logging, run ``action(args)``.

    The whole ``main`` of a sub-command with its own parser; returns the exit status.
    """
    args = parse_or_exit_code(accept_both_spellings(parser), sys.argv[1:] if argv is None else argv)
    if isinstance(args, int):
        return args
    configure_logging(getattr(args, "verbose", False), getattr(args, "quiet", False))
    return run_command(command, lambda: action(args))


def _chosen_parser(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The sub-command's parser that ``parsed`` went through, or ``parser`` itself."""
    for action in parser._actions:  # argparse keeps no public list of actions
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
            if chosen is not None:
                return _chosen_parser(chosen, parsed)
    return parser
