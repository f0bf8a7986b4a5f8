"""The pieces of a fine-tuning run: precision, the paper's hyperparameters, tokenising, the model, the Trainer.

:mod:`nlue.training.run` puts them together (resolve -> train -> save). The steps mirror
transformers' run_glue example: load the data and the model (labels from the registry),
choose what trains (a preset or LoRA), train with early stopping on the validation loss
and restore the best checkpoint.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.lm.modeling import check_label_mapping, classifier_config_kwargs
from nlue.registry.inputs import batch_text_pairs
from nlue.registry.tasks import TaskSpec
from nlue.training.args import (
    PRECISIONS,
    LoraArguments,
    ModelArguments,
    NlueTrainingArguments,
    RecipeArguments,
)
from nlue.training.predict import logits_to_predictions

logger = logging.getLogger(__name__)


def resolve_precision(choice: str, bf16: bool = False, fp16: bool = False) -> dict[str, bool]:
    """Device-dependent TrainingArguments: bf16/fp16 ('auto' picks them only on CUDA), pinned memory.

    ``bf16``/``fp16`` are TrainingArguments' own ``--bf16``/``--fp16`` flags as given: with
    ``--precision auto`` they decide (they were once overwritten by auto's choice), against another
    ``--precision`` they are an error. bf16 without a GPU is CPU autocast, which transformers allows
    only with ``use_cpu``; fp16 needs a GPU. Requests the machine cannot honour are the user's to fix.
    """
    import torch

    if choice not in PRECISIONS:
        raise NlueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {choice!r}")
    if bf16 and fp16:
        raise NlueError("--bf16 and --fp16 are both set; give one of them (or --precision bf16|fp16)")
    asked = "bf16" if bf16 else "fp16" if fp16 else None
    if asked and choice == "auto":
        choice = asked
    elif asked and choice != asked:
        raise NlueError(f"--precision {choice} contradicts --{asked}; give one of them")
    cuda = torch.cuda.is_available()
    extra: dict[str, bool] = {}
    if choice == "auto":
        use_bf16 = cuda and torch.cuda.is_bf16_supported()
        flags = {"bf16": use_bf16, "fp16": cuda and not use_bf16}
    else:
        flags = {"bf16": choice == "bf16", "fp16": choice == "fp16"}
    if flags["bf16"] and cuda and not torch.cuda.is_bf16_supported():
        raise NlueError("bf16 was asked for, but this GPU has no bf16 support (Ampere or newer); use fp16 or fp32")
    if flags["bf16"] and not cuda:
        extra["use_cpu"] = True  # CPU autocast in bf16: transformers refuses bf16 without a GPU unless told so
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if flags["fp16"] and not (cuda or mps):
        raise NlueError("fp16 was asked for, but no GPU is visible; use --precision bf16 (CPU autocast) or fp32")
    return {**flags, **extra, "dataloader_pin_memory": cuda}  # pinning only helps host-to-GPU copies


def paper_model_for(name: str, model_id: str, task: TaskSpec) -> str:
    """The registry's paper model meant by ``--paper_hparams`` (a name, or 'auto' to match the model id)."""
    from nlue.registry.paper import PAPER_MODELS

    if name == "auto":
        matches = [m.name for m in PAPER_MODELS if m.hub_id.lower() == model_id.lower()]
        if not matches:
            raise NlueError(
                f"--paper_hparams auto: {model_id!r} is not one of the paper's models "
                f"({', '.join(m.hub_id for m in PAPER_MODELS)}); name one explicitly"
            )
        return matches[0]
    if name not in task.paper_best_hparams:
        raise NlueError(
            f"--paper_hparams: unknown paper model {name!r}; expected one of {', '.join(task.paper_best_hparams)}"
        )
    return name


def with_paper_hparams(
    model_args: ModelArguments, training_args: NlueTrainingArguments, recipe_args: RecipeArguments, task: TaskSpec
) -> tuple[ModelArguments, NlueTrainingArguments, dict[str, Any] | None]:
    """Apply ``--paper_hparams``: the arguments with the paper's appendix E cell, and a record of what came from it.

    The learning rate, epochs and batch size are the paper's numbers; the preset is the paper's
    configuration numeral, whose parameter subset is our reading (the paper's figures that define it
    are not in its text). The record says so; it goes into the results and the model card.
    """
    from nlue.training.presets import get_preset

    if not recipe_args.paper_hparams:
        return model_args, training_args, None
    paper_model = paper_model_for(recipe_args.paper_hparams, model_args.model_name_or_path, task)
    hp = task.paper_best_hparams[paper_model]
    subset = get_preset(hp.preset).description
    logger.info(
        "paper hyperparameters for %s on %s (appendix E): learning rate %g, %d epochs, batch %d are the paper's; "
        "preset %s is the paper's configuration numeral, but the parameter subset it names here (%s) is our "
        "reading of it (trainers/README.md)",
        paper_model, task.name, hp.learning_rate, hp.epochs, hp.batch_size, hp.preset, subset,
    )  # fmt: skip
    record = {
        "paper_model": paper_model,
        "source": "NLUE paper, appendix E",
        "from_the_paper": {
            "learning_rate": hp.learning_rate,
            "num_train_epochs": hp.epochs,
            "per_device_train_batch_size": hp.batch_size,
            "configuration_numeral": hp.preset,
        },
        "our_reading": f"preset {hp.preset} = {subset}",
    }
    model_args = dataclasses.replace(model_args, preset=hp.preset)
    training_args = dataclasses.replace(
        training_args,
        learning_rate=hp.learning_rate,
        num_train_epochs=float(hp.epochs),
        per_device_train_batch_size=hp.batch_size,
    )
    return model_args, training_args, record


def paper_hparams_note(record: dict[str, Any], task: TaskSpec) -> str:
    """The sentence for results and the model card: which numbers are the paper's, which reading is ours."""
    paper = record["from_the_paper"]
    return (
        f"Learning rate {paper['learning_rate']:g}, {paper['num_train_epochs']} epochs and batch size "
        f"{paper['per_device_train_batch_size']} are the NLUE paper's best for {record['paper_model']} on "
        f"{task.name} ({record['source']}). The paper names the configuration only by its numeral; the parameter "
        f"subset trained for it here ({record['our_reading']}) is our reading of that numeral (nlue's "
        "trainers/README.md, 'How presets I-VIII were derived')."
    )


def tokenize_dataset(dataset: Any, task: TaskSpec, tokenizer: Any, max_length: int) -> Any:
    """Tokenized splits with a ``labels`` column (float for regression)."""
    label_field = task.label_field
    assert label_field is not None

    def encode(batch: dict[str, list[Any]]) -> dict[str, Any]:
        first, second = batch_text_pairs(task, batch)
        encoded = tokenizer(first, second, truncation=True, max_length=max_length)
        labels = batch[label_field]
        encoded["labels"] = task.kind.training_labels(task, labels)
        return encoded

    columns = next(iter(dataset.values())).column_names
    return dataset.map(encode, batched=True, remove_columns=columns, desc=f"tokenizing {task.name}")


def predictions_from_logits(task: TaskSpec, logits: Any) -> np.ndarray:
    """Label ids (argmax) or scores from the Trainer's raw predictions."""
    if isinstance(logits, tuple):  # some models also return hidden states
        logits = logits[0]
    return logits_to_predictions(task, np.asarray(logits))


def metrics_function(task: TaskSpec):
    """compute_metrics for the Trainer's per-epoch evaluation (no bootstrap: it is for monitoring)."""
    from nlue.scores import score_task

    def compute(prediction: Any) -> dict[str, float]:
        preds = predictions_from_logits(task, prediction.predictions)
        scores = score_task(task.name, preds, np.asarray(prediction.label_ids).reshape(-1))
        return {k: v for k, v in scores.items() if isinstance(v, float)}

    return compute


def load_tokenizer(model_args: ModelArguments) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(
        model_args.tokenizer_name or model_args.model_name_or_path, trust_remote_code=model_args.trust_remote_code
    )


def prepare_model(model_args: ModelArguments, lora_args: LoraArguments, task: TaskSpec) -> tuple[Any, str]:
    """A fresh classifier for ``task`` with the chosen parameters trainable, and a line saying which."""
    import torch
    from transformers import AutoConfig

    from nlue.lm.checkpoints import load_sequence_classifier
    from nlue.training.lora import wrap_with_lora
    from nlue.training.presets import apply_preset

    if lora_args.lora and model_args.extra_fc:
        raise NlueError("--extra_fc works with the parameter presets, not with --lora")
    source = model_args.model_name_or_path
    check_label_mapping(
        AutoConfig.from_pretrained(source, trust_remote_code=model_args.trust_remote_code), task, source
    )
    # float32 weights whatever the checkpoint holds: transformers 5 loads a checkpoint in its saved dtype, and
    # a bf16/fp16 checkpoint trained as is would keep half-precision master weights (AdamW updates below their
    # resolution are lost; fp16 ones make the Trainer's grad scaler fail). --precision sets autocast instead.
    model = load_sequence_classifier(
        source,
        trust_remote_code=model_args.trust_remote_code,
        dtype=torch.float32,
        **classifier_config_kwargs(task),
    )
    if lora_args.lora:
        return wrap_with_lora(model, lora_args), "LoRA adapters + head"
    try:
        summary = apply_preset(model, model_args.preset, extra_fc=model_args.extra_fc)
    except ValueError as exc:  # unknown preset, unsupported architecture, extra-FC mismatch: the user's to fix
        raise NlueError(f"{source}: {exc}") from None
    return model, summary.describe()


def build_trainer(
    model: Any,
    tokenizer: Any,
    task: TaskSpec,
    training_args: NlueTrainingArguments,
    train_dataset: Any,
    eval_dataset: Any,
    patience: int,
) -> Any:
    """A Trainer that evaluates every epoch and stops after ``patience`` epochs without a lower loss."""
    from transformers import DataCollatorWithPadding, EarlyStoppingCallback, Trainer
    from transformers.trainer_callback import PrinterCallback

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=metrics_function(task),
        callbacks=[EarlyStoppingCallback(patience)] if patience else [],
    )
    # One label per item, so each batch's loss is a plain mean over its items. transformers passes a count of
    # "items in the batch" to models whose forward takes **kwargs and then scales the loss for it: by the number
    # of processes (x2 in two processes, for a BERT head that ignores the count and averages anyway) and not by
    # the gradient accumulation steps. Off, the gradient is the mean over the effective batch in every layout
    # (issue 31, item 4: one process at batch 2B and two at B agree).
    trainer.model_accepts_loss_kwargs = False
    # Without progress bars the Trainer prints its logs; send them through logging instead.
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(_LogCallback())
    for name in ("get_eval_dataloader", "get_test_dataloader"):
        setattr(trainer, name, _every_item(trainer, getattr(trainer, name)))
    if training_args.world_size > 1:
        trainer.evaluation_loop = _item_mean_loss(trainer.evaluation_loop)
    return trainer


