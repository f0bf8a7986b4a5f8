"""`nlue export ...`: the tasks in other tools' formats.

    nlue export lm-eval --out lm_eval_tasks/ --dataset build/nlue
    lm_eval --model hf --model_args pretrained=MODEL --include_path lm_eval_tasks/ --tasks nlue_nlue_ne

``lm-eval`` writes one YAML per task and prompt language (``nlue_<task>_<lang>``) and a
group per benchmark and language (``nlue_<benchmark>_<lang>``), for the tasks the dataset
has: without ``--tasks``, every exportable task it has a config for (the rest are named
and left out); a task named in ``--tasks`` that it lacks is an error. ``--wordings all`` also
writes each other wording of a prompt as ``nlue_<task>_<lang>_<wording>`` and a group
``nlue_<task>_<lang>_wordings`` of the main task and its wordings. ``--dataset`` is what
lm-evaluation-harness hands to ``datasets.load_dataset``: a Hub id, or the folder
``nlue build`` wrote (made absolute, since lm_eval may run from another folder).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nlue.cli_lists import add_name_list, task_names
from nlue.cli_support import (
    add_logging_options,
    add_task_file_option,
    command_parser,
    run_with_parser,
)
from nlue.evals.export.lm_eval import DEFAULT_LANGUAGES, export_lm_eval, exportable
from nlue.registry.wordings import MAIN, WORDING_CHOICES


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue export", __doc__)
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="target", required=True, metavar="FORMAT")
    lm_eval = sub.add_parser("lm-eval", help="lm-evaluation-harness task YAMLs (multiple_choice, log-likelihood)")
    lm_eval.add_argument("--out", type=Path, required=True, help="folder for the YAML files (created if missing)")
    lm_eval.add_argument(
        "--dataset",
        default="nlue",
        help="the dataset repo lm-eval loads: a Hub id or a built folder (default: %(default)s)",
    )
    add_name_list(
        lm_eval,
        "--tasks",
        valid=task_names(exportable),
        what="task",
        help="the tasks to export, each a config of the dataset (default: every task scored by log-likelihood "
        "over labelled choices that the dataset has)",
    )
    add_task_file_option(lm_eval)
    add_name_list(
        lm_eval,
        "--languages",
        what="language",
        help="prompt languages, each of which some exported task must have (default: en ne, those the tasks have)",
    )
    lm_eval.add_argument("--wordings", choices=WORDING_CHOICES, default=MAIN,
                         help="all: also each other wording of the prompt as a task of its own "
                         "(nlue_<task>_<lang>_<wording>), grouped with the main one as nlue_<task>_<lang>_wordings "
                         "(default %(default)s: the main prompt alone)")  # fmt: skip
    return parser


def run(args: argparse.Namespace) -> int:
    dataset = args.dataset
    if Path(dataset).is_dir():  # lm_eval may run from another folder: hand it a path that still resolves
        dataset = str(Path(dataset).resolve())
    export = export_lm_eval(args.out, dataset, args.tasks, args.languages, args.wordings)
    print(
        f"wrote {len(export.files)} files to {args.out}: {_count(export.tasks, 'task')} "
        f"and {_count(export.groups, 'group')}"
    )
    if export.wording_groups:
        print(f"and a group of each task's wordings: {_count(export.wording_groups, 'group')}")
    if export.not_in_dataset:
        print(f"not exported, {dataset} has no config for them: {', '.join(export.not_in_dataset)}")
    if export.no_prompt:
        print(f"not exported, no prompt in that language: {', '.join(export.no_prompt)}")
    if export.other_languages and args.languages is None:  # the default languages left some prompts out
        shown = " ".join([*DEFAULT_LANGUAGES, *export.other_languages])
        print(f"these tasks also have prompts in {', '.join(export.other_languages)}: --languages {shown}")
    if export.configs is None:
        print(f"not checked: could not read the configs of {dataset}; lm_eval fails on a task it lacks")
    example = export.groups[0] if export.groups else "TASK"
    print(
        f"run them with: lm_eval --model hf --model_args pretrained=MODEL --include_path {args.out} --tasks {example}"
    )
    return 0


def _count(names: Sequence[str], noun: str) -> str:
    return f"{len(names)} {noun}{'' if len(names) == 1 else 's'} ({', '.join(names)})"


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue export` with ``argv`` (without the `export` word); return the exit status."""
    return run_with_parser("export", build_parser, argv, run)
