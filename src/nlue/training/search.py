"""Grid search with k-fold cross-validation, as in the NLUE paper, then one final run.

The grid is configuration (preset) x learning rate x batch size: the paper tried several of its
configurations I-VIII per task as well as its learning rates and batch sizes. By default the
presets are the paper's best configuration for the task and its neighbouring numerals
(``--presets``); with ``--lora`` presets do not apply and only learning rate x batch size vary.
Every triple is trained on k-1 folds of train and evaluated on the held-out fold; the triple with
the lowest mean validation loss wins. The winner is then trained once on the full train split
(validation split for early stopping) and evaluated once on test. Each trial's outcome is written
to its own JSON file as soon as it ends, so an interrupted search resumes without redoing
finished trials.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np

from nlue.data.access import load_task
from nlue.errors import NlueError
from nlue.lm.modeling import trainable_task
from nlue.registry.tasks import TaskSpec
from nlue.results import write_json_atomic
from nlue.training.args import DataArguments, LoraArguments, ModelArguments, NlueTrainingArguments, RecipeArguments

logger = logging.getLogger(__name__)


@dataclass
class SearchArguments:
    presets: str = field(
        default="auto",
        metadata={
            "help": "Configurations to try. 'auto': the paper's best for this task (for this model when it is one "
            "of the paper's ten, matched by Hub id or named with --paper_hparams; otherwise the configuration most "
            "often best for the task across them) plus the numerals just before and after it. 'current': only "
            "--preset. Or a comma list such as I,IV,VI. Ignored with --lora."
        },
    )
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
    return task.kind.strata(task, values).astype(np.int64)


def paper_best_preset(task: TaskSpec, model_id: str, paper_model: str | None = None) -> tuple[str, str]:
    """The paper's best configuration numeral for ``task`` and a phrase saying where it comes from.

    The cell of the paper model named by ``paper_model`` (``--paper_hparams``) or matched by Hub id;
    for any other model, the numeral most often best for the task across the paper's models (ties
    go to the earlier numeral).
    """
    from nlue.registry.paper import PAPER_MODELS
    from nlue.training.presets import PRESETS
    from nlue.training.recipe import paper_model_for

    best = task.paper_best_hparams
    if not best:
        raise NlueError(f"the paper reports no best configuration for {task.name}: give --presets explicitly")
    if paper_model:
        name: str | None = paper_model_for(paper_model, model_id, task)
    else:
        name = next((m.name for m in PAPER_MODELS if m.hub_id.lower() == model_id.lower()), None)
    if name is not None and name in best:
        return best[name].preset, f"the paper's best for {name} on {task.name}"
    counts = Counter(hp.preset for hp in best.values())
    top = max(counts.values())
    preset = next(p for p in PRESETS if counts.get(p) == top)
    return preset, f"the paper's most frequent best on {task.name} ({top} of its {len(best)} models)"


def search_presets(
    text: str, task: TaskSpec, model_args: ModelArguments, recipe_args: RecipeArguments, lora: bool
) -> tuple[list[str | None], str]:
    """The presets to search (``[None]`` with LoRA) and why those."""
    from nlue.training.presets import get_preset, neighbouring_presets

    if lora:
        logger.info("--lora: presets do not apply; searching learning rate x batch size only")
        return [None], "none: LoRA decides what trains"
    choice = text.strip()
    if choice.lower() == "auto":
        best, why = paper_best_preset(task, model_args.model_name_or_path, recipe_args.paper_hparams)
        return list(neighbouring_presets(best)), f"{why} ({best}) and its neighbours"
    if choice.lower() == "current":
        choice = model_args.preset
    try:
        names = [get_preset(name).name for name in choice.split(",") if name.strip()]
    except ValueError as exc:
        raise NlueError(f"--presets: {exc}") from None
    if not names:
        raise NlueError("--presets: give 'auto', 'current' or at least one of I..VIII")
    return list(dict.fromkeys(names)), "given"


def trial_name(preset: str | None, extra_fc: bool, lr: float, batch: int, fold: int) -> str:
    label = (preset or "lora") + ("+fc" if extra_fc else "")
    return f"{label}-lr{lr:g}-bs{batch}-fold{fold}"


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
    """Run (or resume) the grid of presets x learning rates x batch sizes, pick the lowest mean validation
    loss, then train and test the winner."""
    import transformers

    from nlue.training.recipe import load_tokenizer, resolve_precision, tokenize_dataset
    from nlue.training.run import default_output_dir, run_training

    task = trainable_task(data_args.task)
    presets, presets_source = search_presets(search_args.presets, task, model_args, recipe_args, lora_args.lora)
    lrs = parse_grid(search_args.learning_rates, float, "learning_rates")
    batches = parse_grid(search_args.batch_sizes, int, "batch_sizes")
    if lora_args.lora and model_args.extra_fc:
        raise NlueError("--extra_fc works with the parameter presets, not with --lora")
    extra_fc = model_args.extra_fc
    logger.info("presets %s (%s) x learning rates %s x batch sizes %s, %d folds",
                ", ".join(p or "-" for p in presets), presets_source, lrs, batches, search_args.folds)  # fmt: skip
    output_dir = training_args.output_dir or str(default_output_dir(model_args.model_name_or_path, task))
    search_dir = Path(search_args.search_dir or Path(output_dir) / "search")
    trial_args = dataclasses.replace(
        training_args,
        push_to_hub=False,
        output_dir=str(search_dir),
        **resolve_precision(recipe_args.precision, training_args.bf16, training_args.fp16),
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
    total = len(presets) * len(lrs) * len(batches) * search_args.folds
    for preset in presets:
        trial_model_args = model_args if preset is None else dataclasses.replace(model_args, preset=preset)
        for lr in lrs:
            for batch in batches:
                for fold in range(search_args.folds):
                    name = trial_name(preset, extra_fc, lr, batch, fold)
                    path = search_dir / "trials" / f"{name}.json"
                    if path.is_file():
                        record = json.loads(path.read_text(encoding="utf-8"))
                        logger.info("trial %s already done (loss %.4f): skipped", name, record["best_validation_loss"])
                    else:
                        logger.info("trial %d/%d: %s", len(trials) + 1, total, name)
                        transformers.set_seed(training_args.seed)
                        args = dataclasses.replace(trial_args, learning_rate=lr, per_device_train_batch_size=batch)
                        outcome = run_trial(trial_model_args, lora_args, recipe_args, args, task, tokenized, folds,
                                            fold, search_dir / "work" / name)  # fmt: skip
                        record = {"preset": preset, "extra_fc": extra_fc, "lora": lora_args.lora,
                                  "learning_rate": lr, "batch_size": batch, **outcome}  # fmt: skip
                        write_json_atomic(path, record)
                    trials.append(record)

    ranking = _rank(trials)
    best = ranking[0]
    summary: dict[str, Any] = {
        "task": task.name,
        "model": model_args.model_name_or_path,
        "folds": search_args.folds,
        "grid": {"presets": presets, "learning_rates": lrs, "batch_sizes": batches},
        "presets_source": presets_source,
        "presets_note": "numerals I-VIII are the paper's; the parameter subset of each is our reading "
        "(trainers/README.md)",
        "extra_fc": extra_fc,
        "lora": lora_args.lora,
        "ranking": ranking,
        "best": best,
    }
    logger.info("best: %s, learning rate %g, batch size %d (mean validation loss %.4f)", _preset_label(best["preset"]),
                best["learning_rate"], best["batch_size"], best["mean_validation_loss"])  # fmt: skip
    if not search_args.skip_final:
        if recipe_args.paper_hparams:
            logger.info("final run: the search's winner, not --paper_hparams %s", recipe_args.paper_hparams)
        final_args = dataclasses.replace(
            training_args,
            output_dir=output_dir,
            learning_rate=best["learning_rate"],
            per_device_train_batch_size=best["batch_size"],
        )
        final_model_args = (
            model_args if best["preset"] is None else dataclasses.replace(model_args, preset=best["preset"])
        )
        final_recipe_args = dataclasses.replace(recipe_args, paper_hparams=None)
        outcome = run_training(final_model_args, data_args, lora_args, final_recipe_args, final_args)
        summary["final"] = {"output_dir": str(outcome.output_dir), "results": str(outcome.results_path),
                            "test_metrics": outcome.result.metrics}  # fmt: skip
    write_json_atomic(search_dir / "summary.json", summary)
    return summary


def _preset_label(preset: str | None) -> str:
    return f"preset {preset}" if preset else "LoRA"


def _rank(trials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (preset, learning rate, batch size), lowest mean validation loss first."""
    grouped: dict[tuple[str | None, float, int], list[float]] = {}
    for trial in trials:
        key = (trial["preset"], trial["learning_rate"], trial["batch_size"])
        grouped.setdefault(key, []).append(trial["best_validation_loss"])
    rows = [
        {
            "preset": preset,
            "learning_rate": lr,
            "batch_size": batch,
            "mean_validation_loss": float(np.mean(losses)),
            "std_validation_loss": float(np.std(losses)),
            "folds": len(losses),
        }
        for (preset, lr, batch), losses in grouped.items()
    ]
    # A stable sort: among equal losses the grid's order (preset, then lr, then batch) decides.
    rows.sort(key=lambda row: row["mean_validation_loss"])
    return [{"rank": rank, **row} for rank, row in enumerate(rows, start=1)]


