"""Grid search with k-fold cross-validation, as in the NLUE paper, then one final run.

Every (learning rate, batch size) pair is trained on k-1 folds of train and evaluated
on the held-out fold; the pair with the lowest mean validation loss wins. The winner
is then trained once on the full train split (validation split for early stopping)
and evaluated once on test. Each trial's outcome is written to its own JSON file as
soon as it ends, so an interrupted search resumes without redoing finished trials.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np

from nlue.data_access import load_task
from nlue.errors import NlueError
from nlue.results import model_slug, write_json_atomic
from nlue.tasks import TaskSpec, get_task
from nlue.training.args import DataArguments, LoraArguments, ModelArguments, NlueTrainingArguments, RecipeArguments

logger = logging.getLogger(__name__)


@dataclass
class SearchArguments:
    learning_rates: str = field(
        default="1e-5,2e-5,1e-4,2e-4", metadata={"help": "Comma-separated learning rates to try (the paper's grid)."}
    )
    batch_sizes: str = field(default="8,16,32", metadata={"help": "Comma-separated batch sizes to try."})
    folds: int = field(default=5, metadata={"help": "k of the k-fold cross-validation on train."})
    search_dir: str | None = field(
        default=None, metadata={"help": "Where trial results go (default: <output_dir>/search); reused to resume."}
    )
    skip_final: bool = field(default=False, metadata={"help": "Only search; do not train and test the winner."})


def parse_grid(text: str, kind: type, name: str) -> list[Any]:
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise NlueError(f"--{name}: expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise NlueError(f"--{name}: give at least one value")
    return values


def stratified_folds(strata: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Fold number (0..k-1) of each item, each stratum dealt round-robin after a seeded shuffle."""
    if k < 2:
        raise NlueError(f"--folds must be at least 2, got {k}")
    if len(strata) < k:
        raise NlueError(f"train has {len(strata)} rows: too few for {k} folds")
    rng = np.random.default_rng(seed)
    folds = np.empty(len(strata), dtype=np.int64)
    offset = 0
    for value in np.unique(strata):
        positions = rng.permutation(np.flatnonzero(strata == value))
        folds[positions] = (np.arange(len(positions)) + offset) % k
        offset += len(positions)  # keeps fold sizes even across strata
    return folds


def _strata(task: TaskSpec, labels: list[Any]) -> np.ndarray:
    values = np.asarray(labels, dtype=np.float64)
    return np.rint(values).astype(np.int64) if task.problem_type == "regression" else values.astype(np.int64)


def trial_name(lr: float, batch: int, fold: int) -> str:
    return f"lr{lr:g}-bs{batch}-fold{fold}"


def run_trial(
    model_args: ModelArguments,
    lora_args: LoraArguments,
    recipe_args: RecipeArguments,
    training_args: NlueTrainingArguments,
    task: TaskSpec,
    tokenized: Any,
    folds: np.ndarray,
    fold: int,
    workdir: Path,
) -> dict[str, Any]:
    """Train on every fold but ``fold`` and return the best validation loss on ``fold``."""
    from nlue.training.recipe import build_trainer, load_tokenizer, prepare_model

    train_part = tokenized.select(np.flatnonzero(folds != fold))
    held_out = tokenized.select(np.flatnonzero(folds == fold))
    model, _ = prepare_model(model_args, lora_args, task)
    args = dataclasses.replace(training_args, output_dir=str(workdir), save_total_limit=1)
    trainer = build_trainer(
        model, load_tokenizer(model_args), task, args, train_part, held_out, recipe_args.early_stopping_patience
    )
    trainer.train()
    losses = [entry["eval_loss"] for entry in trainer.state.log_history if "eval_loss" in entry]
    shutil.rmtree(workdir, ignore_errors=True)  # trial checkpoints are not needed once scored
    return {
        "fold": fold,
        "train_rows": len(train_part),
        "validation_rows": len(held_out),
        "best_validation_loss": float(min(losses)) if losses else math.inf,
        "epochs": float(trainer.state.epoch or 0),
    }


