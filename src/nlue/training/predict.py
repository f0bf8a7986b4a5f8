"""Fast batched inference of a sequence classifier on an NLUE task.

The inputs are tokenised once, in one call, padded on the right whatever the tokenizer's
own ``padding_side`` (left padding would shift the absolute positions of BERT-style
encoders and change their logits); the items are sorted by their number of tokens so that
each batch pads only to its own longest item; each batch is cut from the token arrays by
indexing (no per-batch tokenisation, no Python work per token), run under
``torch.inference_mode`` (bf16 autocast on CUDA), and its rows are put back in the
original order. Shared by `nlue evaluate`, the search's fold scoring and the Space (which
load their models with :mod:`nlue.lm.checkpoints`).

:func:`quantize_dynamic_int8` is an optional CPU speed-up (int8 Linear layers); it is
never applied unless asked for, since it changes the logits.

Measured on a BERT-base-size model (``benchmarks/eval_throughput.py``, README "Benchmarks").
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.registry.inputs import text_pair
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)

# glibc's mallopt parameters (malloc.h) and the values set by _keep_freed_memory.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_KEEP_BYTES = 1 << 30
_memory_kept = False
# A call of at least this many tokens runs through the fused CPU view (nlue.training.cpu_fusion).
# Its first use on a model packs the weights and keeps a second copy of them: 0.06-0.6 s at
# BERT-base size on the 2-core machine (fresh memory is the slow part), against a saving of about
# 4% of 0.48 ms per token, so it repays itself after 3K-31K tokens whatever the model's size (both
# scale with the weights). Below this, as for a Space request or a unit test, the model's own
# modules run.
CPU_FUSION_MIN_TOKENS = 32_768


def _keep_freed_memory() -> None:
    """Ask glibc's allocator to keep freed blocks for reuse instead of returning them to the kernel.

    Why: a forward pass allocates and frees activations of tens of MiB per layer. With glibc's
    defaults the large ones are mmap-ed and unmapped, or trimmed off the heap, so the next
    batch touches fresh pages and takes a page fault per 4 KiB: about 400,000 faults and 5-10%
    of the CPU time of a BERT-base pass over 128 pairs on the 2-core machine, gone with this
    setting. The cost is that the process keeps its peak memory instead of shrinking between
    batches. Process-wide, done once; a no-op off Linux or without glibc (musl, macOS).
    """
    global _memory_kept
    if _memory_kept or not sys.platform.startswith("linux"):
        return
    _memory_kept = True
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        logger.debug("no glibc mallopt; freed memory goes back to the kernel as usual")
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    kept = mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES) and mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES)
    logger.debug("glibc keeps freed blocks up to %d bytes: %s", _KEEP_BYTES, bool(kept))


def _tokenise(
    tokenizer: Any, pairs: Sequence[tuple[str, str | None]], max_length: int
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """All items in one tokenizer call, right-padded to the longest: the model's input arrays and each item's length."""
    first = [a for a, _ in pairs]
    seconds = [b for _, b in pairs]
    second = None if all(b is None for b in seconds) else [b or "" for b in seconds]
    encoded = tokenizer(
        first,
        second,
        truncation=True,
        max_length=max_length,
        padding=True,
        padding_side="right",
        return_attention_mask=True,
        return_tensors="np",
    )
    lengths = encoded["attention_mask"].sum(axis=1)
    wanted = set(getattr(tokenizer, "model_input_names", ())) or set(encoded)
    arrays = {name: np.asarray(value) for name, value in encoded.items() if name in wanted}
    return arrays, lengths


def cpu_fusion_applies(device_type: str, total_tokens: int, requested: bool = True) -> bool:
    """Whether :func:`predict_logits` runs a call of ``total_tokens`` tokens through the fused CPU view."""
    return (
        device_type == "cpu"
        and requested
        and os.environ.get("NLUE_CPU_FUSION", "1") != "0"
        and total_tokens >= CPU_FUSION_MIN_TOKENS
    )


def predict_logits(
    model: Any,
    tokenizer: Any,
    task: TaskSpec,
    examples: Sequence[Mapping[str, Any]],
    batch_size: int = 64,
    max_length: int = 128,
    show_progress: bool = False,
    cpu_fusion: bool = True,
) -> np.ndarray:
    """Logits, one row per example, in the order given (float32, shape ``(len(examples), outputs)``).

    Each example's logits do not depend on the other examples in its batch (padding is on
    the right and masked), so the result equals one-by-one prediction up to float rounding.
    On a CPU, with ``cpu_fusion`` and at least :data:`CPU_FUSION_MIN_TOKENS` tokens in all, the
    model runs through :func:`nlue.training.cpu_fusion.fused_view` (packed weights; projection
    and GELU / residual add in one oneDNN call; the same logits up to float rounding);
    ``cpu_fusion=False`` (or the environment variable ``NLUE_CPU_FUSION=0``, for the CLI and
    the Space) always runs the model's own modules.
    """
    import torch
    from tqdm.auto import tqdm

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise NlueError(f"predicting {task.name}: batch_size must be a whole number of at least 1, got {batch_size!r}")
    pairs = [text_pair(task, example) for example in examples]
    if not pairs:
        return np.empty((0, task.num_labels), dtype=np.float32)
    arrays, lengths = _tokenise(tokenizer, pairs, max_length)
    # Longest first: the largest batch meets the allocator first, and a failure comes early.
    order = np.argsort(-lengths, kind="stable")
    device = next(model.parameters()).device
    if device.type == "cpu":
        _keep_freed_memory()
        if cpu_fusion_applies(device.type, int(lengths.sum()), cpu_fusion):
            from nlue.training.cpu_fusion import fused_view

            model = fused_view(model) or model
    use_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    outputs = np.empty(0, dtype=np.float32)
    starts = range(0, len(order), batch_size)
    with torch.inference_mode(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
        for start in tqdm(starts, desc=f"predicting {task.name}", disable=not show_progress, unit="batch"):
            index = order[start : start + batch_size]
            longest = int(lengths[index[0]])  # sorted: the first item of a batch is its longest
            batch = {name: torch.from_numpy(values[index, :longest]).to(device) for name, values in arrays.items()}
            logits = model(**batch).logits.float().cpu().numpy()
            if start == 0:
                outputs = np.empty((len(pairs), *logits.shape[1:]), dtype=np.float32)
            outputs[index] = logits
    return outputs


def quantize_dynamic_int8(model: Any) -> Any:
    """The model with its ``nn.Linear`` layers dynamically quantised to int8 (weights int8, activations
    quantised per batch), for faster CPU inference. CPU only; returns a quantised copy (``model`` is only
    switched to eval mode).

    The logits change (typically by a few hundredths): compare predictions with the fp32 model
    before trusting scores made this way (``benchmarks/eval_throughput.py --int8`` reports both).
    """
    import torch

    device = next(model.parameters()).device
    if device.type != "cpu":
        raise NlueError(f"dynamic int8 quantisation runs on CPU only; the model is on {device}")
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao; it still works and needs no extra package.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*")
        from torch.ao.quantization import quantize_dynamic

        return quantize_dynamic(model.eval(), {torch.nn.Linear}, dtype=torch.qint8)


def logits_to_predictions(task: TaskSpec, logits: np.ndarray) -> np.ndarray:
    """Class ids (argmax) for a task with classes; the single output as a float score otherwise."""
    if task.kind.has_classes:
        return logits.argmax(axis=-1)
    return logits.reshape(-1).astype(np.float64)


def probabilities(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, shifted by the row maximum so that large logits do not overflow."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def logit_rows(task: TaskSpec, items: list[dict[str, Any]], logits: np.ndarray) -> list[dict[str, Any]]:
    """Per-item prediction rows (:mod:`nlue.predictions`) of a classifier's outputs: the prediction, the logits."""
    from nlue.predictions import prediction_rows

    predictions = logits_to_predictions(task, logits)
    golds = [item[str(task.label_field)] for item in items]
    extras = [{"logits": np.round(row, 5)} for row in logits] if task.kind.has_classes else None
    return prediction_rows(task, items, predictions, golds, extras)