def _item_mean_loss(loop: Any) -> Any:
    """``loop`` (the Trainer's evaluation loop) with the loss recomputed as the mean over the items.

    In several processes the last batch of each process is topped up with repeated items so that all have the
    same number, and the Trainer takes one process's batch mean for the whole batch: the validation loss, which
    chooses the best checkpoint and stops training early, then weighs some items twice. The logits and labels
    it returns are the items' own (the repeats removed), and give the exact mean.
    """

    def run(*args: Any, **kwargs: Any) -> Any:
        output = loop(*args, **kwargs)
        key = f"{kwargs.get('metric_key_prefix', 'eval')}_loss"
        if key in output.metrics and output.predictions is not None and output.label_ids is not None:
            output.metrics[key] = item_mean_loss(output.predictions, output.label_ids)
        return output

    return run


def item_mean_loss(logits: Any, labels: Any) -> float:
    """The loss a sequence classifier averages over a batch: cross-entropy, or the squared error for one output."""
    scores = np.asarray(logits[0] if isinstance(logits, tuple) else logits, dtype=np.float64)
    labels = np.asarray(labels)
    if scores.ndim == 2 and scores.shape[1] == 1:  # regression (transformers: num_labels == 1)
        return float(np.mean((scores[:, 0] - labels.astype(np.float64)) ** 2))
    top = scores.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(scores - top).sum(axis=1))
    return float(np.mean(log_norm - scores[np.arange(len(labels)), labels.astype(np.int64)]))


