"""The `nlue` command line. Each sub-command is a thin layer over the library."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from nlue.build_cli import add_build
from nlue.cli_lists import add_name_list, task_names
from nlue.cli_support import (
    LOGGING_FLAGS,
    accept_both_spellings,
    add_logging_options,
    add_task_file_option,
    configure_logging,
    parse_or_exit_code,
    run_command,
    run_with_task_files,
)
from nlue.errors import NlueError
from nlue.results import OVERWRITE_HELP, RESULTS_DIR_HELP, default_results_dir
from nlue.version import __version__

logger = logging.getLogger("nlue")

EPILOG = """examples:
  nlue tasks                                   every task of the registry (NLUE's 12, the exams, neDIOM)
  nlue tasks new --kind classification         a commented task file to start your own task from
  nlue tasks validate my_task.yaml             check a task file: every problem, with its line and key
  nlue build --out build                       build the embedded sample into build/nlue
  nlue build --source raw/ --out build         build every <config>/<split>.<ext> under raw/
  nlue build --task-file topic.yaml --out build   a task of your own, from the data its file declares
  nlue build --task sa --train sent.csv --test sent_test.csv \\
      --column-map text=review,label=sentiment --label-map=1=positive,-1=negative,0=drop --out build
  nlue push build/nlue --repo-id me/nlue --dry-run
  nlue quickstart --out build                  build the sample, summarise it, load it back

conventions (every sub-command):
  options take both spellings, --results-dir or --results_dir; -v/--verbose (debug) and -q/--quiet
  (warnings only, no progress bars) go before or after the sub-command's name; exit codes: 0 done,
  2 bad input ("nlue <command>: error: ..."), 1 a failure outside nlue (a file, a disk, a server that
  stopped answering), 3 an internal error (a library's exception or a bug; NLUE_TRACEBACK=1 shows it),
  130 interrupted; results go to --results-dir, by default $NLUE_RESULTS_DIR or build/results, the
  folder nlue space reads
"""


def _add_push(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "push",
        help="publish a built dataset repo (or a metric, a checkpoint, the Space) to the Hub",
        description="Create the Hub repo (if needed) and upload the folder. The token comes from "
        "HF_TOKEN or `hf auth login` and is never printed.",
    )
    p.add_argument(
        "folder", type=Path, help="the folder to upload, e.g. build/nlue, metrics/gmet_combined, spaces/nlue"
    )
    p.add_argument("--repo-id", required=True, help="owner/name on the Hub")
    p.add_argument(
        "--repo-type",
        choices=("dataset", "model", "space"),
        default="dataset",
        help="dataset (a built NLUE repo, the default), model (a checkpoint), space (a metric folder or the demo)",
    )
    p.add_argument("--private", action="store_true", help="create the repo private")
    p.add_argument("--commit-message", default="Upload with nlue", help="commit message")
    p.add_argument("--dry-run", action="store_true", help="list the files and card that would go up; upload nothing")
    add_logging_options(p)
    p.set_defaults(func=_cmd_push)


def _add_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="score a fine-tuned checkpoint (or a folder of per-task checkpoints) and print the NLUE score",
        description="Score a checkpoint on NLUE test sets with bootstrap intervals; write one results file per "
        "task and print the NLUE score (mean primary metric), naming tasks that are missing.",
    )
    p.add_argument("--model", required=True, help="checkpoint folder, Hub id, LoRA adapter, or folder of <task>/")
    add_name_list(p, "--task", "--tasks", dest="task", valid=task_names(lambda t: t.kind.trainable), what="task",
                  all_word="all", help="the tasks to score (default: all, those the model folder has)")  # fmt: skip
    p.add_argument("--dataset", help="built NLUE dataset (Hub id or folder); default: the embedded sample")
    add_task_file_option(p)
    p.add_argument("--split", default="test", help="split to score (default: test)")
    p.add_argument(
        "--results-dir",
        type=Path,
        help=RESULTS_DIR_HELP,
    )
    p.add_argument(
        "--name", "--results-name", dest="name", help="name of the model in the results folder (default: from --model)"
    )
    p.add_argument("--batch-size", type=int, default=64, help="inference batch size")
    p.add_argument("--bootstrap-resamples", "--bootstrap", dest="bootstrap_resamples", type=int, default=1000,
                   help="resamples for 95%% intervals (0: none; --bootstrap is the short name, as in nlue gmet)")  # fmt: skip
    p.add_argument("--seed", type=int, default=42, help="bootstrap seed")
    p.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    add_logging_options(p, quiet_help="no progress bars; warnings and errors only")
    p.set_defaults(func=_cmd_evaluate)


def _add_space(sub: argparse._SubParsersAction) -> None:
    from nlue.space.serve import add_space_arguments  # light: imports neither gradio nor torch

    p = sub.add_parser(
        "space",
        help="serve the Gradio Space: try models, fill GMET blanks, browse data, read the leaderboard",
        description="Serve the NLUE Space (spaces/nlue) locally; by default it offers the models and results "
        "the quickstart built under build/.",
    )
    add_space_arguments(p)
    add_logging_options(p)
    p.set_defaults(func=_cmd_space)


def _cmd_space(args: argparse.Namespace) -> int:
    from nlue.space.serve import run_space_command

    return run_space_command(args)


def _add_quickstart(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "quickstart",
        help="the main job on the embedded sample: build it, summarise it, load it back",
        description="Build the embedded SAMPLE data into <out>/nlue, print its summary and load every "
        "config back with datasets.load_dataset, checking label names against the registry.",
    )
    p.add_argument("--out", type=Path, default=Path("build"), help="output folder (default: build)")
    p.add_argument("--no-train", action="store_true", help="only build and load the data; train no baselines")
    add_logging_options(p)
    p.set_defaults(func=_cmd_quickstart)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue",
        description="nlue: the Nepali Language Understanding Evaluation (NLUE) benchmark on the Hugging Face stack.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nlue {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only, no progress bars")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_own_parser_command(sub, "tasks")  # first in --help: what there is to run
    add_build(sub)
    _add_push(sub)
    _add_hf_commands(sub)
    _add_evaluate(sub)
    _add_space(sub)
    _add_quickstart(sub)
    return parser


def _cmd_push(args: argparse.Namespace) -> int:
    from nlue.publish_cli import run_push

    return run_push(args)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from nlue.training.evaluation import run_evaluation

    tasks = args.task or ["all"]
    summary = run_evaluation(
        args.model, tasks, args.dataset, args.split, args.results_dir or default_results_dir(), args.batch_size,
        args.bootstrap_resamples, args.seed, args.name, show_progress=not args.quiet, overwrite=args.overwrite,
    )  # fmt: skip
    from nlue.data.access import is_sample
    from nlue.data.sample import SAMPLE_DATA_NOTE

    if is_sample(args.dataset):
        print(SAMPLE_DATA_NOTE)
    for task, score in summary["task_scores"].items():
        print(f"{task:<6} {score:.4f}")
    for task, reason in summary["skipped"].items():
        print(f"{task:<6} skipped: {reason.split(';')[0]}")
    if summary["nlue_tasks"]:  # only NLUE's tasks make an NLUE score (a task file's task is scored alone)
        score = summary["score"]
        state = "complete" if summary["complete"] else f"INCOMPLETE, missing: {', '.join(summary['missing'])}"
        print(f"NLUE score: {'-' if score is None else f'{score:.4f}'} ({state}; an nlue convention, not the paper's)")
    return 0


def _cmd_quickstart(args: argparse.Namespace) -> int:
    from nlue.quickstart import run_quickstart

    if args.out.exists() and not args.out.is_dir():
        raise NlueError(f"--out {args.out} is a file; the quickstart needs a folder (it writes nlue/, results/, ...)")
    return run_quickstart(args.out, train=not args.no_train)


# Sub-commands whose arguments are dataclasses parsed by transformers' HfArgumentParser.
HF_ARGUMENT_COMMANDS = ("train", "search")


# Sub-commands with a parser of their own (same backbone): the module whose main(argv) runs them, imported on use.
OWN_PARSER_COMMANDS: dict[str, str] = {
    "tasks": "nlue.tasks_cli",
    "gmet": "nlue.gmet.cli",
    "baseline": "nlue.evals.baseline_cli",
    "mcq": "nlue.pipelines.mcq_cli",
    "export": "nlue.evals.export.cli",
    "translate": "nlue.translate.cli",
    "llm": "nlue.evals.llm.cli",
    "idioms": "nlue.idioms.cli",
    "compare": "nlue.evals.compare.cli",
    "submit": "nlue.evals.submit.cli",
    "report": "nlue.evals.report.cli",
    "sweep": "nlue.evals.sweep.cli",
    "cache": "nlue.cache_cli",
    "contamination": "nlue.evals.contamination.cli",
    "memorisation": "nlue.evals.memorisation.cli",
}


def _own_parser_main(command: str) -> Callable[[Sequence[str]], int]:
    return importlib.import_module(OWN_PARSER_COMMANDS[command]).main


# What `nlue --help` says of the sub-commands whose own parser takes over in main().
OWN_PARSER_HELP: dict[str, str] = {
    "tasks": "print the task registry; check a task file (validate) or start one (new)",
    "train": "fine-tune an encoder on a task (Trainer; presets or LoRA)",
    "search": "grid search with k-fold cross-validation, then train and test",
    "gmet": "zero-shot GMET scoring of a masked LM, and human judging",
    "baseline": "the non-neural baseline (TF-IDF + linear model) on every task",
    "mcq": "curate exam items, draw the demonstration pool, annotate",
    "export": "export the tasks for other tools (lm-evaluation-harness)",
    "translate": "translate English GLUE-format sources into Nepali",
    "llm": "evaluate a language model on the exams and the NLUE tasks (log-likelihood or generation)",
    "idioms": "neDIOM: mine idiom contexts, annotate, draw the few-shot pool, evaluate",
    "compare": "do two or more runs differ? paired tests task by task",
    "submit": "check a run and open a pull request on the Hub's results repo",
    "report": "one HTML page (and Markdown, CSV) of our runs beside the papers' tables",
    "sweep": "run a roster: models x benchmarks x settings, resumable",
    "cache": "the cache of model answers: report what it holds, prune it, import old journals",
    "contamination": "which test items (or their English sources) a pretraining corpus holds: n-gram overlap",
    "memorisation": "has a local causal LM seen the test items? Min-K%++ against shuffled controls, exam completion",
}


def _add_own_parser_command(sub: argparse._SubParsersAction, name: str) -> None:
    """List ``name`` for `nlue --help`; its own parser takes over in main()."""
    if name not in sub.choices:
        sub.add_parser(name, help=f"{OWN_PARSER_HELP[name]}; `nlue {name} --help`")


def _add_hf_commands(sub: argparse._SubParsersAction) -> None:
    for name in OWN_PARSER_HELP:
        _add_own_parser_command(sub, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue` with ``argv``; every sub-command exits through :func:`nlue.cli_support.run_command`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    leading = []  # `nlue -v train ...`: logging flags before the sub-command's name
    while argv and argv[0] in LOGGING_FLAGS:
        leading.append(argv.pop(0))
    if argv and argv[0] in HF_ARGUMENT_COMMANDS:
        from nlue.training.cli import run_hf_command

        return run_hf_command(argv[0], [*leading, *argv[1:]])
    if argv and argv[0] in OWN_PARSER_COMMANDS:  # sub-commands with an argparse parser of their own
        # Their parsers take the logging flags too: those written before the name are handed on, so that
        # logging is set up once, by the sub-command, with every flag seen.
        return _own_parser_main(argv[0])([*leading, *argv[1:]])
    command = argv[0] if argv and not argv[0].startswith("-") else "nlue"
    # The task files the command line names are registered before the parser is built (--tasks
    # topic is checked while parsing); the sub-commands above do the same in their own main().
    return run_with_task_files(command, [*leading, *argv], lambda: _parse_and_run([*leading, *argv]))


def _parse_and_run(argv: Sequence[str]) -> int:
    parser = accept_both_spellings(build_parser())
    parsed = parse_or_exit_code(parser, argv)
    if isinstance(parsed, int):
        return parsed
    configure_logging(parsed.verbose, parsed.quiet)
    return run_command(parsed.command, lambda: parsed.func(parsed))


if __name__ == "__main__":
    sys.exit(main())
