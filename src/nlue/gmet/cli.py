"""`nlue gmet`: zero-shot GMET scoring of a masked LM, and re-scoring from native speakers' judgments.

The `nlue` command hands ``nlue gmet ...`` arguments to :func:`main`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_support import run_with_parser
from nlue.errors import NlueError
from nlue.gmet.console import print_paths, print_scores
from nlue.results import OVERWRITE_HELP

logger = logging.getLogger("nlue.gmet")

DESCRIPTION = """\
Score a masked language model on GMET (the General Masked Evaluation Task) without
fine-tuning, export blind sheets for native speakers, and recompute the scores from
their judgments.

With --model, every item's [MASK] is filled with whole words the model proposes itself
(its top single tokens and greedy multi-piece completions), ranked by left-to-right
pseudo-log-likelihood averaged per piece. The model never sees the item's listed
answers. The top-1 word is correct *automatically* when it equals a listed answer
after normalize_answer. Reported: accuracy A, equality E = exp(-sigma of the category
accuracies) and combined score C = A * E (paper appendix F.2), with bootstrap CIs.
Automatic verdicts are not the paper's: its GMET numbers are native speakers'
verdicts, and a right word that the list lacks counts as wrong here.

Each run also writes a blind judging sheet (judging/sheet.csv: the sentence and the
model's word only, shuffled) and its private key (judging/sheet_key.json). With
--sheet, one blind sheet covers several runs (a word proposed by several models is
one row; model names never appear).

With --judgments, the judges' copies of the sheet (the `judgment` column filled in:
1 = the word fits, 0 = it does not) are checked, the majority verdict is taken,
agreement is reported (Cohen's kappa for two judges, Fleiss' kappa for more), and A,
E and C are recomputed from the majority: human verdicts, comparable with the paper."""

EPILOG = """\
models:
  a fill-mask checkpoint (Hub id or local folder: BERT, RoBERTa, XLM-R, DeBERTa, ...)
  or a baseline that needs no download, trained on the embedded sample data:
  baseline:unigram, baseline:bigram, baseline:tiny-mlm

outputs (in --out):
  predictions.csv / .jsonl   the run's record: one row per item, with listed answers and automatic verdict
  judging/sheet.csv          the blind sheet for judges; judging/sheet_key.json maps it back (keep it private)
  categories.csv / .md       per-category and per-theme accuracy
  gmet_categories.png        bar chart of the 75 categories by thematic area
  run.json                   settings, dataset, metrics; --run reads it back when judging
  and <results-dir>/<model>/gmet.json, the results file the leaderboard reads

diagnostic:
  --answer-ranked-diagnostic also ranks each item's listed answers, which hands the model
  words it did not propose. Its results are labelled DIAGNOSTIC (kind "diagnostic", a
  results folder <model>__answer-ranked-diagnostic) and never enter the NLUE score.

