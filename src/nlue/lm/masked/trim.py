"""The masked-LM's last layer computed only where a log-probability is read.

A scoring pass reads the vocabulary distribution at one to three masked positions of a
sequence of twenty-odd tokens. Every layer but the last must run at every position (the
next layer attends to all of them); the last layer's output is needed only at the
positions read. There its keys and values still come from every position, but its
query, attention output projection and feed-forward block run on the read positions
alone: about five sixths of that layer's work, 6% of a BERT-base pass, saved with the
same arithmetic on fewer rows (log-probabilities agree to float rounding; a test compares
rankings with and without it).

Only layers of the BERT layout are trimmed (BERT, RoBERTa, XLM-R, CamemBERT, ELECTRA:
``attention.self`` with query/key/value, ``attention.output``, ``intermediate``,
``output``) with absolute positions and SDPA or eager attention; any other model, or an
attention mask of an unexpected shape, runs its own forward unchanged. The selection is
thread-local, so concurrent scoring threads sharing one model cannot see each other's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_TRIMMED_LAYERS = {"BertLayer", "RobertaLayer", "XLMRobertaLayer", "CamembertLayer", "ElectraLayer"}
_SELECTION = threading.local()  # (rows, cols) of the positions read by this thread's current pass


def _last_layer(model: Any) -> Any | None:
    """The model's last encoder layer when it has the BERT layout trimmed here, else None."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "is_decoder", False):
        return None
    if getattr(config, "_attn_implementation", None) not in ("sdpa", "eager"):
        return None
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return None  # relative position scores inside attention are not reproduced here
    layers = getattr(getattr(getattr(model, "base_model", None), "encoder", None), "layer", None)
    if not layers:
        return None
    last = layers[-1]
    if type(last).__name__ not in _TRIMMED_LAYERS or getattr(last, "add_cross_attention", False):
        return None
    attention = getattr(last.attention, "self", None)
    needed = ("query", "key", "value", "num_attention_heads", "attention_head_size", "scaling")
    if attention is None or not all(hasattr(attention, name) for name in needed):
        return None
    return last


def _trimmed(layer: Any, hidden: Any, mask: Any, rows: Any, cols: Any) -> Any | None:
    """The layer's output with only ``(rows, cols)`` computed (the rest left as its input), or None."""
    import torch

    batch, length, width = hidden.shape
    if mask is not None:
        if mask.dim() != 4 or mask.shape[0] != batch or mask.shape[-1] != length:
            return None
        if mask.shape[-2] == length:
            mask = mask[rows, :, cols, :].unsqueeze(2)  # each read position's own row of the mask
        elif mask.shape[-2] == 1:
            mask = mask[rows]
        else:
            return None
    attention = layer.attention.self
    heads, size = attention.num_attention_heads, attention.attention_head_size

    def split(projected: Any) -> Any:
        return projected.view(batch, length, heads, size).transpose(1, 2)[rows]

    keys, values = split(attention.key(hidden)), split(attention.value(hidden))
    picked = hidden[rows, cols]
    queries = attention.query(picked).view(-1, heads, 1, size)
    mixed = torch.nn.functional.scaled_dot_product_attention(
        queries, keys, values, attn_mask=mask, scale=attention.scaling
    ).reshape(-1, width)
    attended = layer.attention.output(mixed, picked)
    out = hidden.clone()
    out[rows, cols] = layer.output(layer.intermediate(attended), attended)
    return out


def _forward(self: Any, hidden_states: Any, attention_mask: Any = None, *args: Any, **kwargs: Any) -> Any:
    """The trimmable layer's forward: trimmed inside :func:`reading_only` on this thread, its class's otherwise.

    Bound to the layer as a method (not a closure over it), so that a deep copy of the model
    binds it to the copy and pickling finds it by name.
    """
    selection = getattr(_SELECTION, "value", None)
    extras = (*args, kwargs.get("encoder_hidden_states"), kwargs.get("past_key_values"))
    if selection is not None and all(extra is None for extra in extras):  # no cross-attention, no cache
        out = _trimmed(self, hidden_states, attention_mask, *selection)
        if out is not None:
            _SELECTION.used = True
            return out
    return type(self).forward(self, hidden_states, attention_mask, *args, **kwargs)


def install(model: Any) -> bool:
    """Make the model's last layer trimmable (once); False when the model's layout is not one handled here."""
    import types

    layer = _last_layer(model)
    if layer is None:
        return False
    current = layer.__dict__.get("forward")
    if current is not None:  # already ours, or another library's wrapper (accelerate's device hooks): keep it
        return getattr(current, "__func__", None) is _forward
    layer.forward = types.MethodType(_forward, layer)
    return True


@contextmanager
def reading_only(rows: Any, cols: Any) -> Iterator[dict[str, bool]]:
    """Within this block, a trimmable model's last layer computes only ``(rows, cols)``; says whether it did."""
    state = {"trimmed": False}
    _SELECTION.value, _SELECTION.used = (rows, cols), False
    try:
        yield state
    finally:
        state["trimmed"] = bool(getattr(_SELECTION, "used", False))
        _SELECTION.value = None
