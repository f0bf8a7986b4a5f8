"""`nlue compare RUN RUN [RUN ...]`: do the runs differ, task by task, on the items they were all scored on?

    nlue compare build/results/xlmr-base build/results/muril
    nlue compare build/results/gpt2__en-0shot build/results/gpt2__ne-0shot --tasks sa rte --json gap.json
    nlue compare build/sweep/tiny build/sweep/mine      every two models run the same way in two sweeps

A RUN is a run folder (``<results-dir>/<name>``) or just its name inside the results folder: every
two runs given are compared, as asked. Given results folders or sweep folders (build/sweep/<name>)
instead, their runs are grouped by task, data and setting (mode, shots, prompt language, neDIOM's
input), and every two models in a setting are compared; runs of one model (other seeds, a copy in
another sweep) are not, and runs that gave the same answer on every item are named once.
Each line: the task's primary metric for A and B, the difference A - B with its 95% paired
bootstrap interval and p-value, the exact McNemar test on the items only one run got right, and
both p-values after Holm's correction across the pair's tasks. "differ" means the Holm-corrected
bootstrap p-value is below --alpha. See :mod:`nlue.evals.compare.pairs` for the definitions.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nlue.cli_lists import add_name_list, task_names
from nlue.cli_support import add_logging_options, add_task_file_option, command_parser, run_with_parser
from nlue.errors import NlueError
from nlue.evals.compare.pairs import DEFAULT_RESAMPLES, TaskComparison, compare_runs
from nlue.results import RESULTS_DIR_HELP, default_results_dir, write_json_atomic
from nlue.results_folders import is_sweep_folder
from nlue.text.safe import terminal_safe


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue compare", __doc__)
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="two or more run folders or their names; or results or sweep folders"
    )
    add_name_list(
        parser, "--tasks", valid=task_names(), what="task", help="only these tasks (default: every shared task)"
    )
    parser.add_argument("--results-dir", type=Path, help=RESULTS_DIR_HELP + "; where a RUN given by name is found")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap draws (%(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (%(default)s)")
    parser.add_argument("--alpha", type=float, default=0.05, help="level for 'differ' after Holm (%(default)s)")
    parser.add_argument("--json", type=Path, help="also write every comparison to this JSON file")
    add_task_file_option(parser)  # registered by the backbone before this parser is built
    add_logging_options(parser)
    return parser


def _folder(run: str, results_dir: Path) -> Path:
    path = Path(run)
    return path if path.is_dir() or not (results_dir / run).is_dir() else results_dir / run


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def p_text(value: float | None) -> str:
    """A p-value as the tables print it: three decimals, ``<0.001`` below that, ``-`` when there is none."""
    return "-" if value is None else ("<0.001" if value < 0.001 else f"{value:.3f}")


def table(comparisons: Sequence[TaskComparison], alpha: float) -> str:
    header = ("task", "metric", "A", "B", "A-B", "95% CI", "p", "p Holm", "McNemar p", "Holm", "items", "verdict")
    lines = [header]
    for c in comparisons:
        interval = f"[{_number(c.ci_low, True)}, {_number(c.ci_high, True)}]" if c.ci_low is not None else "-"
        differ = "differ" if c.p_holm is not None and c.p_holm < alpha else "no difference shown"
        lines.append((c.task, c.metric, _number(c.score_a), _number(c.score_b), _number(c.difference, True), interval,
                      p_text(c.p_value), p_text(c.p_holm), p_text(c.mcnemar_p), p_text(c.mcnemar_p_holm), str(c.items), differ))  # fmt: skip
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in lines)


def _is_folder_of_runs(path: Path) -> bool:
    """A results folder or a sweep folder, not a run: no results file of its own, run folders below it."""
    return is_sweep_folder(path) or (path.is_dir() and not any(path.glob("*.json")) and any(path.glob("*/*.json")))


def _grouped(folders: Sequence[Path], tasks: Sequence[str] | None, resamples: int, seed: int):
    """The comparisons of every two models in a setting across ``folders``, and what was not tested."""
    from nlue.evals.run_groups import group_runs, pair_tasks, run_files
    from nlue.results_folders import gather_results, resolve_folders

    found = gather_results(resolve_folders(folders))
    files = [f for f in run_files((r.run, r.path, r.data) for r in found) if not tasks or f.task.split(".")[0] in tasks]
    groups = group_runs(files)
    names = {f.folder: f.run for f in files}
    shown = {(g.task, g.rows[i][0].folder, g.rows[j][0].folder) for g in groups for i, j in g.pairs()}
    comparisons: list[TaskComparison] = []
    for (a, b), shared in pair_tasks(groups).items():
        for c in compare_runs([a, b], shared, resamples, seed):
            if c.task in shared and ({(c.task, a, b), (c.task, b, a)} & shown):  # alike runs: one row, no zeros
                c.run_a, c.run_b = names[a], names[b]
                comparisons.append(c)
    notes = []
    for g in groups:
        for row in (r for r in g.rows if len(r) > 1):
            notes.append(f"{g.title}: the same answer on every item: {', '.join(f.run for f in row)}")
        if len(g.models) == 1 and sum(map(len, g.rows)) > 1:
            notes.append(f"{g.title}: runs of one model ({g.models[0]}), not tested against each other")
    return comparisons, notes


def run(args: argparse.Namespace) -> int:
    results_dir = args.results_dir or default_results_dir()
    folders = [_folder(r, results_dir) for r in args.runs]
    grouped = [_is_folder_of_runs(f) for f in folders]
    notes: list[str] = []
    if any(grouped) and not all(grouped):
        raise NlueError("give run folders (each compared with each), or results and sweep folders (their runs "
                        "compared within each setting), not both")  # fmt: skip
    if all(grouped):
        comparisons, notes = _grouped(folders, args.tasks, args.resamples, args.seed)
    else:
        comparisons = compare_runs(folders, args.tasks, args.resamples, args.seed)
    pairs: dict[tuple[str, str], list[TaskComparison]] = {}
    for c in comparisons:
        pairs.setdefault((c.run_a, c.run_b), []).append(c)
    for (a, b), family in pairs.items():
        print(f"A = {terminal_safe(a)}\nB = {terminal_safe(b)}")
        print(terminal_safe(table(family, args.alpha), limit=None))  # tasks and metrics are the files' words
        print()
    for note in notes:
        print(terminal_safe(note))
    if all(grouped) and not comparisons:
        print("no two models in one setting answered differently: nothing to test")
    print(f"paired bootstrap ({args.resamples} draws) and exact McNemar; Holm's correction across each pair's tasks; "
          f"'differ' at Holm-corrected p < {args.alpha}. The papers report no test of a difference.")  # fmt: skip
    if args.json:
        write_json_atomic(args.json, [c.to_dict() for c in comparisons])
        print(f"written: {args.json}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue compare` with ``argv`` (without the `compare` word); return the exit status."""
    import contextlib
    import sys

    from nlue.results_tasks import results_task_files

    given = list(sys.argv[1:] if argv is None else argv)
    with contextlib.ExitStack() as stack:

        def parser() -> argparse.ArgumentParser:
            # Built once the command's task files are registered, and those carried by the datasets that the runs
            # named on the command line were scored on (so that `--tasks` knows their tasks too).
            probe = argparse.ArgumentParser(add_help=False, exit_on_error=False)
            probe.add_argument("runs", nargs="*")
            probe.add_argument("--results-dir", type=Path)
            try:
                named, _ = probe.parse_known_args(given)
            except (argparse.ArgumentError, SystemExit):  # the real parser says what is wrong
                return build_parser()
            results_dir = named.results_dir or default_results_dir()
            stack.enter_context(results_task_files(_folder(run, results_dir) for run in named.runs))
            return build_parser()

        return run_with_parser("compare", parser, given, run)
