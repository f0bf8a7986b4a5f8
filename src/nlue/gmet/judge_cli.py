"""`nlue gmet --judgments`: native speakers' verdicts back into a run, as human-judged GMET scores.

The parser is :func:`nlue.gmet.cli.build_parser`'s; this module is the judging path of the command.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.gmet.console import print_paths, print_scores

logger = logging.getLogger("nlue.gmet")


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
    from nlue.gmet.evaluate import ANSWER_RANKED, DIAGNOSTIC_KIND, GmetRun, item_rows, write_run
    from nlue.gmet.items import GmetItem, ItemPrediction
    from nlue.gmet.judging import read_rows, reference_items, write_table
    from nlue.gmet.verdicts import combine_judgments
    from nlue.lm.slug import model_slug
    from nlue.results import default_results_dir

    if args.bootstrap_resamples < 0:
        raise NlueError("--bootstrap-resamples must be 0 (no CIs) or more")
    need_automatic = args.ties == "automatic"
    meta: dict[str, Any] = {}
    sheet_keys = None
    run_dir: Path | None = None
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
        bootstrap_resamples=args.bootstrap_resamples,
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
    # By default the human-judged results sit beside the automatic ones, in the one default results folder.
    results_dir = (args.results_dir or default_results_dir()) if write_results else None
    paths = write_run(run, out, results_dir=results_dir, name=results_name, judging_files=False)
    ties = set(outcome.ties)
    rows = item_rows(
        run,
        automatic=[item.automatic for item in items],
        extra=[
            {
                **{name: int(outcome.ratings[row, j]) for j, name in enumerate(outcome.judges)},
                "majority": int(outcome.majority[row]),
                "tie": int(item.id in ties),
            }
            for row, item in enumerate(items)
        ],
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
    print_scores(
        f"GMET {run.model}, {len(items)} items, human verdicts (majority of native speakers, as in the paper)",
        outcome.metrics,
        [],
    )
    print_paths(paths)
    return 0


def _automatic_metrics(meta: dict[str, Any]) -> dict[str, float] | None:
    """The automatic A, E, C of the judged run, from its run.json, for comparison."""
    metrics = meta.get("metrics") or {}
    picked = {k: metrics[k] for k in ("accuracy", "equality", "combined") if isinstance(metrics.get(k), float | int)}
    return picked or None