def run_search(
    model_args: ModelArguments,
    data_args: DataArguments,
    lora_args: LoraArguments,
    recipe_args: RecipeArguments,
    search_args: SearchArguments,
    training_args: NlueTrainingArguments,
) -> dict[str, Any]:
    """Run (or resume) the grid, pick the lowest mean validation loss, then train and test it."""
    import transformers

    from nlue.training.recipe import load_tokenizer, resolve_precision, run_training, tokenize_dataset

    task = get_task(data_args.task)
    if task.problem_type == "mask_fill":
        raise NlueError("gmet is zero-shot: there is nothing to search")
    lrs = parse_grid(search_args.learning_rates, float, "learning_rates")
    batches = parse_grid(search_args.batch_sizes, int, "batch_sizes")
    output_dir = training_args.output_dir or f"runs/{model_slug(model_args.model_name_or_path)}-{task.name}"
    search_dir = Path(search_args.search_dir or Path(output_dir) / "search")
    trial_args = dataclasses.replace(
        training_args, push_to_hub=False, output_dir=str(search_dir), **resolve_precision(recipe_args.precision)
    )
    raw = load_task(data_args.dataset, task)
    train = raw["train"]
    if data_args.max_train_samples is not None:
        train = train.select(range(min(data_args.max_train_samples, train.num_rows)))
    folds = stratified_folds(_strata(task, train[task.label_field]), search_args.folds, training_args.seed)
    tokenized = tokenize_dataset(
        datasets.DatasetDict({"train": train}), task, load_tokenizer(model_args), data_args.max_seq_length
    )["train"]

    trials: list[dict[str, Any]] = []
    total = len(lrs) * len(batches) * search_args.folds
    for lr in lrs:
        for batch in batches:
            for fold in range(search_args.folds):
                name = trial_name(lr, batch, fold)
                path = search_dir / "trials" / f"{name}.json"
                if path.is_file():
                    record = json.loads(path.read_text(encoding="utf-8"))
                    logger.info("trial %s already done (loss %.4f): skipped", name, record["best_validation_loss"])
                else:
                    logger.info("trial %d/%d: %s", len(trials) + 1, total, name)
                    transformers.set_seed(training_args.seed)
                    args = dataclasses.replace(trial_args, learning_rate=lr, per_device_train_batch_size=batch)
                    record = {"learning_rate": lr, "batch_size": batch, **run_trial(
                        model_args, lora_args, recipe_args, args, task, tokenized, folds, fold, search_dir / "work" / name
                    )}  # fmt: skip
                    write_json_atomic(path, record)
                trials.append(record)

    table = _summarise(trials)
    best = min(table, key=lambda row: row["mean_validation_loss"])
    summary: dict[str, Any] = {
        "task": task.name,
        "model": model_args.model_name_or_path,
        "folds": search_args.folds,
        "grid": {"learning_rates": lrs, "batch_sizes": batches},
        "configurations": table,
        "best": best,
    }
    logger.info("best: learning rate %g, batch size %d (mean validation loss %.4f)",
                best["learning_rate"], best["batch_size"], best["mean_validation_loss"])  # fmt: skip
    if not search_args.skip_final:
        final_args = dataclasses.replace(
            training_args,
            output_dir=output_dir,
            learning_rate=best["learning_rate"],
            per_device_train_batch_size=best["batch_size"],
        )
        outcome = run_training(model_args, data_args, lora_args, recipe_args, final_args)
        summary["final"] = {"output_dir": str(outcome.output_dir), "results": str(outcome.results_path),
                            "test_metrics": outcome.result.metrics}  # fmt: skip
    write_json_atomic(search_dir / "summary.json", summary)
    return summary


def _summarise(trials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    grouped: dict[tuple[float, int], list[float]] = {}
    for trial in trials:
        grouped.setdefault((trial["learning_rate"], trial["batch_size"]), []).append(trial["best_validation_loss"])
    return [
        {
            "learning_rate": lr,
            "batch_size": batch,
            "mean_validation_loss": float(np.mean(losses)),
            "std_validation_loss": float(np.std(losses)),
            "folds": len(losses),
        }
        for (lr, batch), losses in grouped.items()
    ]


def search_main(argv: list[str] | None = None, prog: str = "nlue search") -> int:
    import sys

    from nlue.training.cli import parse

    args = list(sys.argv[1:] if argv is None else argv)
    model_args, data_args, lora_args, recipe_args, search_args, training_args = parse(
        (ModelArguments, DataArguments, LoraArguments, RecipeArguments, SearchArguments, NlueTrainingArguments),
        args,
        prog,
    )
    summary = run_search(model_args, data_args, lora_args, recipe_args, search_args, training_args)
    if training_args.process_index == 0:
        print(f"{'learning rate':>13}  {'batch':>5}  {'mean val loss':>13}  {'std':>7}")
        for row in sorted(summary["configurations"], key=lambda r: r["mean_validation_loss"]):
            print(f"{row['learning_rate']:>13g}  {row['batch_size']:>5}  {row['mean_validation_loss']:>13.4f}  "
                  f"{row['std_validation_loss']:>7.4f}")  # fmt: skip
        best = summary["best"]
        print(f"best: learning rate {best['learning_rate']:g}, batch size {best['batch_size']}")
        if "final" in summary:
            print(f"final run: {summary['final']['output_dir']} (results {summary['final']['results']})")
    return 0
