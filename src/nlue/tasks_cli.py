"""`nlue tasks`: the registry's table, and task files checked (`validate`) and started (`new`).

* ``nlue tasks [--json] [--gmet-categories] [--task-file FILE ...]`` prints the registry, with the
  tasks of the task files given registered beside the shipped ones;
* ``nlue tasks validate FILE|FOLDER ...`` prints ``ok`` for each good file and every problem of
  each bad one (file, line, key path, what was expected); exit 2 when any file has one;
* ``nlue tasks new --kind K [--name N] [--language L] [--out FILE]`` prints (or writes) a
  commented starting task file that validates as it stands.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from nlue.atomic_files import write_text_atomic
from nlue.cli_support import add_logging_options, add_task_file_option, run_with_parser
from nlue.errors import NlueError
from nlue.registry.kinds import KINDS
from nlue.registry.task_file.load import check_file, task_file_paths
from nlue.registry.task_file.problems import Problem
from nlue.registry.task_file.template import task_file_template
from nlue.text.safe import terminal_safe

EPILOG = """examples:
  nlue tasks                                    the registry: every shipped task
  nlue tasks --task-file ur_sentiment.yaml      ... and the tasks of a task file of yours
  nlue tasks new --kind classification --name ur_sentiment --language ur --out ur_sentiment.yaml
  nlue tasks validate ur_sentiment.yaml         ok, or every problem with its line and key
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue tasks",
        description="Print the task registry; check task files (validate) or start one (new).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the full registry as JSON")
    parser.add_argument("--gmet-categories", action="store_true", help="list the 75 GMET categories by theme")
    add_task_file_option(parser)
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    validate = sub.add_parser(
        "validate",
        help="check task files: ok, or every problem with its file, line and key",
        description="Check task files against the schema and the rules a schema cannot state; print ok for each "
        "good file and every problem of each bad one. Exit 2 when any file has a problem.",
    )
    validate.add_argument("files", nargs="+", type=Path, metavar="FILE", help="a task file, benchmark file or folder")
    add_logging_options(validate)
    new = sub.add_parser(
        "new",
        help="print a commented starting task file that validates as it stands",
        description="Print (or write with --out) a commented task file of the kind asked for, ready to edit.",
    )
    new.add_argument("--kind", required=True, choices=tuple(KINDS), help="the kind of task")
    new.add_argument("--name", help="the task's name (default: my_<kind>)")
    new.add_argument("--language", default="en", help="ISO 639 code of the task's text (default: en)")
    new.add_argument("--out", type=Path, help="write the file here instead of printing it (never overwrites)")
    add_logging_options(new)
    return parser


def _print_registry(args: argparse.Namespace) -> int:
    from nlue.registry.tasks import GMET_THEMES
    from nlue.registry.views import registry_as_dict, registry_table

    if args.gmet_categories:
        # Numbered 1-75 in the paper's appendix order: `nlue build` accepts the number for a category.
        number = 0
        for theme, categories in GMET_THEMES.items():
            print(f"{theme} ({len(categories)}):")
            for category in categories:
                number += 1
                print(f"  {number:>2}  {category}")
    elif args.json:
        print(json.dumps(registry_as_dict(), ensure_ascii=False, indent=2))
    else:
        print(terminal_safe(registry_table(), limit=None))
    return 0


def _validate(files: Sequence[Path]) -> int:
    shown: set[str] = set()
    bad = checked = 0
    for given in files:
        for path in task_file_paths([given]) if given.is_dir() else [given]:
            checked += 1
            problems: list[Problem] = check_file(path)
            if not problems:
                print(f"{terminal_safe(path)}: ok")
                continue
            bad += 1
            for problem in problems:  # a task file listed by a benchmark file given too is checked once
                if str(problem) not in shown:
                    shown.add(str(problem))
                    print(problem)
    if bad:
        raise NlueError(f"{bad} of {checked} task file(s) have problems (listed above)")
    return 0


def _new(args: argparse.Namespace) -> int:
    text = task_file_template(args.kind, args.name, args.language)
    if args.out is None:
        print(text, end="")
        return 0
    if args.out.exists():
        raise NlueError(f"--out {args.out} exists; choose another name or remove it (nothing was written)")
    folder = args.out.parent if str(args.out.parent) else Path(".")
    if not folder.is_dir():
        raise NlueError(f"--out {args.out}: the folder {folder} does not exist")
    write_text_atomic(args.out, text)
    print(f"wrote {terminal_safe(args.out)}; check it with `nlue tasks validate {terminal_safe(args.out)}`")
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.action == "validate":
        return _validate(args.files)
    if args.action == "new":
        return _new(args)
    return _print_registry(args)  # the --task-file files are registered by the backbone (run_with_parser)


def main(argv: Sequence[str] | None = None) -> int:
    return run_with_parser("tasks", build_parser, argv, _run)
