"""`nlue submit RUN --repo-id <org>/<repo> --release <dataset>`: check a run, then open a pull request with it.

    nlue submit build/results/xlmr-base --repo-id my-org/nlue-results --release my-org/nlue --dry-run
    nlue submit xlmr-base --repo-id my-org/nlue-results --release my-org/nlue

RUN is a run folder (or its name in the results folder). Everything is checked before anything is
sent (see :mod:`nlue.evals.submit.submission`), every score recomputed from the run's per-item predictions
against the release's gold answers; the token comes from HF_TOKEN or `hf auth login` and is never
printed. --dry-run prints exactly the files (each one's local path and its path in the repo) and the
pull request's text.

Each checked score can also be written for the model's own repo, as the Hub's evaluation results
(`.eval_results/<name>.yaml`: the benchmark named by --release, the task, the results file's own
primary score): the command lists them, and --eval-results-pr opens a pull request on each model repo
with them (a Hub model id only; --release a Hub id only).

The release (--release) is the published dataset the run must have scored in full: the Hub id, or a
local folder, of the dataset repo `nlue build` made (`nlue build --source raw/ --out build`, then
`nlue push build/nlue --repo-id my-org/nlue`). A task of your own (a task file) is its own release, the
build of its task file: give both (--release my-org/nlue my-org/my-task), each task is checked against
the first that holds it.

The run's contamination findings (`nlue contamination`) and memorisation files (`nlue memorisation`) in the
results folder beside it go too, to the same place in the repo, so that the Space shows its clean scores and
probes: each read by its checked reader and joined to the run's items first (a file of the run's task or
model that is refused, or holds other items, stops the submission with the reason); --without-findings
leaves them out.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nlue.cli_lists import add_name_list
from nlue.cli_support import add_logging_options, add_task_file_option, command_parser, run_with_parser
from nlue.errors import NlueError
from nlue.evals.submit.submission import (
    RELEASE_HELP,
    check_run,
    model_repo_results,
    open_eval_results_prs,
    open_pull_request,
)
from nlue.results import RESULTS_DIR_HELP, default_results_dir
from nlue.text.safe import terminal_safe


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue submit", __doc__)
    parser.add_argument("run", metavar="RUN", help="a run folder, or its name in the results folder")
    parser.add_argument("--repo-id", required=True, help="the results repo on the Hub (a dataset repo): owner/name")
    add_name_list(parser, "--release", what="release",
                  help="the released dataset the run must have scored in full (its gold answers score the run "
                       "again): a Hub id or a folder that `nlue build` made; several (NLUE's and your own task's "
                       "build), each task checked against the first that holds it")  # fmt: skip
    parser.add_argument("--results-dir", type=Path, help=RESULTS_DIR_HELP + "; where a RUN given by name is found")
    parser.add_argument("--dry-run", action="store_true", help="print the files and the pull request; send nothing")
    parser.add_argument("--without-findings", action="store_true",
                        help="leave out the run's contamination findings and memorisation files (by default carried "
                             "from the results folder beside the run, each checked first)")  # fmt: skip
    parser.add_argument("--eval-results-pr", action="store_true",
                        help="also open a pull request on each scored model's repo adding its checked scores as the "
                             "Hub's evaluation results (.eval_results/)")  # fmt: skip
    add_task_file_option(parser)  # registered by the backbone before this parser is built
    add_logging_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    if not args.release:
        raise NlueError(f"nlue submit needs --release: {RELEASE_HELP}.")
    folder = Path(args.run)
    results_dir = args.results_dir or default_results_dir()
    if not folder.is_dir() and (results_dir / args.run).is_dir():
        folder = results_dir / args.run
    from nlue.registry.task_file.activate import activated_task_files

    # Every release's carried task files (the backbone reads the first --release only): NLUE's and your task's build.
    with activated_task_files(datasets=args.release):
        return _submit(args, folder)


def _submit(args: argparse.Namespace, folder: Path) -> int:
    submission = check_run(folder, args.release, trust_files=not args.without_findings)
    print(f"{folder}: {len(submission.rows)} results checked; the pull request on {args.repo_id} (dataset repo) adds:")
    for path, local, size in submission.files:
        print(f"  {terminal_safe(path)}  <- {terminal_safe(local.resolve())}  ({size:,} bytes)")
    print(f"\ntitle: {terminal_safe(submission.title)}\n\n{terminal_safe(submission.description(), None)}\n")
    planned = model_repo_results(submission, args.release[0], args.repo_id)
    sent = "" if args.eval_results_pr else " (a pull request on each with --eval-results-pr)"
    print(f"the Hub's evaluation results for the model repos{sent}:")
    for item in planned:
        shown = item.file.summary() if item.file is not None else f"none: {item.reason}"
        print(f"  {terminal_safe(item.model, 200)} ({item.task}): {terminal_safe(shown, 600)}")
    print()
    url = open_pull_request(submission, args.repo_id, args.dry_run)
    print("dry run: nothing was sent" if url is None else f"pull request: {url}")
    for pr in open_eval_results_prs(planned, args.dry_run or not args.eval_results_pr):
        print(f"evaluation results pull request: {pr}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue submit` with ``argv`` (without the `submit` word); return the exit status."""
    return run_with_parser("submit", build_parser, argv, run)  # built once the command's task files are registered