def search_main(argv: list[str] | None = None, prog: str = "nlue search") -> int:
    import sys

    from nlue.training.args import data_task_files, parse

    args = list(sys.argv[1:] if argv is None else argv)
    model_args, data_args, lora_args, recipe_args, search_args, training_args = parse(
        (ModelArguments, DataArguments, LoraArguments, RecipeArguments, SearchArguments, NlueTrainingArguments),
        args,
        prog,
    )
    with data_task_files(data_args):
        summary = run_search(model_args, data_args, lora_args, recipe_args, search_args, training_args)
    if training_args.process_index == 0:
        from nlue.data.access import is_sample
        from nlue.data.sample import SAMPLE_DATA_NOTE

        if is_sample(data_args.dataset):
            print(SAMPLE_DATA_NOTE)
        print(f"{'rank':>4}  {'preset':>6}  {'learning rate':>13}  {'batch':>5}  {'mean val loss':>13}  {'std':>7}")
        for row in summary["ranking"]:
            print(f"{row['rank']:>4}  {row['preset'] or '-':>6}  {row['learning_rate']:>13g}  {row['batch_size']:>5}  "
                  f"{row['mean_validation_loss']:>13.4f}  {row['std_validation_loss']:>7.4f}")  # fmt: skip
        best = summary["best"]
        print(f"best: {_preset_label(best['preset'])}, learning rate {best['learning_rate']:g}, "
              f"batch size {best['batch_size']}")  # fmt: skip
        if "final" in summary:
            print(f"final run: {summary['final']['output_dir']} (results {summary['final']['results']})")
    return 0
