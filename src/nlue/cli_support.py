"""The one command-line backbone every `nlue` sub-command runs on.

* :func:`configure_logging` - one format, ``-v/--verbose`` for debug, ``-q/--quiet`` for warnings
  only; every sub-command takes both flags, before or after its name (:func:`add_logging_options`,
  :func:`split_logging_flags` for the parsers that do not declare them);
* what reaches the terminal is safe to show, whoever wrote it (a server's error body, a model's
  answer, a results file's names): every log line and every error message passes
  :func:`nlue.text.safe.terminal_safe` (control characters, and so ANSI/OSC sequences, as visible
  escapes) and :func:`nlue.text.safe.public_urls_in` (no credentials of a URL), and a command's
  standard output, when it is a terminal, passes :func:`~nlue.text.safe.terminal_safe` too;
* :func:`run_command` - one mapping of failures to exit codes and messages:

  ====  ===============================================================================
  0     done
  1     something outside nlue failed: a file could not be written, a disk is full
        (``OSError``), a server stopped answering and the run stopped (``ServiceError``)
  2     the input was wrong (``NlueError``, an unusable option, a missing optional
        dependency), with ``nlue <command>: error: <what, where, what was expected>``
  3     an internal error: any other exception, from a library or a bug of ours; the
        message gives its type and where it was raised, ``NLUE_TRACEBACK=1`` (or ``-v``)
        prints the traceback. Never reported as bad input.
  130   interrupted (Ctrl-C)
  ====  ===============================================================================

* :func:`accept_both_spellings` - every long option answers to its kebab and its snake
  spelling (``--results-dir`` and ``--results_dir``), as transformers' HfArgumentParser
  already does for `nlue train` and `nlue search`: one rule for every sub-command;
* :func:`parse_or_exit_code` - argparse's ``--help`` and usage errors as exit codes, not
  exceptions, so that sub-commands can be called as functions;
* :func:`run_with_task_files` - the user's task files (``--task-file``, ``NLUE_TASK_FILES``, those a
  named dataset carries) registered for the whole command, before any parser is built
  (:mod:`nlue.registry.task_file.activate`), so that a list option checked while parsing
  (``--tasks topic``) takes the user's tasks;
* :func:`run_with_parser` - all of the above for a sub-command with its own parser: its ``main``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.errors import NlueError, ServiceError
from nlue.text.safe import public_urls_in, terminal_safe

EXIT_OK, EXIT_SYSTEM, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
TRACEBACK_VARIABLE = "NLUE_TRACEBACK"
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
SHOWN_LIMIT = 20_000  # characters of one log line or error message shown; the rest is counted, not printed
# Libraries that log every HTTP request at INFO, with its full URL: one line per request under a progress bar.
CHATTY_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2")
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
    "openai": "llm",
}
# Optional packages without an extra of their own: a missing one is named, with the 'all' extra.
_OPTIONAL = frozenset({"yaml", "jinja2", "lm_eval", "sacrebleu", "safetensors", "tokenizers", "pandas"})


def shown(text: object, limit: int | None = SHOWN_LIMIT) -> str:
    """``text`` as the terminal may show it: control characters escaped, URLs without credentials."""
    return terminal_safe(public_urls_in(str(text)), limit)


class TerminalSafeFormatter(logging.Formatter):
    """Every log line through :func:`shown`: a message quoting a server or a model cannot drive the terminal."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return shown(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return shown(super().formatException(ei), None)

    def formatStack(self, stack_info: str) -> str:
        return shown(super().formatStack(stack_info), None)


