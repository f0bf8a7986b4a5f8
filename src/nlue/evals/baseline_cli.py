"""`nlue baseline`: the non-neural baseline ``baseline:tfidf`` (:mod:`nlue.lm.baselines.tfidf`) on every task.

For each task: fit on train (C or alpha chosen on validation, refitted on train + validation),
predict the test split once, score it with 95% intervals, and write one line per test item
(``<results-dir>/<name>/<task>.predictions.jsonl``) and then the shared results file.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from nlue import cli_support
from nlue.cli_lists import add_name_list, split_names, task_names
from nlue.cli_support import add_task_file_option
from nlue.data.access import is_sample, load_task, resolve_dataset
from nlue.errors import NlueError
from nlue.lm.backends import BASELINE_CLASSIFIER
from nlue.lm.baselines.tfidf import DEFAULT_NAME, MODEL_ID, NOTES
from nlue.lm.factory import load_model
from nlue.lm.spec import ModelSpec
from nlue.predictions import attach, prediction_rows
from nlue.registry.tasks import TASK_NAMES, TASKS, TaskSpec, get_task
from nlue.results import (
    OVERWRITE_HELP,
    RESULTS_DIR_HELP,
    RunResult,
    check_replace,
    default_results_dir,
    task_result_path,
    write_result,
)
from nlue.run_identity import local_model, run_identity, split_facts
from nlue.scores import score_task
from nlue.text_table import text_table

logger = logging.getLogger(__name__)


def resolve_tasks(tasks: str | Sequence[str] | None) -> list[TaskSpec]:
    """``"all"`` or None (every trainable NLUE task), ``"sa,mnli"`` or a list of names; unknown names raise NlueError."""
    names = split_names(tasks or [])
    if names in (["all"], []):
        names = [n for n in TASK_NAMES if TASKS[n].kind.trainable]
    return [get_task(name) for name in names]


def predictions_path(results_dir: Path, task: str, name: str = DEFAULT_NAME) -> Path:
    """Beside the results file (:mod:`nlue.predictions`); ``.jsonl``, which results readers pass by."""
    return Path(results_dir) / name / f"{task}.predictions.jsonl"


def run_task(
    dataset: str | None, task: TaskSpec, results_dir: Path, name: str = DEFAULT_NAME,
    bootstrap_resamples: int = 1000, seed: int = 42, overwrite: bool = False,
) -> RunResult:  # fmt: skip
    """Train, predict the test split once, score with intervals; write predictions then the results file.

    A results file of another identity (:mod:`nlue.run_identity`) is refused before training, unless ``overwrite``.
    """
    started = time.perf_counter()
    try:
        splits = load_task(dataset, task)
    except OSError as exc:  # FileNotFoundError for a folder, ConnectionError for an unreachable Hub id
        raise NlueError(f"cannot load {task.name!r} from dataset {dataset!r}: {exc}") from exc
    if "train" not in splits or "test" not in splits:
        raise NlueError(
            f"{task.name}: dataset {dataset!r} has splits {list(splits)}; the baseline needs train and test"
        )
    test = splits["test"]
    identity = run_identity(task.name, local_model(MODEL_ID, "baseline"), split_facts(list(test), test.num_rows),
                            mode="baseline", seed=seed, settings={"bootstrap_resamples": bootstrap_resamples})  # fmt: skip
    check_replace(task_result_path(results_dir, name, task.name), identity, overwrite=overwrite)
    loaded = time.perf_counter()
    baseline = load_model(ModelSpec(MODEL_ID), BASELINE_CLASSIFIER, task=task, seed=seed)
    validation_metrics = baseline.fit(splits["train"], splits.get("validation"))
    fitted = time.perf_counter()
    predictions = baseline.predict(test)
    predicted = time.perf_counter()
    references = baseline.labels(test)
    scores = score_task(
        task.name, predictions.tolist(), references.tolist(), bootstrap_resamples=bootstrap_resamples or None, seed=seed
    )
    scored = time.perf_counter()
    extras = [{"label": task.label_names[int(p)]} for p in predictions] if task.kind.has_classes else None
    rows = prediction_rows(task, list(test), predictions.tolist(), references.tolist(), extras)
    result = RunResult(
        task=task.name, model=MODEL_ID, kind="baseline",
        metrics={k: v for k, v in scores.items() if isinstance(v, float)},
        dataset={"id": dataset or "nlue sample data", "path": resolve_dataset(dataset), "config": task.name,
                 "split": "test", "is_sample": is_sample(dataset)},
        identity=identity,
        hyperparameters=baseline.hyperparameters(), seed=seed, validation_metrics=validation_metrics,
        timings={"load_seconds": round(loaded - started, 3), "fit_seconds": round(fitted - loaded, 3),
                 "predict_seconds": round(predicted - fitted, 3), "score_seconds": round(scored - predicted, 3)},
        details={"selection": dict(baseline.selection),
                 "bootstrap_resamples": bootstrap_resamples,
                 "items": {split: ds.num_rows for split, ds in splits.items()}},
        notes=NOTES,
    )  # fmt: skip
    attach(result, rows, Path(results_dir), name)
    write_result(result, Path(results_dir), name, overwrite=overwrite)
    logger.info("%s: %s %.3f (%s=%g, fit %.1f s)", task.name, result.primary_metric, result.primary_score or math.nan,
                baseline.strength_name, baseline.strength, fitted - loaded)  # fmt: skip
    return result


def run_baseline(
    dataset: str | None, tasks: str | Sequence[str] = "all", results_dir: Path | str | None = None,
    name: str = DEFAULT_NAME, bootstrap_resamples: int = 1000, seed: int = 42, overwrite: bool = False,
) -> dict[str, RunResult]:  # fmt: skip
    """The TF-IDF baseline on every requested task (default: every trainable NLUE task), one results file each.

    Tasks whose kind is not trained (GMET's mask filling) are skipped with a warning; a caller that shows
    progress per task calls :func:`run_task` itself.
    """
    results_dir = Path(results_dir) if results_dir is not None else default_results_dir()
    outcomes: dict[str, RunResult] = {}
    for task in resolve_tasks(tasks):
        if not task.kind.trainable:
            logger.warning("skipping %s: a %s task; %s", task.name, task.kind.name, task.kind.how_to_score)
            continue
        outcomes[task.name] = run_task(dataset, task, Path(results_dir), name, bootstrap_resamples, seed, overwrite)
    return outcomes


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue baseline",
        description="Train and score the non-neural TF-IDF baseline (baseline:tfidf) on NLUE tasks.",
    )
    parser.add_argument("--dataset", default=None, help="a built dataset's Hub id or folder (default: the sample); "
                        "the task files it carries are read with it")  # fmt: skip
    add_task_file_option(parser)
    add_name_list(parser, "--tasks", valid=task_names(lambda t: t.kind.trainable), what="task", all_word="all",
                  help="the tasks to train and score (default: all, every trainable task)")  # fmt: skip
    parser.add_argument("--results-dir", type=Path, help=RESULTS_DIR_HELP)
    parser.add_argument("--name", "--results-name", dest="name", default=DEFAULT_NAME, help="results folder name")
    parser.add_argument(
        "--bootstrap-resamples", "--bootstrap", dest="bootstrap_resamples", type=int, default=1000,
        help="resamples for 95%% intervals (0: none)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=42, help="seed of the solver and the bootstrap")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    cli_support.add_logging_options(parser)
    return parser


def format_table(results: dict[str, RunResult]) -> str:
    rows = [["task", "primary metric", "score", "95% CI", "fit s"]]
    for task, result in results.items():
        metric = result.primary_metric
        low, high = result.metrics.get(f"{metric}_ci_low"), result.metrics.get(f"{metric}_ci_high")
        score = "-" if result.primary_score is None else f"{result.primary_score:.3f}"
        ci = f"{low:.3f}-{high:.3f}" if low is not None and high is not None else "-"
        rows.append([task, metric, score, ci, f"{result.timings.get('fit_seconds', 0.0):.2f}"])
    return text_table(rows)


def _run(args: argparse.Namespace) -> int:
    args.results_dir = args.results_dir or default_results_dir()
    if args.bootstrap_resamples < 0:
        raise NlueError(f"--bootstrap-resamples must be 0 or more, got {args.bootstrap_resamples}")
    # --tasks names trainable tasks only (checked while parsing), so every one is scored
    results = run_baseline(args.dataset, args.tasks, args.results_dir, args.name, args.bootstrap_resamples, args.seed,
                           args.overwrite)  # fmt: skip
    print(format_table(results))
    print(f"\n{MODEL_ID}: {NOTES}")
    if any(r.dataset.get("is_sample") for r in results.values()):
        print("Scored on SAMPLE data: the numbers show the pipeline, not Nepali NLU.")
    print(f"Results: {Path(args.results_dir) / args.name}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue baseline` with ``argv`` (without the `baseline` word) on the CLI backbone; return the exit status."""
    return cli_support.run_with_parser("baseline", build_parser, argv, _run)


if __name__ == "__main__":
    sys.exit(main())
