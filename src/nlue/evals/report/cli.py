"""`nlue report [RESULTS ...] --out DIR`: our runs in the papers' tables, beside their rows as printed, as one page.

    nlue report                                   the default results folder into build/report
    nlue report build/results --out build/report
    nlue report build/sweep/tiny build/sweep/mine two sweeps (their results/) on one page
    nlue report runs/ --out site/report --resamples 2000

RESULTS are results folders or sweep folders (build/sweep/<name>, whose results/ is read); with
several, each run is named after its folder (the sweep's name). Only <task>.json files are runs:
a checkpoint's own nlue_results.json and other JSON files are not.

Writes DIR/index.html (one page; its PNG figures beside it), DIR/report.md and one CSV per table,
all at once: a report that fails leaves the earlier one (or nothing), never half a folder. Sections:
NLUE Tables 2-5 and a chart per few runs; neDIOM Table 3 and Figures 3-5; the exams' Table 4,
few-shot deltas, STEM - Humanities gap and accuracy by level; a section per benchmark of tasks from
task files (no paper printed them: every run's metrics with intervals, the task file's primary
metric marked, a bar chart per task; never in the papers' tables or the NLUE score); monolingual vs multilingual encoders
and parameters vs score; paired tests (as `nlue compare`) between the models of each setting of a
task, never between runs of one model (other seeds, inputs, copies); where the results folder holds
them, what `nlue contamination` found (and every run's score on the clean items) and what `nlue
memorisation` measured, both ours. Every row says
whether it holds a paper's numbers (as printed, inconsistent cells flagged) or ours, and a run on
the embedded sample data is called SAMPLE DATA.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from nlue.cli_support import add_logging_options, add_task_file_option, command_parser, run_with_parser
from nlue.evals.compare.pairs import DEFAULT_RESAMPLES
from nlue.results import RESULTS_DIR_HELP, default_results_dir
from nlue.results_folders import FOLDER_HELP

DEFAULT_OUT = Path("build") / "report"


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue report", __doc__)
    parser.add_argument(
        "results", nargs="*", type=Path, metavar="RESULTS", help=f"{FOLDER_HELP} (default: {RESULTS_DIR_HELP})"
    )
    parser.add_argument(
        "--results-dir", nargs="+", type=Path, help="the same as RESULTS, named as the other commands name it"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the report's folder (%(default)s)")
    parser.add_argument(
        "--resamples", type=int, default=DEFAULT_RESAMPLES, help="paired bootstrap draws per test (%(default)s)"
    )
    parser.add_argument("--seed", type=int, default=0, help="paired bootstrap seed (%(default)s, as nlue compare)")
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="Holm-corrected p below which a matrix cell is coloured (%(default)s)"
    )
    add_task_file_option(parser)  # registered by the backbone before this parser is built
    add_logging_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from nlue.errors import NlueError
    from nlue.evals.report.build import ReportOptions, build_report
    from nlue.evals.report.render import write_report
    from nlue.results_tasks import results_task_files

    if args.resamples < 1 or not 0 < args.alpha < 1:
        raise NlueError("--resamples must be at least 1 and --alpha between 0 and 1")
    if args.results and args.results_dir and args.results != args.results_dir:
        raise NlueError(f"RESULTS {' '.join(map(str, args.results))} and --results-dir "
                        f"{' '.join(map(str, args.results_dir))} differ: give one")  # fmt: skip
    started = time.perf_counter()
    results = args.results or args.results_dir or [default_results_dir()]
    with results_task_files(results):  # the user tasks of runs whose datasets carry their task files
        report = build_report(results, ReportOptions(args.resamples, args.seed, args.alpha))
        paths = write_report(report, args.out)
    tables = sum(len(s.tables) for s in report.sections)
    charts = sum(len(s.charts) for s in report.sections)
    print(f"report: {paths[0]} ({tables} tables, {charts} figures, {report.total_files} results files; "
          f"{time.perf_counter() - started:.1f} s)")  # fmt: skip
    print(f"        {args.out / 'report.md'}, and one CSV per table beside it")
    for section in report.sections:
        if section.empty:
            print(f"  {section.title}: {section.empty}")
    if report.sample:
        print(f"SAMPLE DATA: {report.sample_files} of {report.total_files} results files were scored on the embedded "
              "sample; their numbers say nothing about a model")  # fmt: skip
    if report.skipped:
        print(f"{len(report.skipped)} results files left out (listed on the page)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue report` with ``argv`` (without the `report` word); return the exit status."""
    return run_with_parser("report", build_parser, argv, run)  # built once the command's task files are registered
