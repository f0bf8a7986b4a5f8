"""The tiny-encoder demonstration of the fine-tuning recipe, for the offline main job.

No pretrained Nepali model can be fetched here. The main job's baseline on every task is
the non-neural :mod:`nlue.lm.baselines.tfidf`; this module shows the fine-tuning recipe itself
working end to end: a tiny BERT (4 layers, hidden size 32, random initialisation, a
WordPiece vocabulary learned from the sample corpus) fine-tuned with the normal recipe,
by default with LoRA, on the tasks asked for (the main job asks for one). Its scores are a
floor, nothing more: the model is named `tiny-bert-baseline` and its results are marked
as sample data.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from nlue.registry.tasks import TASK_NAMES, TASKS
from nlue.results import RunResult

logger = logging.getLogger(__name__)

BASELINE_NAME = "tiny-bert-baseline"


def train_baselines(
    dataset: str | None,
    out: Path,
    results_dir: Path,
    epochs: int = 10,
    seed: int = 42,
    tasks: Sequence[str] | None = None,
    lora: bool = False,
) -> dict[str, RunResult]:
    """Fine-tune the tiny encoder on ``tasks`` (default: every trainable NLUE task); each task's result.

    ``lora`` trains LoRA adapters (and the head) instead of every parameter: the main job's
    demonstration of the adapter path, which the Space serves as well.
    """
    from nlue.lm.tiny import save_tiny_encoder
    from nlue.training.args import DataArguments, LoraArguments, ModelArguments, NlueTrainingArguments, RecipeArguments
    from nlue.training.run import run_training

    encoder = out / "tiny-bert-encoder"
    if not (encoder / "config.json").is_file():
        save_tiny_encoder(encoder, "bert", seed=seed)
    outcomes: dict[str, RunResult] = {}
    for task in (TASKS[name] for name in (tasks or TASK_NAMES)):
        if not task.kind.trainable:
            continue
        outcome = run_training(
            ModelArguments(model_name_or_path=str(encoder), preset="I"),
            DataArguments(task=task.name, dataset=dataset),
            LoraArguments(lora=lora, lora_r=8, lora_alpha=16),
            RecipeArguments(
                results_dir=str(results_dir),
                results_name=BASELINE_NAME,
                results_kind="baseline",
                bootstrap_resamples=1000,
                early_stopping_patience=0,  # ten validation items are too few to stop on
                resume=False,
            ),
            NlueTrainingArguments(
                output_dir=str(out / task.name),
                num_train_epochs=float(epochs),
                learning_rate=5e-3,  # a from-scratch tiny model needs a far larger step than a pretrained one
                per_device_train_batch_size=4,
                seed=seed,
                disable_tqdm=True,
                save_strategy="no",
                eval_strategy="no",  # no early stopping here, so per-epoch validation would be wasted work
                load_best_model_at_end=False,
            ),
        )
        outcomes[task.name] = outcome.result
    return outcomes
