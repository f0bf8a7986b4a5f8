"""Parameter-subset presets I–VIII for fine-tuning an encoder on an NLUE task.

The NLUE paper (section 5) fine-tuned every model with eight configurations, I–VIII, that update
different parameter subsets, ranging from only the classification layer to all layers; the
figures that define each configuration are not in its text. **The definitions here are our
reading** (``PRESETS`` is the single definition; ``presets_markdown_table()`` renders it;
trainers/README.md, "How presets I–VIII were derived", gives the reasoning). The numerals run
from most to fewest trainable parameters: the paper's appendix E lists I as SA's best
configuration for all ten models while its text says that training only the classification layer
was not enough for SA, so I must be the widest subset. With ``L`` encoder layers and "top k"
meaning the last k layers (fractions round up; the head always trains):

====== =========================================================================
I      everything: embeddings + all L layers + head (full fine-tuning)
II     all L layers + head, embeddings frozen
III    head + top ⌈5L/6⌉ layers
IV     head + top ⌈2L/3⌉ layers (the upper and intermediate thirds)
V      head + top ⌈L/2⌉ layers
VI     head + top ⌈L/3⌉ layers (the upper third)
VII    head + top ⌈L/6⌉ layers
VIII   classification head only
====== =========================================================================

"Head" is every module that maps encoder output to logits (for BERT ``classifier`` and
``bert.pooler``); "embeddings" is every other base-model parameter outside the layer stack (the
embeddings, plus e.g. DeBERTa's ``encoder.rel_embeddings``); embeddings train only in I.

The paper tried configuration IV with and without an extra fully connected layer before the
classifier, so that layer does not define any configuration: it is an independent option
(``apply_preset(..., extra_fc=True)``, ``--extra_fc``) that works with every preset. The layer
(``Linear(d, d)`` → activation → dropout, newly initialised) sits immediately before the layer
that outputs the logits, on that layer's input: after BERT's pooler, DeBERTa's pooler,
DistilBERT's ``pre_classifier`` and after the dense+tanh of the RoBERTa/ELECTRA head. It is
recorded in the config (``nlue_extra_fc``), so ``load_sequence_classifier`` rebuilds it and loads
its saved weights; a plain ``AutoModelForSequenceClassification.from_pretrained`` would drop them.

Checkpoints record the preset as ``config.nlue_preset`` and this numbering as
``config.nlue_preset_scheme`` (``PRESET_SCHEME``). Checkpoints written before the numbering was
reversed have no ``nlue_preset_scheme``; their ``nlue_preset`` follows the old numbering (I was
head only, VII full fine-tuning, IV and VIII carried the extra layer). They still load: loading
reads only ``nlue_extra_fc``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from torch import nn

from nlue.errors import NlueError
from nlue.lm.extra_fc import add_extra_fc, has_extra_fc
from nlue.lm.families import EMBEDDINGS, HEAD, model_layout

logger = logging.getLogger(__name__)


PRESET_SCHEME = 2
"""Version of the preset numbering, stored in checkpoints as ``config.nlue_preset_scheme``.

1 (never stored) was the first numbering, from head only (I) to full fine-tuning plus the extra
layer (VIII); 2 is the current one, from full fine-tuning (I) to head only (VIII)."""


@dataclass(frozen=True)
class PresetSpec:
    """One parameter-subset preset: which groups of parameters train.

    The head always trains. ``layer_fraction`` of the ``L`` encoder layers train, counted from the
    top and rounded up; ``train_embeddings`` unfreezes the embeddings as well.
    """

    name: str
    description: str
    layer_fraction: Fraction
    train_embeddings: bool = False

    def num_layers(self, total_layers: int) -> int:
        """How many of ``total_layers`` encoder layers train (⌈fraction·L⌉)."""
        return math.ceil(self.layer_fraction * total_layers)

    def layers(self, total_layers: int) -> tuple[int, ...]:
        """Indices (0-based) of the encoder layers that train: the top ``num_layers``."""
        return tuple(range(total_layers - self.num_layers(total_layers), total_layers))


PRESETS: dict[str, PresetSpec] = {
    spec.name: spec
    for spec in (
        PresetSpec("I", "everything: embeddings, all L layers, head (full fine-tuning)", Fraction(1), True),
        PresetSpec("II", "head + all L layers (embeddings frozen)", Fraction(1)),
        PresetSpec("III", "head + top ⌈5L/6⌉ layers", Fraction(5, 6)),
        PresetSpec("IV", "head + top ⌈2L/3⌉ layers (upper and intermediate thirds)", Fraction(2, 3)),
        PresetSpec("V", "head + top ⌈L/2⌉ layers", Fraction(1, 2)),
        PresetSpec("VI", "head + top ⌈L/3⌉ layers (upper third)", Fraction(1, 3)),
        PresetSpec("VII", "head + top ⌈L/6⌉ layers", Fraction(1, 6)),
        PresetSpec("VIII", "classification head only", Fraction(0)),
    )
}
"""Presets I–VIII, our reading of the paper's fine-tuning configurations, widest first."""


