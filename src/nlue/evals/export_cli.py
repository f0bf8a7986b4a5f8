"""`nlue export ...`: the tasks in other tools' formats.

    nlue export lm-eval --out lm_eval_tasks/ --dataset build/nlue
    lm_eval --model hf --model_args pretrained=MODEL --include_path lm_eval_tasks/ --tasks nlue_nlue_ne

``lm-eval`` writes one YAML per task and prompt language (``nlue_<task>_<lang>``) and a
group per benchmark and language (``nlue_<benchmark>_<lang>``). ``--dataset`` is what
lm-evaluation-harness hands to ``datasets.load_dataset``: a Hub id, or the folder
``nlue build`` wrote (give an absolute path when lm_eval runs from another folder).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nlue.cli_support import (
    add_logging_options,
    run_with_parser,
)
from nlue.evals.lm_eval_export import export_lm_eval, exportable
from nlue.registry.tasks import TASKS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue export",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="target", required=True, metavar="FORMAT")
    lm_eval = sub.add_parser("lm-eval", help="lm-evaluation-harness task YAMLs (multiple_choice, log-likelihood)")
    lm_eval.add_argument("--out", type=Path, required=True, help="folder for the YAML files (created if missing)")
    lm_eval.add_argument(
        "--dataset",
        default="nlue",
        help="the dataset repo lm-eval loads: a Hub id or a built folder (default: %(default)s)",
    )
    lm_eval.add_argument(
        "--tasks",
        nargs="+",
        choices=[name for name, task in TASKS.items() if exportable(task)],
        metavar="TASK",
        help="the tasks to export (default: every task scored by log-likelihood over labelled choices)",
    )
    lm_eval.add_argument(
        "--languages",
        nargs="+",
        default=["en", "ne"],
        help="prompt languages, among those the registry has for a task (default: en ne)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    dataset = args.dataset
    if Path(dataset).is_dir():  # lm_eval may run from another folder: hand it a path that still resolves
        dataset = str(Path(dataset).resolve())
    written = export_lm_eval(args.out, dataset, args.tasks, args.languages)
    tasks = sorted(path.stem for path in written)
    print(f"wrote {len(written)} files to {args.out}: {', '.join(tasks)}")
    print(f"run them with: lm_eval --model hf --model_args pretrained=MODEL --include_path {args.out} --tasks TASK")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue export` with ``argv`` (without the `export` word); return the exit status."""
    return run_with_parser("export", build_parser(), argv, run)
