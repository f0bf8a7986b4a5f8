"""Several training seeds of one fine-tuning run (``--seeds N``): each trained and tested, then combined.

A small test set and one seed make a fragile number (NLUE's RTE has 503 test items, CR 142): a
second seed can move macro-F1 by points. With ``--seeds N`` the recipe trains N times, with seeds
``--seed``, ``--seed + 1``, ..., each into ``<output_dir>/seed-<n>`` with its own checkpoint, card,
results and predictions. The shared results folder gets one combined results file:

* every test metric is the **mean over seeds**, and ``<metric>_sd`` the sample standard deviation
  over seeds (``ddof=1``), which the leaderboard shows as mean +- sd;
* the 95% intervals are for that mean: items are resampled once per bootstrap draw and every
  seed's predictions scored on the same draw (:func:`nlue.scores.tasks.seed_mean_problem`),
  so the interval is about the test items and the sd about the seeds;
* ``details.per_seed`` holds each seed's test metrics, and the predictions file one prediction per
  seed for every item (a list), which ``nlue compare`` reads as such.
"""

from __future__ import annotations

import dataclasses
import logging
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.predictions import attach
from nlue.results import check_replace, default_results_dir, result_path, task_result_path, write_result
from nlue.training.args import DataArguments, NlueTrainingArguments, RecipeArguments

logger = logging.getLogger(__name__)


def combined_metrics(
    task: str, per_seed: list[dict[str, float]], rows_by_seed: list[list[dict[str, Any]]], resamples: int, seed: int
) -> dict[str, float]:
    """Mean and sd over seeds of every metric, and bootstrap intervals for the means (module docstring)."""
    from nlue.scores.tasks import seed_mean_problem
    from nlue.scoring.bootstrap import scores_with_intervals

    names = [name for name in per_seed[0] if not name.endswith(("_ci_low", "_ci_high"))]
    out: dict[str, float] = {}
    for name in names:
        if any(metrics.get(name) is None for metrics in per_seed):  # undefined for a seed: so is the mean
            out[name] = out[f"{name}_sd"] = None
            continue
        values = [float(metrics[name]) for metrics in per_seed]
        out[name] = statistics.fmean(values)
        out[f"{name}_sd"] = statistics.stdev(values) if len(values) > 1 else 0.0
    if resamples:
        predictions = [[rows[i]["prediction"] for rows in rows_by_seed] for i in range(len(rows_by_seed[0]))]
        golds = [row["gold"] for row in rows_by_seed[0]]
        problem = seed_mean_problem(task, predictions, golds)
        intervals = scores_with_intervals(problem, None, resamples, seed=seed)
        out.update({k: float(v) for k, v in intervals.items() if k.endswith(("_ci_low", "_ci_high"))})
    return out


def run_seeds(
    data_args: DataArguments,
    recipe_args: RecipeArguments,
    training_args: NlueTrainingArguments,
    base: Path,
    train_one: Callable[[NlueTrainingArguments], tuple[Any, list[dict[str, Any]]]],
    identity_of: Callable[[list[int]], dict[str, Any]] | None = None,
) -> tuple[Path, Any, list[Any]]:
    """Train and test once per seed (``train_one`` writes each seed's run in its own folder); write the seeds'
    combined results to the shared folder. Returns (its path, the combined result, each seed's outcome).

    ``identity_of(seeds)``: the combined run's identity (:mod:`nlue.run_identity`), checked against the shared
    results file before the first seed trains (:func:`nlue.results.check_replace`)."""
    from nlue.lm.modeling import trainable_task
    from nlue.training.identity import results_folder

    if recipe_args.seeds < 1:
        raise NlueError(f"--seeds must be at least 1, got {recipe_args.seeds}")
    if training_args.push_to_hub:
        raise NlueError("--push_to_hub publishes one checkpoint: train the seed to publish with --seeds 1")
    seeds = [training_args.seed + k for k in range(recipe_args.seeds)]
    results_dir = Path(recipe_args.results_dir) if recipe_args.results_dir else default_results_dir()
    folder = results_folder(recipe_args.results_name or str(base), data_args)
    identity = identity_of(seeds) if identity_of is not None else None
    task = trainable_task(data_args.task).name
    check_replace(task_result_path(results_dir, folder, task), identity, overwrite=recipe_args.overwrite)
    outcomes, rows_by_seed = [], []
    for seed in seeds:
        outcome, rows = train_one(dataclasses.replace(training_args, seed=seed, output_dir=str(base / f"seed-{seed}")))
        outcomes.append(outcome)
        rows_by_seed.append(rows)
        logger.info("seed %d: %s %.4f", seed, outcome.result.primary_metric, outcome.result.primary_score)
    first = outcomes[0].result
    per_seed = [
        {k: v for k, v in o.result.metrics.items() if not k.endswith(("_ci_low", "_ci_high"))} for o in outcomes
    ]
    metrics = combined_metrics(first.task, per_seed, rows_by_seed, recipe_args.bootstrap_resamples, seeds[0])
    result = dataclasses.replace(
        first,
        model=recipe_args.results_name or str(base),  # the run, not its first seed's folder
        metrics=metrics,
        primary_score=None,  # recomputed from the means
        seed=seeds[0],
        hyperparameters={**first.hyperparameters, "seeds": seeds, "best_checkpoint": None},
        details={
            **first.details,
            "seeds": seeds,
            "per_seed": dict(zip(map(str, seeds), per_seed, strict=True)),
            "checkpoints": [str(o.output_dir) for o in outcomes],
        },
        notes=" ".join(filter(None, [first.notes, f"Mean over {len(seeds)} training seeds; *_sd is their sd."])),
        predictions=None,
        identity=identity,
    )
    shared = result_path(result, results_dir, folder)
    if training_args.process_index != 0:  # several processes (torchrun): the first writes, once
        return shared, result, outcomes
    combined_rows = []
    for i, row in enumerate(rows_by_seed[0]):  # one prediction per seed; the gold stays last
        combined = {k: v for k, v in row.items() if k not in ("logits", "gold")}
        combined["prediction"] = [rows[i]["prediction"] for rows in rows_by_seed]
        combined_rows.append({**combined, "gold": row["gold"]})
    attach(result, combined_rows, results_dir, shared.parent.name)
    return write_result(result, results_dir, folder, overwrite=recipe_args.overwrite), result, outcomes
