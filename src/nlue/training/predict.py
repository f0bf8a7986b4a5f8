"""Fast batched inference of a sequence classifier on an NLUE task.

Inputs are sorted by length so that each batch pads little, run under
``torch.inference_mode`` (bf16 autocast on CUDA), and put back in the original order.
Shared by `nlue evaluate`, the search's fold scoring and the Space (which load their
models with :mod:`nlue.checkpoints`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlue.registry.inputs import text_pair
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)


def predict_logits(
    model: Any,
    tokenizer: Any,
    task: TaskSpec,
    examples: Sequence[Mapping[str, Any]],
    batch_size: int = 64,
    max_length: int = 128,
    show_progress: bool = False,
) -> np.ndarray:
    """Logits, one row per example, in the order given."""
    import torch
    from tqdm.auto import tqdm

    pairs = [text_pair(task, example) for example in examples]
    order = np.argsort([-(len(a) + len(b or "")) for a, b in pairs], kind="stable")
    device = next(model.parameters()).device
    use_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    outputs: list[np.ndarray] = [np.empty(0)] * len(pairs)
    batches = range(0, len(order), batch_size)
    for start in tqdm(batches, desc=f"predicting {task.name}", disable=not show_progress, unit="batch"):
        index = order[start : start + batch_size]
        first = [pairs[i][0] for i in index]
        second = [pairs[i][1] for i in index]
        encoded = tokenizer(
            first,
            None if all(s is None for s in second) else [s or "" for s in second],
            truncation=True,
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        ).to(device)
        with torch.inference_mode(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(**encoded).logits.float().cpu().numpy()
        for row, i in zip(logits, index, strict=True):
            outputs[i] = row
    return np.stack(outputs) if outputs else np.empty((0, task.num_labels))


def logits_to_predictions(task: TaskSpec, logits: np.ndarray) -> np.ndarray:
    if task.kind.has_classes:
        return logits.argmax(axis=-1)
    return logits.reshape(-1).astype(np.float64)


def probabilities(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)