examples:
  nlue gmet --model baseline:bigram                       the offline baseline on the sample
  nlue gmet --model IRIISNEPAL/RoBERTa_Nepali_110M --dataset me/nlue --out runs/gmet/roberta
  nlue gmet --sheet runs/gmet/roberta runs/gmet/xlmr --out runs/gmet/sheet   one blind sheet, two runs
  nlue gmet --judgments ana.csv bikash.csv --run runs/gmet/roberta
  nlue gmet --judgments a.csv b.csv --run runs/gmet/xlmr --sheet-key runs/gmet/sheet/sheet_key.json
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue gmet",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", metavar="MODEL", help="fill-mask checkpoint (Hub id or path) or baseline:NAME")
    what.add_argument(
        "--judgments",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="judges' copies of the sheet (CSV, TSV or JSONL with `key` and `judgment` 0/1); one or more",
    )
    what.add_argument(
        "--sheet",
        nargs="+",
        type=Path,
        metavar="RUN",
        help="output folders of scored runs: write one blind sheet covering all of them to --out",
    )
    data = parser.add_argument_group("data (with --model)")
    data.add_argument(
        "--dataset",
        metavar="ID_OR_PATH",
        help="built NLUE dataset: Hub id or local path (default: the embedded sample)",
    )
    data.add_argument("--split", default="test", metavar="NAME", help="split to score (default: test)")
    data.add_argument("--limit", type=int, metavar="N", help="score only the first N items (a quick try)")
    scoring = parser.add_argument_group("scoring (with --model)")
    scoring.add_argument(
        "--top-k", type=int, default=10, metavar="K", help="whole-word predictions kept per item (default: 10)"
    )
    scoring.add_argument(
        "--max-pieces",
        type=int,
        default=3,
        metavar="N",
        help="longest greedy multi-piece completion the model proposes, in pieces (default: 3); "
        "acceptable answers are scored whatever their length",
    )
    scoring.add_argument(
        "--length-alpha",
        type=float,
        default=1.0,
        metavar="ALPHA",
        help="rank by PLL / pieces**alpha: 1 = mean log-probability per piece (default), 0 = raw sum",
    )
    scoring.add_argument(
        "--answer-ranked-diagnostic",
        action="store_true",
        help="DIAGNOSTIC, not a GMET score: also rank each item's listed answers beside the model's own words "
        "(results labelled as a diagnostic, kept out of the NLUE score)",
    )
    # The model's own proposals are the default now; the old switch is accepted so scripts keep running.
    scoring.add_argument("--no-answer-candidates", action="store_true", help=argparse.SUPPRESS)
    scoring.add_argument(
        "--batch-size", type=int, default=64, metavar="N", help="sequences per forward pass (default: 64)"
    )
    scoring.add_argument(
        "--device", default="auto", metavar="DEVICE", help="torch device: auto (cuda when available), cpu, cuda:0, ..."
    )
    judging = parser.add_argument_group("judging (with --judgments, --sheet)")
    judging.add_argument(
        "--run",
        type=Path,
        metavar="DIR",
        help="the output folder of the scored run: its predictions.jsonl lists the items, its run.json names "
        "the model and its judging/sheet_key.json maps the sheet back (needed for sheets)",
    )
    judging.add_argument(
        "--sheet-key",
        type=Path,
        metavar="FILE",
        help="sheet_key.json of a sheet shared by several runs (default: <run>/judging/sheet_key.json)",
    )
    judging.add_argument(
        "--sheet-seed", type=int, default=42, metavar="N", help="seed of the sheet's row order (default: 42)"
    )
    judging.add_argument(
        "--sheet-reference",
        action="store_true",
        help="add the listed answers to the sheet in a `reference` column (then the sheet is not blind)",
    )
    judging.add_argument(
        "--ties",
        choices=("automatic", "zero", "one"),
        default="automatic",
        help="verdict of an evenly split item: the automatic verdict (default), 0 or 1",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output folder (default: runs/gmet/<model> for --model; <run>/judged or runs/gmet/judged for "
        "--judgments; required with --sheet)",
    )
    out.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="shared results folder the leaderboard reads (default: $NLUE_RESULTS_DIR, else build/results, "
        "the folder `nlue space` reads; judged and automatic results sit side by side there)",
    )
    out.add_argument("--no-results", action="store_true", help="do not write the shared results file")
    out.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    out.add_argument(
        "--name",
        "--results-name",
        dest="name",
        help="model name in the results folder (default: derived from --model or run.json)",
    )
    out.add_argument(
        "--bootstrap-resamples",
        "--bootstrap",
        dest="bootstrap_resamples",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap resamples for 95%% intervals; 0 = none (default: 1000; --bootstrap is the older name)",
    )
    out.add_argument("--seed", type=int, default=42, metavar="N", help="bootstrap seed (default: 42)")
    out.add_argument("-q", "--quiet", action="store_true", help="no progress bar; warnings and errors only")
    out.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue gmet` with ``argv`` (without the `gmet` word); return the exit status."""

    def action(args: argparse.Namespace) -> int:
        if args.model is not None:
            return run_model(args)
        if args.sheet is not None:
            return run_sheet(args)
        from nlue.gmet.judge_cli import run_judgments

        return run_judgments(args)

    return run_with_parser("gmet", build_parser(), argv, action)


def _check_positive(args: argparse.Namespace) -> None:
    for name in ("top_k", "max_pieces", "batch_size"):
        if getattr(args, name) < 1:
            raise NlueError(f"--{name.replace('_', '-')} must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise NlueError("--limit must be at least 1")
    if args.bootstrap_resamples < 0:
        raise NlueError("--bootstrap-resamples must be 0 (no CIs) or more")


def _identity(args: argparse.Namespace, everything: Sequence[Any], scored: int, options: dict[str, Any]) -> dict:
    """The run's identity (:mod:`nlue.run_identity`): the model, its fingerprint, the items, what changes scores."""
    from nlue.run_identity import local_model, run_identity, split_facts

    mode = "answer-ranked diagnostic" if args.answer_ranked_diagnostic else "fill-mask"
    settings = {k: options[k] for k in ("top_k", "max_pieces", "length_alpha")}
    return run_identity("gmet", local_model(args.model, "fill-mask"), split_facts(everything, scored), mode=mode,
                        limit=args.limit, seed=args.seed, split=args.split,
                        settings={**settings, "bootstrap_resamples": args.bootstrap_resamples})  # fmt: skip


def run_model(args: argparse.Namespace) -> int:
    from nlue.gmet.evaluate import ANSWER_RANKED, dataset_info, evaluate, make_predictor, write_run
    from nlue.gmet.items import load_items
    from nlue.lm.slug import model_slug
    from nlue.results import check_replace, default_results_dir, task_result_path
    from nlue.run_identity import limit_suffix

    _check_positive(args)
    everything = load_items(args.dataset, args.split)
    items = everything[: args.limit] if args.limit else everything
    options = {
        "top_k": args.top_k,
        "max_pieces": args.max_pieces,
        "length_alpha": args.length_alpha,
        "answer_candidates": args.answer_ranked_diagnostic,
        "batch_size": args.batch_size,
        "device": args.device,
        "show_progress": not args.quiet,
    }
    identity = _identity(args, everything, len(items), options)
    name = (args.name or model_slug(args.model)) + limit_suffix(args.limit)  # a partial run: a folder of its own
    if args.answer_ranked_diagnostic:  # a folder of its own: a diagnostic never stands in for the model's GMET score
        name = f"{name}__{ANSWER_RANKED}-diagnostic"
    results_dir = None if args.no_results else (args.results_dir or default_results_dir())
    if results_dir is not None:
        check_replace(task_result_path(results_dir, name, "gmet"), identity, overwrite=args.overwrite)
    predictor = make_predictor(args.model, **options)
    run = evaluate(
        predictor,
        items,
        dataset_info(args.dataset, args.split, len(items), args.limit),
        bootstrap_resamples=args.bootstrap_resamples,
        seed=args.seed,
    )
    out = args.out or Path("runs") / "gmet" / name
    paths = write_run(
        run,
        out,
        results_dir=results_dir,
        name=name,
        sheet_seed=args.sheet_seed,
        sheet_reference=args.sheet_reference,
        identity=identity,
        overwrite=args.overwrite,
    )
    label = "DIAGNOSTIC (answer-ranked), not a GMET score: " if run.is_diagnostic else ""
    if run.verdicts is None:
        print(f"{label}GMET {run.model} ({run.kind}), {len(items)} items: predictions written, no automatic score")
        for note in run.notes:
            print(f"  note: {note}")
    else:
        title = f"{label}GMET {run.model} ({run.kind}), {len(items)} items, automatic verdicts (exact match with the "
        print_scores(title + "listed answers; not comparable with human-judged scores)", run.metrics, run.notes)
    print_paths(paths)
    return 0


def run_sheet(args: argparse.Namespace) -> int:
    from nlue.gmet.sheet import runs_from_folders, write_sheet

    if args.out is None:
        raise NlueError("--sheet needs --out: the folder that receives sheet.csv and sheet_key.json")
    runs = runs_from_folders(args.sheet)
    sheet, key = write_sheet(runs, args.out, seed=args.sheet_seed, reference=args.sheet_reference)
    rows = sum(1 for _ in sheet.open(encoding="utf-8-sig")) - 1
    items = sum(len(run.items) for run in runs)
    print(f"blind sheet: {rows} rows for {items} items of {len(runs)} run(s) (shared words judged once)")
    print(f"  give the judges: {sheet}")
    print(f"  keep private:    {key}")
    print("  then, per run:   nlue gmet --judgments <judge files> --run <run folder> --sheet-key " + str(key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
