"""`nlue push FOLDER --repo-id owner/name`: what is uploaded, what the Hub will read of it, then the upload.

Every file and its size; then what the files the Hub reads besides the card say, read back and
checked (:mod:`nlue.data.publish`): a dataset repo's ``eval.yaml`` (its tasks, each a leaderboard)
and a model repo's ``.eval_results/`` entries. For a dataset, which configs lm-evaluation-harness
runs as well (``nlue export lm-eval``): eval.yaml names one evaluation framework, so not there.
``--dry-run`` adds the card's YAML header and uploads nothing. Before anything is shown or sent, the task
files a build carries (``tasks/``, which whoever loads the dataset will read) are checked as
``nlue tasks validate`` checks them: one edited by hand since the build, or broken, stops the push with
every problem of every file (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nlue.text.safe import terminal_safe


def lm_eval_note(folder: Path, repo_id: str) -> str:
    """Which of a built dataset's configs `nlue export lm-eval` writes tasks for."""
    from nlue.data.hub_benchmark import card_configs
    from nlue.errors import NlueError
    from nlue.evals.export.lm_eval import exportable
    from nlue.registry.tasks import TASKS

    try:
        configs = card_configs(folder)
    except NlueError as exc:  # a card nlue did not write; the upload itself does not depend on it
        return f"lm-evaluation-harness: not known ({exc})"
    covered = [name for name in configs if name in TASKS and exportable(TASKS[name])]
    if not covered:
        return "lm-evaluation-harness: `nlue export lm-eval` exports none of these configs"
    return (
        f"lm-evaluation-harness runs {', '.join(covered)} as well "
        f"(`nlue export lm-eval --dataset {terminal_safe(repo_id, 200)} --out DIR`); eval.yaml names one "
        "evaluation framework, so it is not listed there"
    )


def check_carried_task_files(folder: Path) -> int:
    """Check every task file ``folder/tasks/`` carries; a TaskFileError listing every problem of every file (each
    once: a benchmark header's listed files are checked with it too). Returns how many files were checked."""
    from nlue.registry.task_file.carry import CARRIED_FOLDER
    from nlue.registry.task_file.load import SUFFIXES, check_file
    from nlue.registry.task_file.problems import Problem, TaskFileError

    carried = folder / CARRIED_FOLDER
    if not carried.is_dir():
        return 0
    paths = sorted(path for path in carried.iterdir() if path.is_file() and path.suffix.lower() in SUFFIXES)
    problems: list[Problem] = []
    for path in paths:
        problems += [problem for problem in check_file(path) if problem not in problems]
    if problems:
        raise TaskFileError(problems)
    return len(paths)


def run_push(args: argparse.Namespace) -> int:
    from nlue.data.publish import plan_upload, push_folder

    checked = check_carried_task_files(args.folder)  # before anything is planned, shown or sent
    plan = plan_upload(args.folder, args.repo_id, args.repo_type, private=args.private)
    print(plan.describe())
    if checked:
        print(f"\ntask files carried (tasks/): {checked}, each checked as `nlue tasks validate` checks it")
    if plan.hub_files:
        print("\n" + "\n".join(plan.hub_files))
    if args.repo_type == "dataset" and (args.folder / "README.md").is_file():
        from nlue.registry.task_file.activate import activated_task_files

        with activated_task_files(datasets=[str(args.folder)]):  # its carried tasks, as whoever loads it knows them
            print("\n" + lm_eval_note(args.folder, args.repo_id))
    if args.dry_run:
        card = (args.folder / "README.md").read_text(encoding="utf-8")
        header = card.split("\n---\n", 1)[0] + "\n---"
        print("\ncard header (README.md):\n" + header)
        print("\ndry run: nothing was uploaded")
        return 0
    url = push_folder(plan, args.commit_message, dry_run=False)
    print(f"uploaded: {url}")
    return 0
