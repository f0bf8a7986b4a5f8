"""neDIOM few-shot: fine-tune a classifier on the 5- or 10-per-label set, once per seed, and predict the test set.

The paper fine-tunes (not in-context) on 10 or 20 items with AdamW for 3 epochs and
states no learning rate, batch size, head or seed (facts §5, §8 ambiguity 3). Ours:

* the model is a fresh sequence-classification head on the given checkpoint (an encoder,
  or a causal LM with a classification head), loaded and made trainable by the same
  pieces as ``nlue train`` (:mod:`nlue.training.recipe`: registry labels, preset I, i.e.
  every parameter trains), with the recipe's Trainer;
* the training items are the k-shot set (:func:`nlue.idioms.split.shots`: the first k per
  label of the pool). The pool is fixed, so **every seed trains on the same items**; the
  seed changes the new head's initial weights, dropout and the order of the batches;
* 3 epochs (the paper's), learning rate 2e-5 and batch size 8 by default (ours); there is
  no validation split to stop on (20 items leave none), so the last epoch's model is the
  one scored, and no checkpoint is kept: a few-shot run is a measurement, not a model;
* inputs are the variant's text or text pair (:func:`nlue.registry.kinds.idiomaticity.variant_input`),
  cut to ``max_seq_length`` tokens (default 512, and never past what the tokenizer allows).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.registry.kinds.idiomaticity import InputVariant, variant_input
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)

PAPER_EPOCHS = 3


@dataclass(frozen=True)
class FewShotSettings:
    """What a few-shot run trains with (defaults: the paper's epochs, our learning rate and batch size)."""

    epochs: float = PAPER_EPOCHS
    learning_rate: float = 2e-5
    batch_size: int = 8
    max_seq_length: int = 512
    precision: str = "auto"

    def describe(self) -> dict[str, Any]:
        return {
            "optimizer": "AdamW (the Trainer's default)",
            "num_train_epochs": self.epochs,
            "learning_rate": self.learning_rate,
            "per_device_train_batch_size": self.batch_size,
            "max_seq_length": self.max_seq_length,
            "trainable": "every parameter (preset I) and a new classification head",
            "model_selection": "none: the model after the last epoch (no validation split)",
        }


def _encode(items: Sequence[Mapping[str, Any]], variant: InputVariant, tokenizer: Any, max_length: int) -> Any:
    import datasets

    pairs = [variant_input(item, variant) for item in items]
    first = [p[0] for p in pairs]
    second = [p[1] for p in pairs] if variant.with_idiom else None
    encoded = dict(tokenizer(first, second, truncation=True, max_length=max_length))
    encoded["labels"] = [int(item["label"]) for item in items]
    return datasets.Dataset.from_dict(encoded)


def train_and_predict(
    model: str,
    task: TaskSpec,
    train_items: Sequence[Mapping[str, Any]],
    test_items: Sequence[Mapping[str, Any]],
    variant: InputVariant,
    seed: int,
    settings: FewShotSettings,
) -> np.ndarray:
    """Fine-tune a fresh head on ``train_items`` with ``seed``; return the predicted label ids of ``test_items``."""
    import transformers

    from nlue.training.args import LoraArguments, ModelArguments, NlueTrainingArguments
    from nlue.training.recipe import (
        build_trainer,
        load_tokenizer,
        predictions_from_logits,
        prepare_model,
        resolve_precision,
    )

    model_args = ModelArguments(model_name_or_path=model, preset="I")
    transformers.set_seed(seed)  # before the head is built: the seed decides its initial weights
    try:
        tokenizer = load_tokenizer(model_args)
        classifier, _ = prepare_model(model_args, LoraArguments(), task)
    except (OSError, ValueError) as exc:
        raise NlueError(f"--model {model!r}: cannot load it as a sequence classifier ({exc})") from None
    if tokenizer.pad_token is None:  # causal LMs often have none; batches of one text pair need it
        tokenizer.pad_token = tokenizer.eos_token
    if classifier.config.pad_token_id is None:
        classifier.config.pad_token_id = tokenizer.pad_token_id
    limit = min(settings.max_seq_length, tokenizer.model_max_length or settings.max_seq_length)
    train = _encode(train_items, variant, tokenizer, limit)
    test = _encode(test_items, variant, tokenizer, limit)
    with tempfile.TemporaryDirectory(prefix="nlue-nediom-") as scratch:
        args = NlueTrainingArguments(
            output_dir=scratch, num_train_epochs=settings.epochs, learning_rate=settings.learning_rate,
            per_device_train_batch_size=settings.batch_size, eval_strategy="no", save_strategy="no",
            logging_strategy="no", load_best_model_at_end=False, seed=seed, data_seed=seed, report_to=[],
            disable_tqdm=True, **resolve_precision(settings.precision),
        )  # fmt: skip
        trainer = build_trainer(classifier, tokenizer, task, args, train, None, patience=0)
        trainer.train()
        logits = trainer.predict(test).predictions
    return np.asarray(predictions_from_logits(task, logits), dtype=np.int64)


def run_seeds(
    model: str,
    task: TaskSpec,
    train_items: Sequence[Mapping[str, Any]],
    test_items: Sequence[Mapping[str, Any]],
    variant: InputVariant,
    seeds: Sequence[int],
    settings: FewShotSettings,
) -> np.ndarray:
    """Predictions of one run per seed, shape (seeds, test items)."""
    runs = []
    for seed in seeds:
        logger.info("%s: %d-item training set, seed %d", variant.name, len(train_items), seed)
        runs.append(train_and_predict(model, task, train_items, test_items, variant, seed, settings))
    return np.stack(runs)