def configure_logging(verbose: bool = False, quiet: bool = False) -> None:
    """Log to stderr in one format; a caller that configured logging already keeps its set-up untouched."""
    if logging.getLogger().handlers:
        return
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    handler = logging.StreamHandler()
    handler.setFormatter(TerminalSafeFormatter(LOG_FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
    if not verbose:
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)


class _TerminalSafeOutput:
    """Standard output that shows control characters as escapes (installed only where it is a terminal)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(terminal_safe(text, None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def terminal_safe_stdout() -> Iterator[None]:
    """While the block runs, what is printed to a terminal cannot carry control sequences; a pipe or file is
    left as written (what a command prints for other programs stays byte for byte)."""
    stream = sys.stdout
    try:
        on_terminal = stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: leave it alone
        on_terminal = False
    if not on_terminal or isinstance(stream, _TerminalSafeOutput):
        yield
        return
    sys.stdout = _TerminalSafeOutput(stream)
    try:
        yield
    finally:
        if isinstance(sys.stdout, _TerminalSafeOutput):
            sys.stdout = stream


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


def command_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """A sub-command's parser: its module docstring's first paragraph as the description, the rest as the epilog
    (printed as written: the examples keep their lines)."""
    head, _, rest = (doc or "").partition("\n\n")
    return argparse.ArgumentParser(
        prog=prog, description=head, epilog=rest or None, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_settings_options(
    parser: argparse.ArgumentParser, settings: type, aliases: Mapping[str, Sequence[str]] | None = None
) -> None:
    """One ``--name`` option per field of the dataclass ``settings`` (``_`` written ``-``), typed and defaulted by
    the field's default and helped by its ``metadata["help"]``; ``aliases`` gives a field more spellings."""
    for f in dataclasses.fields(settings):
        flags = [f"--{f.name.replace('_', '-')}", *(aliases or {}).get(f.name, ())]
        parser.add_argument(*flags, dest=f.name, type=type(f.default), default=f.default,
                            help=f"{f.metadata['help']} (%(default)s)")  # fmt: skip


def settings_from(args: argparse.Namespace, settings: type) -> Any:
    """The dataclass ``settings`` made from the options :func:`add_settings_options` added."""
    return settings(**{f.name: getattr(args, f.name) for f in dataclasses.fields(settings)})


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
        with terminal_safe_stdout():
            return int(action() or EXIT_OK)
    except SystemExit as exc:  # a parser inside the command: --help, or a usage error it has printed
        return exit_code(exc)
    except NlueError as exc:
        print(f"{prefix} {shown(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except ModuleNotFoundError as exc:
        module = (exc.name or "").split(".")[0]
        if module not in _EXTRA_OF and module not in _OPTIONAL:
            return _internal_error(command, exc)
        extra = _EXTRA_OF.get(module, "all")
        print(f"{prefix} {module} is not installed; pip install 'nlue[{extra}]'", file=sys.stderr)
        return EXIT_INPUT
    except (OSError, ServiceError) as exc:
        print(f"{prefix} {shown(exc)}", file=sys.stderr)
        return EXIT_SYSTEM
    except KeyboardInterrupt:
        print(f"nlue {command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a library's exception or our own bug: never called bad input
        return _internal_error(command, exc)


def _short_path(filename: str) -> str:
    """A frame's file as a reader finds it: from the package folder on (``transformers/...``, ``nlue/...``)."""
    parts = Path(filename).parts
    for marker in ("site-packages", "dist-packages", "src"):
        if marker in parts:
            return "/".join(parts[len(parts) - parts[::-1].index(marker) :])
    return filename


def error_origin(exc: BaseException) -> str:
    """Where ``exc`` was raised and, when that is inside a library, the last nlue frame that led there."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "an unknown place"
    raised = frames[-1]
    where = f"{_short_path(raised.filename)}:{raised.lineno} ({raised.name})"
    ours = [
        f
        for f in frames
        if f"{os.sep}nlue{os.sep}" in f.filename and "site-packages" not in f.filename and f.filename != __file__
    ]
    if ours and ours[-1] is not raised:
        caller = ours[-1]
        where += f", reached from {_short_path(caller.filename)}:{caller.lineno} ({caller.name})"
    return where


def _internal_error(command: str, exc: BaseException) -> int:
    show = os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0") or logging.getLogger().isEnabledFor(logging.DEBUG)
    if show:
        print(shown("".join(traceback.format_exception(exc)), None), end="", file=sys.stderr)
    message = shown(" ".join(str(exc).split())) or "(no message)"
    kind = (
        type(exc).__qualname__
        if type(exc).__module__ == "builtins"
        else f"{type(exc).__module__}.{type(exc).__qualname__}"
    )
    print(
        f"nlue {command}: internal error: {kind}: {message}\n"
        f"  raised in {error_origin(exc)}.\n"
        "  This is a fault in nlue or in a library it calls, not a problem with your input. "
        + ("" if show else f"Run again with {TRACEBACK_VARIABLE}=1 (or -v) to see the traceback, ")
        + "and please report it with the command you ran.",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


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


TASK_FILE_HELP = (
    "a task file (YAML), a folder of them or a benchmark file: its tasks join the registry for this command "
    "(repeatable)"
)


def add_task_file_option(parser: argparse.ArgumentParser) -> None:
    """``--task-file FILE`` (repeatable): what every command that takes a user's task adds to its parser."""
    parser.add_argument("--task-file", action="append", type=Path, default=[], metavar="FILE", help=TASK_FILE_HELP)


def run_with_task_files(command: str, argv: Sequence[str], body: Callable[[], int]) -> int:
    """Run ``body`` with the task files ``argv`` names (and ``NLUE_TASK_FILES``) registered; its exit status.

    A task file with a problem ends the command before anything is parsed: exit 2 with every problem.
    Logging is set up from ``argv``'s flags first, so that what registering logs is shown like the rest.
    """
    from nlue.registry.task_file.activate import command_task_files

    verbose, quiet, _ = split_logging_flags(argv)
    configure_logging(verbose, quiet)
    with contextlib.ExitStack() as stack:
        failed = run_command(command, lambda: _enter(stack, command_task_files(argv)))
        return failed if failed else body()


def _enter(stack: contextlib.ExitStack, context: contextlib.AbstractContextManager[Any]) -> int:
    stack.enter_context(context)
    return EXIT_OK


def run_with_parser(
    command: str,
    parser: argparse.ArgumentParser | Callable[[], argparse.ArgumentParser],
    argv: Sequence[str] | None,
    action: Callable[[argparse.Namespace], int | None],
) -> int:
    """Parse ``argv`` (``sys.argv[1:]`` when None) in both spellings, set up logging, run ``action(args)``.

    The whole ``main`` of a sub-command with its own parser; returns the exit status. The task files
    ``argv`` names are registered first (:func:`run_with_task_files`); a parser given as a function is
    built after that, so that choices read from the registry when it is built include them.
    """
    given = list(sys.argv[1:] if argv is None else argv)

    def parse_and_run() -> int:
        built = parser() if callable(parser) and not isinstance(parser, argparse.ArgumentParser) else parser
        args = parse_or_exit_code(accept_both_spellings(built), given)
        if isinstance(args, int):
            return args
        configure_logging(getattr(args, "verbose", False), getattr(args, "quiet", False))
        return run_command(command, lambda: action(args))

    return run_with_task_files(command, given, parse_and_run)


def _chosen_parser(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The sub-command's parser that ``parsed`` went through, or ``parser`` itself."""
    for action in parser._actions:  # argparse keeps no public list of actions
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
            if chosen is not None:
                return _chosen_parser(chosen, parsed)
    return parser
