"""`nlue gmet`: zero-shot GMET scoring of a masked LM, and re-scoring from native speakers' judgments.

The `nlue` command hands ``nlue gmet ...`` arguments to :func:`main`.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.errors import NlueError

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
        default=Path("results"),
        metavar="DIR",
        help="shared results folder (default: results)",
    )
    out.add_argument("--no-results", action="store_true", help="do not write the shared results file")
    out.add_argument("--name", help="model name in the results folder (default: derived from --model or run.json)")
    out.add_argument(
        "--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples for CIs; 0 = none (default: 1000)"
    )
    out.add_argument("--seed", type=int, default=42, metavar="N", help="bootstrap seed (default: 42)")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    out.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue gmet` with ``argv`` (without the `gmet` word); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
        )
    try:
        if args.model is not None:
            return run_model(args)
        if args.sheet is not None:
            return run_sheet(args)
        return run_judgments(args)
    except (NlueError, ValueError) as exc:
        print(f"nlue gmet: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"nlue gmet: error: {exc.name or exc} is not installed; pip install 'nlue[train,plots]'", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"nlue gmet: error: {exc}", file=sys.stderr)
        return 1


def _check_positive(args: argparse.Namespace) -> None:
    for name in ("top_k", "max_pieces", "batch_size"):
        if getattr(args, name) < 1:
            raise NlueError(f"--{name.replace('_', '-')} must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise NlueError("--limit must be at least 1")
    if args.bootstrap < 0:
        raise NlueError("--bootstrap must be 0 (no CIs) or more")


def run_model(args: argparse.Namespace) -> int:
    from nlue.gmet.evaluate import ANSWER_RANKED, dataset_info, evaluate, make_predictor, write_run
    from nlue.gmet.items import load_items
    from nlue.results import model_slug

    _check_positive(args)
    items = load_items(args.dataset, args.split, args.limit)
    options = {
        "top_k": args.top_k,
        "max_pieces": args.max_pieces,
        "length_alpha": args.length_alpha,
        "answer_candidates": args.answer_ranked_diagnostic,
        "batch_size": args.batch_size,
        "device": args.device,
        "show_progress": not args.quiet,
    }
    predictor = make_predictor(args.model, **options)
    run = evaluate(
        predictor,
        items,
        dataset_info(args.dataset, args.split, len(items), args.limit),
        bootstrap_resamples=args.bootstrap,
        seed=args.seed,
    )
    name = args.name or model_slug(args.model)
    if run.is_diagnostic:  # a folder of its own: a diagnostic never stands in for the model's GMET score
        name = f"{name}__{ANSWER_RANKED}-diagnostic"
    out = args.out or Path("runs") / "gmet" / name
    paths = write_run(
        run,
        out,
        results_dir=None if args.no_results else args.results_dir,
        name=name,
        sheet_seed=args.sheet_seed,
        sheet_reference=args.sheet_reference,
    )
    label = "DIAGNOSTIC (answer-ranked), not a GMET score: " if run.is_diagnostic else ""
    if run.verdicts is None:
        print(f"{label}GMET {run.model} ({run.kind}), {len(items)} items: predictions written, no automatic score")
        for note in run.notes:
            print(f"  note: {note}")
    else:
        title = f"{label}GMET {run.model} ({run.kind}), {len(items)} items, automatic verdicts (exact match with the "
        _print_scores(title + "listed answers; not comparable with human-judged scores)", run.metrics, run.notes)
    _print_paths(paths)
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


def _sheet_keys(args: argparse.Namespace, run_dir: Path) -> dict[str, list[int]] | None:
    """The run's sheet keys (key -> item ids), when the run has a sheet key or --sheet-key names one."""
    from nlue.gmet.sheet import KEY_NAME, read_key

    path = args.sheet_key or run_dir / "judging" / KEY_NAME
    if args.sheet_key is None and not path.is_file():
        return None  # an older run: judges filled copies of predictions.csv, keyed by id
    key = read_key(path)
    if key.reference_shown:
        logger.warning("%s: the judges' sheet showed the listed answers (not blind)", path)
    return key.keys_of(key.run_label(run_dir))


