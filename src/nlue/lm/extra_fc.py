"""The optional extra fully connected layer before the classifier (the paper tried it with config IV).

``Linear(d, d)`` → activation → dropout, newly initialised, on the input of the layer
that outputs the logits. It is recorded in the config (``nlue_extra_fc``), so
:func:`nlue.lm.checkpoints.load_sequence_classifier` rebuilds it and loads its saved weights;
a plain ``AutoModelForSequenceClassification.from_pretrained`` would drop them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from nlue.errors import NlueError
from nlue.lm.families import ModelLayout, model_layout

EXTRA_FC_NAME = "extra_fc"
"""Attribute of the logits layer that holds the extra fully connected layer."""


class ExtraFC(nn.Module):
    """``Linear(d, d)`` → activation → dropout: the optional extra layer before the classifier."""

    def __init__(self, size: int, activation: str = "gelu", dropout: float = 0.1) -> None:
        from transformers.activations import ACT2FN

        super().__init__()
        self.dense = nn.Linear(size, size)
        self.activation = ACT2FN[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.activation(self.dense(x)))


class LinearWithExtraFC(nn.Linear):
    """The logits layer with ``extra_fc`` applied to its input.

    It keeps the original ``weight`` and ``bias`` (same parameter objects, same state-dict names),
    so only ``<logits>.extra_fc.*`` is new in the state dict.
    """

    def __init__(self, logits: nn.Linear, extra_fc: ExtraFC) -> None:
        super().__init__(
            logits.in_features,
            logits.out_features,
            bias=logits.bias is not None,
            device="meta",
            dtype=logits.weight.dtype,
        )
        self.weight = logits.weight
        self.bias = logits.bias
        self.extra_fc = extra_fc

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(self.extra_fc(x))


def _default_dropout(config: Any) -> float:
    for name in ("classifier_dropout", "cls_dropout", "seq_classif_dropout", "hidden_dropout_prob", "dropout"):
        value = getattr(config, name, None)
        if value is not None:
            return float(value)
    return 0.1


def has_extra_fc(model: nn.Module, layout: ModelLayout | None = None) -> bool:
    """Whether the model's logits layer already carries the extra fully connected layer."""
    layout = layout or model_layout(model)
    return isinstance(model.get_submodule(layout.logits), LinearWithExtraFC)


def add_extra_fc(
    model: nn.Module, layout: ModelLayout | None = None, activation: str = "gelu", dropout: float | None = None
) -> ExtraFC:
    """Insert the extra layer before the logits layer (a no-op when present) and record it in the config.

    A new layer gets ``normal(0, initializer_range)`` weights and zero bias, on the device, dtype and
    train/eval mode of the logits layer. The config gets ``nlue_extra_fc = True``,
    ``nlue_extra_fc_activation`` and ``nlue_extra_fc_dropout``.
    """
    layout = layout or model_layout(model)
    logits = model.get_submodule(layout.logits)
    if isinstance(logits, LinearWithExtraFC):
        return logits.extra_fc
    if not isinstance(logits, nn.Linear):
        raise NlueError(f"expected a Linear logits layer at {layout.logits!r}, got {type(logits).__name__}")
    config = model.config
    dropout = _default_dropout(config) if dropout is None else dropout
    extra = ExtraFC(logits.in_features, activation, dropout)
    nn.init.normal_(extra.dense.weight, std=getattr(config, "initializer_range", 0.02))
    nn.init.zeros_(extra.dense.bias)
    extra.to(device=logits.weight.device, dtype=logits.weight.dtype).train(logits.training)
    model.set_submodule(layout.logits, LinearWithExtraFC(logits, extra))
    config.nlue_extra_fc = True
    config.nlue_extra_fc_activation = activation
    config.nlue_extra_fc_dropout = dropout
    return extra