def get_preset(preset: str) -> PresetSpec:
    """The spec of ``preset`` (case-insensitive); ValueError listing I..VIII for an unknown name."""
    spec = PRESETS.get(str(preset).strip().upper())
    if spec is None:
        raise NlueError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)}")
    return spec


def neighbouring_presets(preset: str) -> tuple[str, ...]:
    """``preset`` with the numerals just before and after it, in numeral order (``VI`` → V, VI, VII)."""
    names = list(PRESETS)
    position = names.index(get_preset(preset).name)
    return tuple(names[max(position - 1, 0) : position + 2])


def _human(count: int) -> str:
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if count >= size:
            value = count / size
            text = f"{value:.1f}".rstrip("0").rstrip(".") if value < 10 else f"{value:.0f}"
            return text + suffix
    return str(count)


@dataclass(frozen=True)
class PresetSummary:
    """What ``apply_preset`` left trainable."""

    preset: str
    family: str
    num_layers: int
    layers_trained: tuple[int, ...]
    train_embeddings: bool
    extra_fc: bool
    trainable_names: tuple[str, ...]
    trainable_params: int
    total_params: int

    def describe(self) -> str:
        """One line, e.g. ``preset VI: 29M of 86M parameters train (layers 8-11 of 12, head)``."""
        parts = ["embeddings"] if self.train_embeddings else []
        if self.layers_trained:
            parts.append(f"layers {self.layers_trained[0]}-{self.layers_trained[-1]} of {self.num_layers}")
        parts += ["extra FC", "head"] if self.extra_fc else ["head"]
        return (
            f"preset {self.preset}: {_human(self.trainable_params)} of {_human(self.total_params)} "
            f"parameters train ({', '.join(parts)})"
        )


def apply_preset(
    model: nn.Module,
    preset: str,
    extra_fc: bool = False,
    extra_fc_activation: str = "gelu",
    extra_fc_dropout: float | None = None,
) -> PresetSummary:
    """Set ``requires_grad`` of every parameter of a sequence classifier as ``preset`` defines.

    ``extra_fc`` inserts the extra fully connected layer (``add_extra_fc``; its dropout defaults to
    the model's classifier dropout), which always trains. A model that already has the layer (a
    checkpoint trained with it) keeps it with ``extra_fc=True`` and is refused without, so that
    what is recorded matches what trains. Records ``config.nlue_preset`` and
    ``config.nlue_preset_scheme``; logs and returns a ``PresetSummary``.
    """
    spec = get_preset(preset)
    layout = model_layout(model)
    if extra_fc:
        add_extra_fc(model, layout, extra_fc_activation, extra_fc_dropout)
    elif has_extra_fc(model, layout):
        raise NlueError(
            f"this model already has the extra FC layer (nlue_extra_fc in its config): train it with extra_fc "
            f"(--extra_fc) to keep it, or start from a checkpoint without it (preset {spec.name})"
        )
    layers = set(spec.layers(layout.num_layers))
    trainable, total, names = 0, 0, []
    for name, param in model.named_parameters():
        group = layout.group(name)
        train = group == HEAD or group in layers or (group == EMBEDDINGS and spec.train_embeddings)
        param.requires_grad_(train)
        total += param.numel()
        if train:
            trainable += param.numel()
            names.append(name)
    model.config.nlue_preset = spec.name
    model.config.nlue_preset_scheme = PRESET_SCHEME
    summary = PresetSummary(
        spec.name,
        layout.family,
        layout.num_layers,
        tuple(sorted(layers)),
        spec.train_embeddings,
        extra_fc,
        tuple(names),
        trainable,
        total,
    )
    logger.info(summary.describe())
    return summary


def __getattr__(name: str) -> Any:
    # Names that moved out of this module keep working for old imports.
    if name == "load_sequence_classifier":
        from nlue.lm.checkpoints import load_sequence_classifier

        return load_sequence_classifier
    raise AttributeError(f"module 'nlue.training.presets' has no attribute {name!r}")
