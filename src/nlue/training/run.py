"""One fine-tuning run, in three steps: resolve the arguments, train, save.

* :func:`resolve_run` - the task (refused when its kind is not fine-tuned), the paper's
  hyperparameters on request, the output and results folders, precision, the seed;
* :func:`train_run` - data, tokenizer, model (preset or LoRA), Trainer with early
  stopping, then validation and test scores (test once, with bootstrap intervals);
* :func:`save_run` - the checkpoint (and merged weights), the results file, the model
  card, the push.

Test metrics are written once, to ``nlue_results.json`` in the output folder (it travels
with the checkpoint); the results folder the leaderboard reads gets a copy of that file.
The Trainer's own ``train_results.json`` / ``eval_results.json`` keep training and
validation figures only.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nlue.data.access import dataset_description, load_task
from nlue.errors import NlueError
from nlue.lm.modeling import trainable_task
from nlue.lm.slug import model_slug
from nlue.predictions import attach
from nlue.registry.tasks import TaskSpec
from nlue.results import RunResult, default_results_dir, result_path
from nlue.run_identity import identity_key
from nlue.training.args import DataArguments, LoraArguments, ModelArguments, NlueTrainingArguments, RecipeArguments
from nlue.training.predict import logit_rows
from nlue.training.processes import check_processes, effective_batch
from nlue.training.recipe import (
    build_trainer,
    last_checkpoint,
    limit_split,
    load_tokenizer,
    paper_hparams_note,
    predictions_from_logits,
    prepare_model,
    resolve_precision,
    tokenize_dataset,
    with_paper_hparams,
)
from nlue.training.seeds import run_seeds

logger = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    output_dir: Path
    results_path: Path
    result: RunResult
    card_path: Path
    merged_dir: Path | None = None


@dataclass
class ResolvedRun:
    """Everything decided before any data or model is loaded."""

    task: TaskSpec
    model_args: ModelArguments
    training_args: NlueTrainingArguments
    output_dir: Path
    results_dir: Path
    push: bool
    hub_model_id: str | None
    paper_record: dict[str, Any] | None


@dataclass
class TrainedRun:
    """What training and scoring produced, before anything is written."""

    trainer: Any
    tokenizer: Any
    trained: str  # which parameters trained, in words
    test_split: str
    train_metrics: dict[str, float]
    validation: dict[str, float]
    test_metrics: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    prediction_rows: list[dict[str, Any]] = field(default_factory=list)  # per test item (nlue.predictions)


def default_output_dir(model: str, task: TaskSpec) -> Path:
    """Where a run goes when --output_dir is not given (the same for `nlue train` and `nlue search`)."""
    return Path("runs") / f"{model_slug(model)}-{task.name}"


def resolve_run(
    model_args: ModelArguments,
    data_args: DataArguments,
    recipe_args: RecipeArguments,
    training_args: NlueTrainingArguments,
) -> ResolvedRun:
    import transformers

    check_processes(training_args)
    task = trainable_task(data_args.task)
    model_args, training_args, paper_record = with_paper_hparams(model_args, training_args, recipe_args, task)
    push, hub_model_id = training_args.push_to_hub, training_args.hub_model_id
    if push and not hub_model_id:
        raise NlueError("--push_to_hub needs --hub_model_id owner/name")
    output_dir = Path(training_args.output_dir or default_output_dir(model_args.model_name_or_path, task))
    results_dir = Path(recipe_args.results_dir) if recipe_args.results_dir else default_results_dir()
    # The Trainer would contact the Hub at start-up when push_to_hub is set: we push ourselves, at the end.
    training_args = dataclasses.replace(
        training_args,
        output_dir=str(output_dir),
        push_to_hub=False,
        **resolve_precision(recipe_args.precision, training_args.bf16, training_args.fp16),
    )
    transformers.set_seed(training_args.seed)
    return ResolvedRun(task, model_args, training_args, output_dir, results_dir, push, hub_model_id, paper_record)


def train_run(
    run: ResolvedRun, data_args: DataArguments, lora_args: LoraArguments, recipe_args: RecipeArguments
) -> tuple[TrainedRun, Any]:
    """Train with early stopping, score validation and the test split once; return the outcome and the raw data."""
    from nlue.scores import score_task

    task = run.task
    # Several processes: the first loads and tokenizes into the datasets cache, the others then read it.
    with run.training_args.main_process_first(desc="loading and tokenizing the data"):
        raw = load_task(data_args.dataset, task)
        limits = {"train": data_args.max_train_samples, "validation": data_args.max_eval_samples}
        for split in ("train", "validation", "test"):
            raw = limit_split(raw, split, limits.get(split, data_args.max_eval_samples))
        missing = [s for s in ("train", "validation") if s not in raw]
        if missing:
            raise NlueError(f"dataset has no {' or '.join(missing)} split for {task.name}; build it with one")
        tokenizer = load_tokenizer(run.model_args)
        encoded = tokenize_dataset(raw, task, tokenizer, data_args.max_seq_length)
    model, trained = prepare_model(run.model_args, lora_args, task)
    logger.info("training %s on %s (%s)", run.model_args.model_name_or_path, task.name, trained)
    trainer = build_trainer(
        model,
        tokenizer,
        task,
        run.training_args,
        encoded["train"],
        encoded["validation"],
        recipe_args.early_stopping_patience,
    )
    started = time.perf_counter()
    resume = last_checkpoint(run.output_dir) if recipe_args.resume else None
    train_output = trainer.train(resume_from_checkpoint=resume)
    train_seconds = time.perf_counter() - started
    validation = trainer.evaluate()
    started = time.perf_counter()
    test_split = "test" if "test" in encoded else "validation"
    prediction = trainer.predict(encoded[test_split])
    preds = predictions_from_logits(task, prediction.predictions)
    references = np.asarray(raw[test_split][task.label_field])
    test_metrics = score_task(
        task.name,
        preds,
        references,
        bootstrap_resamples=recipe_args.bootstrap_resamples or None,
        seed=run.training_args.seed,
    )
    timings = {"train_seconds": round(train_seconds, 3), "test_seconds": round(time.perf_counter() - started, 3)}
    logits = prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
    rows = logit_rows(task, list(raw[test_split]), np.asarray(logits, dtype=np.float64))
    return (
        TrainedRun(
            trainer, tokenizer, trained, test_split, train_output.metrics, validation, test_metrics, timings, rows
        ),
        raw,
    )


def run_result(
    run: ResolvedRun,
    trained: TrainedRun,
    data_args: DataArguments,
    lora_args: LoraArguments,
    recipe_args: RecipeArguments,
) -> RunResult:
    """The shared-format results of the run."""
    from nlue.training.lora import lora_settings
    from nlue.training.presets import PRESET_SCHEME

    args, model_args, task = run.training_args, run.model_args, run.task
    state = trained.trainer.state
    return RunResult(
        task=task.name,
        model=recipe_args.results_name or run.hub_model_id or str(run.output_dir),
        base_model=model_args.model_name_or_path,
        kind=recipe_args.results_kind,
        metrics={k: v for k, v in trained.test_metrics.items() if isinstance(v, float)},
        validation_metrics={k.removeprefix("eval_"): float(v) for k, v in trained.validation.items()},
        dataset=dataset_description(data_args.dataset, task.name, trained.test_split),
        preset=None if lora_args.lora else model_args.preset,
        lora=lora_settings(lora_args) if lora_args.lora else None,
        hyperparameters={
            "learning_rate": args.learning_rate,
            "per_device_train_batch_size": args.per_device_train_batch_size,
            "num_train_epochs_max": args.num_train_epochs,
            "epochs_trained": float(state.epoch or 0),
            "early_stopping_patience": recipe_args.early_stopping_patience,
            "max_seq_length": data_args.max_seq_length,
            "bf16": args.bf16,
            "fp16": args.fp16,
            "world_size": args.world_size,
            "gradient_accumulation_steps": args.gradient_accumulation_steps,
            "effective_train_batch_size": effective_batch(args),
            "best_checkpoint": state.best_model_checkpoint,
            "trainable": trained.trained,
            **({} if lora_args.lora else {"extra_fc": model_args.extra_fc, "preset_scheme": PRESET_SCHEME}),
            **({"paper_hparams": run.paper_record} if run.paper_record else {}),
        },
        seed=args.seed,
        timings=dict(trained.timings),
        paper_reference=task.paper_reference(model_args.model_name_or_path),
        notes=paper_hparams_note(run.paper_record, task) if run.paper_record else "",
    )


def save_run(
    run: ResolvedRun,
    trained: TrainedRun,
    data_args: DataArguments,
    lora_args: LoraArguments,
    recipe_args: RecipeArguments,
    shared: bool = True,
    identity: dict[str, Any] | None = None,
) -> RunOutcome:
    """Write the checkpoint, the results (once) and the card; merge and push on request.

    ``shared=False`` (one seed of several, :mod:`nlue.training.seeds`): the results and predictions stay in
    the checkpoint's folder; the seeds' combined results are what the shared results folder gets.
    ``identity``: the run's (:func:`nlue.training.identity.training_identity`), recorded in the results and
    checked against the shared results file it replaces (:func:`nlue.results.check_replace`).
    """
    from nlue.results import check_replace, write_json_atomic
    from nlue.training.identity import results_folder, with_checkpoint
    from nlue.training.modelcard import checkpoint_eval_results, write_checkpoint_eval_results, write_model_card

    trainer, output_dir = trained.trainer, run.output_dir
    # Several processes: each has trained and scored before anything is written, so a run that one of them
    # failed leaves no results (the launcher stops the others at this barrier).
    trainer.accelerator.wait_for_everyone()
    trainer.save_model(str(output_dir))  # every process: FSDP and DeepSpeed gather the weights from all of them
    trainer.save_state()
    trainer.save_metrics("train", trained.train_metrics)
    trainer.save_metrics("eval", trained.validation)
    merged_dir = None
    if lora_args.lora and lora_args.merge and trainer.is_world_process_zero():
        merged_dir = output_dir / "merged"
        trainer.model.merge_and_unload().save_pretrained(merged_dir)
        trained.tokenizer.save_pretrained(merged_dir)
    result = run_result(run, trained, data_args, lora_args, recipe_args)
    own_results = output_dir / "nlue_results.json"
    card_path = output_dir / "README.md"
    shared_path = result_path(result, run.results_dir, results_folder(result.model, data_args))
    if not trainer.is_world_process_zero():
        # The first process writes the results, the predictions and the card, and fingerprints the checkpoint
        # while it writes: another process would read a folder being written.
        return RunOutcome(output_dir, shared_path if shared else own_results, result, card_path, merged_dir)
    if identity is not None:
        identity = with_checkpoint(identity, output_dir)
        result.identity, result.identity_key = identity, identity_key(identity)
    if shared:
        check_replace(shared_path, identity, overwrite=recipe_args.overwrite)
    # The per-item predictions go beside both copies of the results file, which name them.
    rows_dir = run.results_dir if shared else output_dir.parent
    rows_path = attach(
        result, trained.prediction_rows, rows_dir, shared_path.parent.name if shared else output_dir.name
    )
    if shared:
        shutil.copyfile(rows_path, output_dir / rows_path.name)
    write_json_atomic(own_results, result.to_dict())
    if shared:
        shared_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(own_results, shared_path)  # the leaderboard's copy: the same bytes, written once
    write_model_card(card_path, result, run.task)
    planned, why_not = checkpoint_eval_results(
        result, recipe_args.eval_results_dataset or data_args.dataset, run.hub_model_id,
        whole_split=data_args.max_eval_samples is None,
    )  # fmt: skip
    write_checkpoint_eval_results(output_dir, run.task, planned)
    if planned is None:
        logger.info("no .eval_results/ entry for the Hub: %s", why_not)
    if run.push:
        from nlue.data.publish import plan_upload, push_folder

        plan = plan_upload(output_dir, str(run.hub_model_id), "model")
        logger.info("%s", plan.describe())
        for line in plan.hub_files:
            logger.info("%s", line)
        push_folder(
            plan,
            f"nlue: {run.task.name} fine-tune of {run.model_args.model_name_or_path}",
            recipe_args.dry_run,
        )
    return RunOutcome(output_dir, shared_path if shared else own_results, result, card_path, merged_dir)


def run_training(
    model_args: ModelArguments,
    data_args: DataArguments,
    lora_args: LoraArguments,
    recipe_args: RecipeArguments,
    training_args: NlueTrainingArguments,
) -> RunOutcome:
    """Fine-tune, evaluate and save one (model, task) run: resolve -> train -> save (or several seeds of it)."""
    if recipe_args.seeds != 1:
        return _run_seeds(model_args, data_args, lora_args, recipe_args, training_args)
    from nlue.results import check_replace
    from nlue.training.identity import results_folder, training_identity

    run = resolve_run(model_args, data_args, recipe_args, training_args)
    # Several processes: the first builds the sample data (or settles a local build) before the others look.
    with run.training_args.main_process_first(desc="reading the data"):
        identity = training_identity(run, data_args, lora_args, recipe_args)
    name = results_folder(recipe_args.results_name or run.hub_model_id or str(run.output_dir), data_args)
    check_replace(run.results_dir / name / f"{run.task.name}.json", identity, overwrite=recipe_args.overwrite)
    trained, _ = train_run(run, data_args, lora_args, recipe_args)
    return save_run(run, trained, data_args, lora_args, recipe_args, identity=identity)


def _run_seeds(
    model_args: ModelArguments,
    data_args: DataArguments,
    lora_args: LoraArguments,
    recipe_args: RecipeArguments,
    training_args: NlueTrainingArguments,
) -> RunOutcome:
    """``--seeds N``: each seed a run of its own in ``<output_dir>/seed-<n>``, combined (nlue.training.seeds)."""
    base = Path(
        training_args.output_dir or default_output_dir(model_args.model_name_or_path, trainable_task(data_args.task))
    )

    def train_one(args: NlueTrainingArguments) -> tuple[RunOutcome, list[dict[str, Any]]]:
        run = resolve_run(model_args, data_args, recipe_args, args)
        trained, _ = train_run(run, data_args, lora_args, recipe_args)
        return save_run(run, trained, data_args, lora_args, recipe_args, shared=False), trained.prediction_rows

    def identity(seeds: list[int]) -> dict[str, Any]:
        from nlue.training.identity import training_identity

        first = resolve_run(model_args, data_args, recipe_args, dataclasses.replace(training_args, seed=seeds[0]))
        combined = training_identity(first, data_args, lora_args, recipe_args, seeds)
        combined.pop("checkpoint")  # a mean over several checkpoints: no one checkpoint scores these numbers
        return combined

    path, result, outcomes = run_seeds(data_args, recipe_args, training_args, base, train_one, identity)
    return RunOutcome(base, path, result, outcomes[0].card_path, None)
