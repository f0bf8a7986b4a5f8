"""Fast batched inference of a sequence classifier on an NLUE task.

The inputs are tokenised once, in one call; the items are sorted by their number of tokens
so that each batch pads only to its own longest item; each batch is cut from the token
arrays by indexing (no per-batch tokenisation, no Python work per token), run under
``torch.inference_mode`` (bf16 autocast on CUDA), and its rows are put back in the
original order. Shared by `nlue evaluate`, the search's fold scoring and the Space (which
load their models with :mod:`nlue.checkpoints`).

:func:`quantize_dynamic_int8` is an optional CPU speed-up (int8 Linear layers); it is
never applied unless asked for, since it changes the logits.

Measured on a BERT-base-size model (``benchmarks/eval_throughput.py``, README "Benchmarks").
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlue.registry.inputs import text_pair
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)


def _tokenise(
    tokenizer: Any, pairs: Sequence[tuple[str, str | None]], max_length: int
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """All items in one tokenizer call, padded to the longest: the model's input arrays and each item's length."""
    first = [a for a, _ in pairs]
    seconds = [b for _, b in pairs]
    second = None if all(b is None for b in seconds) else [b or "" for b in seconds]
    encoded = tokenizer(
        first,
        second,
        truncation=True,
        max_length=max_length,
        padding=True,
        return_attention_mask=True,
        return_tensors="np",
    )
    lengths = encoded["attention_mask"].sum(axis=1)
    wanted = set(getattr(tokenizer, "model_input_names", ())) or set(encoded)
    arrays = {name: np.asarray(value) for name, value in encoded.items() if name in wanted}
    return arrays, lengths


def predict_logits(
    model: Any,
    tokenizer: Any,
    task: TaskSpec,
    examples: Sequence[Mapping[str, Any]],
    batch_size: int = 64,
    max_length: int = 128,
    show_progress: bool = False,
) -> np.ndarray:
    """Logits, one row per example, in the order given.

    Each example's logits do not depend on the other examples in its batch (padding is
    masked), so the result equals one-by-one prediction up to float rounding.
    """
    import torch
    from tqdm.auto import tqdm

    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    pairs = [text_pair(task, example) for example in examples]
    if not pairs:
        return np.empty((0, task.num_labels), dtype=np.float32)
    arrays, lengths = _tokenise(tokenizer, pairs, max_length)
    width = next(iter(arrays.values())).shape[1]
    left = getattr(tokenizer, "padding_side", "right") == "left"
    # Longest first: the largest batch meets the allocator first, and a failure comes early.
    order = np.argsort(-lengths, kind="stable")
    device = next(model.parameters()).device
    use_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    outputs = np.empty(0, dtype=np.float32)
    starts = range(0, len(order), batch_size)
    with torch.inference_mode(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
        for start in tqdm(starts, desc=f"predicting {task.name}", disable=not show_progress, unit="batch"):
            index = order[start : start + batch_size]
            longest = int(lengths[index[0]])
            columns = slice(width - longest, width) if left else slice(0, longest)
            batch = {name: torch.from_numpy(values[index, columns]).to(device) for name, values in arrays.items()}
            logits = model(**batch).logits.float().cpu().numpy()
            if start == 0:
                outputs = np.empty((len(pairs), *logits.shape[1:]), dtype=np.float32)
            outputs[index] = logits
    return outputs


def quantize_dynamic_int8(model: Any) -> Any:
    """The model with its ``nn.Linear`` layers dynamically quantised to int8 (weights int8, activations
    quantised per batch), for faster CPU inference. CPU only; returns a quantised copy, ``model`` is left as it is.

    The logits change (typically by a few hundredths): compare predictions with the fp32 model
    before trusting scores made this way (``benchmarks/eval_throughput.py --int8`` reports both).
    """
    import torch

    device = next(model.parameters()).device
    if device.type != "cpu":
        raise ValueError(f"dynamic int8 quantisation runs on CPU only; the model is on {device}")
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao; it still works and needs no extra package.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*")
        from torch.ao.quantization import quantize_dynamic

        return quantize_dynamic(model.eval(), {torch.nn.Linear}, dtype=torch.qint8)


def logits_to_predictions(task: TaskSpec, logits: np.ndarray) -> np.ndarray:
    if task.kind.has_classes:
        return logits.argmax(axis=-1)
    return logits.reshape(-1).astype(np.float64)


def probabilities(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)
