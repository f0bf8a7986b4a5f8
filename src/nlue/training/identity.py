"""The run identity of a fine-tuning run (:mod:`nlue.run_identity`) and the results folder it writes to.

What changes a fine-tuned model's test numbers: the base model (its folder's fingerprint or Hub
commit), the training and validation data, the test split, the preset or LoRA settings, the
hyperparameters, the precision, the seed (or seeds) and the bootstrap resamples. The number of
processes (``world_size``) is part of it: at the same effective batch it moves the numbers only through
the order of floating-point sums and each process's dropout draws (the training guide gives the measured
size), but whatever moves a number belongs here, so a two-process run never silently takes the place of a
one-process one. A run with
``--max_eval_samples`` scores part of the test split: it is partial, and its results folder's name
ends in ``-limit<N>`` (:func:`results_folder`), so it never takes the place of a complete run.
"""

from __future__ import annotations

from typing import Any

from nlue.lm.slug import model_slug
from nlue.run_identity import items_fingerprint, limit_suffix, local_model, run_identity, split_facts
from nlue.training.processes import effective_batch

# The Trainer's arguments that change what is learnt (beside the seed, recorded apart).
TRAINING_SETTINGS = ("learning_rate", "per_device_train_batch_size", "gradient_accumulation_steps",
                     "num_train_epochs", "weight_decay", "warmup_ratio", "warmup_steps", "lr_scheduler_type",
                     "max_grad_norm", "bf16", "fp16", "world_size")  # fmt: skip


def results_folder(name: str, data_args: Any) -> str:
    """The folder of a run's shared results: the results name, with ``-limit<N>`` for a cut test split."""
    return model_slug(name) + limit_suffix(data_args.max_eval_samples)


def training_identity(run: Any, data_args: Any, lora_args: Any, recipe_args: Any,
                      seeds: list[int] | None = None) -> dict[str, Any]:  # fmt: skip
    """The identity of fine-tuning ``run`` (a :class:`nlue.training.run.ResolvedRun`); ``seeds`` for ``--seeds N``."""
    from nlue.data.access import load_task
    from nlue.training.lora import lora_settings

    data = load_task(data_args.dataset, run.task)
    split = "test" if "test" in data else "validation"
    whole = data[split]
    scored = min(data_args.max_eval_samples or whole.num_rows, whole.num_rows)
    args = run.training_args
    settings: dict[str, Any] = {name: getattr(args, name, None) for name in TRAINING_SETTINGS}
    batch = effective_batch(args)
    if batch != args.per_device_train_batch_size:
        # Several batches behind one step (processes, accumulation, GPUs under DataParallel): the loss is the
        # mean over all of them since issue 31, item 4, where earlier versions scaled it by the process count
        # and not by the accumulation steps. Only such runs carry the key, so one-batch runs keep their identity.
        settings["effective_batch"] = batch
    for name, limit in (("train", data_args.max_train_samples), ("validation", data_args.max_eval_samples)):
        if name in data and name != split:
            rows = data[name] if limit is None else data[name].select(range(min(limit, data[name].num_rows)))
            settings[f"{name}_fingerprint"] = items_fingerprint(rows)
    settings.update(
        preset=None if lora_args.lora else run.model_args.preset,
        extra_fc=None if lora_args.lora else run.model_args.extra_fc,
        lora=lora_settings(lora_args) if lora_args.lora else None,
        early_stopping_patience=recipe_args.early_stopping_patience,
        max_seq_length=data_args.max_seq_length,
        max_train_samples=data_args.max_train_samples,
        bootstrap_resamples=recipe_args.bootstrap_resamples,
        seeds=seeds,
    )
    identity = run_identity(run.task.name, local_model(run.model_args.model_name_or_path, "fine-tune"),
                            split_facts(whole, scored), mode="fine-tune", limit=data_args.max_eval_samples,
                            seed=args.seed, split=split, settings=settings)  # fmt: skip
    identity["checkpoint"] = {"path": str(run.output_dir)}  # what `nlue evaluate` of it finds (nlue.run_identity)
    return identity


def with_checkpoint(identity: dict[str, Any], output_dir: Any) -> dict[str, Any]:
    """``identity`` with the fingerprint of the checkpoint the run wrote, so that scoring it again matches."""
    from nlue.lm.fingerprint import folder_fingerprint

    return {**identity, "checkpoint": {"path": str(output_dir), "fingerprint": folder_fingerprint(output_dir)}}