def _every_item(trainer: Any, make_loader: Any) -> Any:
    """``make_loader`` with ``--dataloader_drop_last`` off: it is meant for training batches, but the Trainer
    applies it to its evaluation and test loaders too, where it would leave items out of the scores."""

    def build(*args: Any, **kwargs: Any) -> Any:
        before = trainer.args.dataloader_drop_last
        trainer.args.dataloader_drop_last = False
        try:
            return make_loader(*args, **kwargs)
        finally:
            trainer.args.dataloader_drop_last = before

    return build


class _LogCallback:
    """Trainer logs (loss, eval metrics per epoch) as INFO records of nlue's logger, main process only."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and logs:
            shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in logs.items())
            logger.info("epoch %.2f: %s", state.epoch or 0, shown)


def limit_split(dataset: Any, split: str, limit: int | None) -> Any:
    if split in dataset and limit is not None:
        dataset[split] = dataset[split].select(range(min(limit, dataset[split].num_rows)))
    return dataset


def last_checkpoint(output_dir: Path) -> str | None:
    """Resume an interrupted run from its newest checkpoint (none when starting fresh)."""
    from transformers.trainer_utils import get_last_checkpoint

    if not output_dir.is_dir():
        return None
    last = get_last_checkpoint(str(output_dir))
    if last:
        logger.info("resuming from %s", last)
    return last