def run_judgments(args: argparse.Namespace) -> int:
    from nlue.gmet.evaluate import ANSWER_RANKED, DIAGNOSTIC_KIND, GmetRun, write_run
    from nlue.gmet.items import GmetItem, ItemPrediction
    from nlue.gmet.judging import read_rows, reference_items, write_table
    from nlue.gmet.verdicts import combine_judgments
    from nlue.results import model_slug

    if args.bootstrap < 0:
        raise NlueError("--bootstrap must be 0 (no CIs) or more")
    need_automatic = args.ties == "automatic"
    meta: dict[str, Any] = {}
    sheet_keys = None
    if args.run is not None:
        run_dir = args.run if args.run.is_dir() else args.run.parent
        listing = run_dir / "predictions.jsonl"
        if not listing.is_file():
            raise NlueError(f"{run_dir}: no predictions.jsonl; --run takes the output folder of `nlue gmet --model`")
        if (run_dir / "run.json").is_file():
            meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        # A run whose items list no answers has no automatic verdicts to break ties with.
        need_automatic = need_automatic and meta.get("verdicts", "automatic") is not None
        items = reference_items(listing, need_automatic=need_automatic)
        sheet_keys = _sheet_keys(args, run_dir)
    else:
        columns = set().union(*(record.keys() for _, record in read_rows(args.judgments[0])))
        if "key" in columns and "id" not in columns:
            raise NlueError(
                f"{args.judgments[0]} is a copy of a blind sheet: give --run (the scored run's folder, whose "
                "judging/sheet_key.json maps the sheet's keys back to its items)"
            )
        items = reference_items(args.judgments[0], need_automatic=need_automatic)
    outcome = combine_judgments(
        args.judgments,
        items,
        tie_rule=args.ties,
        bootstrap_resamples=args.bootstrap,
        seed=args.seed,
        sheet_keys=sheet_keys,
    )
    model = args.name or meta.get("model")
    kind = meta.get("kind") or ("baseline" if str(model or "").startswith("baseline:") else "zero-shot")
    results_name = args.name
    if kind == DIAGNOSTIC_KIND and model and not results_name:
        results_name = f"{model_slug(str(model))}__{ANSWER_RANKED}-diagnostic"
    judges = ", ".join(outcome.judges)
    source = f"human: majority of {len(outcome.judges)} judge(s) ({judges}); ties -> {args.ties}"
    run = GmetRun(
        model=str(model or "unknown model"),
        kind=kind,
        items=[GmetItem(i.id, i.sentence, i.category, i.theme, i.answers) for i in items],
        predictions=[ItemPrediction(i.id, [i.prediction] if i.prediction else [], [0.0]) for i in items],
        verdicts=[int(v) for v in outcome.majority],
        metrics=outcome.metrics,
        dataset=dict(meta.get("dataset") or {"config": "gmet"}),
        settings={
            **dict(meta.get("settings") or {}),
            "judging": {
                "judges": outcome.judges,
                "tie_rule": args.ties,
                "agreement": outcome.agreement,
                "automatic_metrics": _automatic_metrics(meta),
            },
        },
        verdict_source=source,
        notes=list(meta.get("notes") or []),
        seed=args.seed,
    )
    out = args.out or ((args.run if args.run and args.run.is_dir() else Path("runs") / "gmet") / "judged")
    write_results = not args.no_results and model is not None
    if not args.no_results and model is None:
        logger.warning(
            "no results file written: give --run (with its run.json) or --name to say which model was judged"
        )
    results_dir = args.results_dir if write_results else None
    paths = write_run(run, out, results_dir=results_dir, name=results_name, judging_files=False)
    rows = []
    for row, item in enumerate(items):
        rows.append(
            {
                "id": item.id,
                "category": item.category,
                "theme": item.theme,
                "sentence": item.sentence,
                "prediction": item.prediction,
                "answers": list(item.answers),
                "automatic": "" if item.automatic is None else item.automatic,
                **{name: int(outcome.ratings[row, j]) for j, name in enumerate(outcome.judges)},
                "majority": int(outcome.majority[row]),
                "tie": int(item.id in set(outcome.ties)),
            }
        )
    base = ["id", "category", "theme", "sentence", "prediction", "answers", "automatic"]
    paths["judged"] = write_table(out / "judged.csv", rows, [*base, *outcome.judges, "majority", "tie"])
    dis_columns = ["id", "category", "sentence", "prediction", *outcome.judges, "majority", "tie", "automatic"]
    paths["disagreements"] = write_table(out / "disagreements.csv", outcome.disagreements, dis_columns)
    from nlue.results import write_json_atomic

    paths["judging"] = write_json_atomic(out / "judging.json", outcome.summary())
    stats = outcome.agreement
    print(f"judges: {judges}")
    if stats["statistic"]:
        kappa = "undefined (every verdict the same)" if stats["kappa"] is None else f"{stats['kappa']:.4f}"
        label = "Cohen's kappa" if stats["statistic"] == "cohen_kappa" else "Fleiss' kappa"
        print(f"agreement: {label} = {kappa}; unanimous on {stats['unanimous']:.1%} of {len(items)} items")
    print(f"disagreements: {len(outcome.disagreements)} item(s); ties: {len(outcome.ties)} (-> {args.ties})")
    auto = outcome.automatic_agreement
    if auto["same_verdict"] is not None:
        kappa = "undefined" if auto["kappa"] is None else f"{auto['kappa']:.4f}"
        print(f"majority vs automatic verdict: same on {auto['same_verdict']:.1%} of items, Cohen's kappa = {kappa}")
    _print_scores(
        f"GMET {run.model}, {len(items)} items, human verdicts (majority of native speakers, as in the paper)",
        outcome.metrics,
        [],
    )
    _print_paths(paths)
    return 0


def _automatic_metrics(meta: dict[str, Any]) -> dict[str, float] | None:
    """The automatic A, E, C of the judged run, from its run.json, for comparison."""
    metrics = meta.get("metrics") or {}
    picked = {k: metrics[k] for k in ("accuracy", "equality", "combined") if isinstance(metrics.get(k), float | int)}
    return picked or None


def _print_scores(title: str, metrics: dict[str, Any], notes: Sequence[str]) -> None:
    from nlue.gmet.report import headline

    print(title)
    print(f"  {headline(metrics)}")
    if "sigma" in metrics:
        print(f"  sigma of the category accuracies = {metrics['sigma']:.4f}")
    for note in notes:
        print(f"  note: {note}")


def _print_paths(paths: dict[str, Path]) -> None:
    for key, path in paths.items():
        print(f"  {key:>15}: {path}")


if __name__ == "__main__":
    sys.exit(main())
