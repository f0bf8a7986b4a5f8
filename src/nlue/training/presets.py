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

import contextlib
import json
import logging
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import torch
from torch import nn

logger = logging.getLogger(__name__)

EXTRA_FC_NAME = "extra_fc"
"""Attribute of the logits layer that holds the extra fully connected layer."""

HEAD, EMBEDDINGS = "head", "embeddings"


# ---------------------------------------------------------------------------------------------
# The presets
# ---------------------------------------------------------------------------------------------


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
        raise ValueError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)}")
    return spec


def neighbouring_presets(preset: str) -> tuple[str, ...]:
    """``preset`` with the numerals just before and after it, in numeral order (``VI`` → V, VI, VII)."""
    names = list(PRESETS)
    position = names.index(get_preset(preset).name)
    return tuple(names[max(position - 1, 0) : position + 2])


# ---------------------------------------------------------------------------------------------
# Model families: where the layers, the head and the logits layer are
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FamilySpec:
    """Where a family keeps its layers and head (``{base}`` is ``model.base_model_prefix``)."""

    name: str
    model_types: tuple[str, ...]
    layers: str
    head: tuple[str, ...]
    logits: str
    embeddings_doc: str
    extra_fc_doc: str


FAMILIES: tuple[FamilySpec, ...] = (
    FamilySpec(
        "bert",
        ("bert",),
        "{base}.encoder.layer",
        ("classifier", "{base}.pooler"),
        "classifier",
        "`bert.embeddings`",
        "input of `classifier`: the pooled [CLS] vector after dropout",
    ),
    FamilySpec(
        "roberta",
        ("roberta", "xlm-roberta", "camembert"),
        "{base}.encoder.layer",
        ("classifier",),
        "classifier.out_proj",
        "`roberta.embeddings`",
        "input of `classifier.out_proj`: the first-token vector after the head's dense, tanh, dropout",
    ),
    FamilySpec(
        "deberta",
        ("deberta", "deberta-v2"),
        "{base}.encoder.layer",
        ("classifier", "pooler"),
        "classifier",
        "`deberta.embeddings`, `deberta.encoder.rel_embeddings`, `deberta.encoder.LayerNorm` (if present)",
        "input of `classifier`: the pooled first-token vector after dropout",
    ),
    FamilySpec(
        "distilbert",
        ("distilbert",),
        "{base}.transformer.layer",
        ("pre_classifier", "classifier"),
        "classifier",
        "`distilbert.embeddings`",
        "input of `classifier`: after `pre_classifier`, ReLU, dropout",
    ),
    FamilySpec(
        "electra",
        ("electra",),
        "{base}.encoder.layer",
        ("classifier",),
        "classifier.out_proj",
        "`electra.embeddings`, `electra.embeddings_project` (if present)",
        "input of `classifier.out_proj`: the first-token vector after the head's dense, activation, dropout",
    ),
)
"""Families supported explicitly; any other architecture goes through ``_generic_layout``."""

_FAMILY_OF: dict[str, FamilySpec] = {model_type: fam for fam in FAMILIES for model_type in fam.model_types}


@dataclass(frozen=True)
class ModelLayout:
    """Resolved module paths of one model: the layer stack, the head and the logits layer."""

    family: str
    base: str
    layers: str
    num_layers: int
    head: tuple[str, ...]
    logits: str

    def group(self, param_name: str) -> int | str:
        """The group of a parameter: its layer index, ``"head"`` or ``"embeddings"``."""
        if param_name.startswith(self.layers + "."):
            return int(param_name[len(self.layers) + 1 :].split(".", 1)[0])
        if any(param_name.startswith(prefix + ".") for prefix in self.head):
            return HEAD
        if param_name.startswith(self.base + "."):
            return EMBEDDINGS
        raise ValueError(f"parameter {param_name!r} is in no preset group of the {self.family} layout")


def _supported_message() -> str:
    return "; ".join(f"{fam.name} ({', '.join(fam.model_types)})" for fam in FAMILIES)


def _layer_count(model: nn.Module, path: str) -> int:
    stack = model.get_submodule(path)
    if not isinstance(stack, nn.ModuleList):
        raise ValueError(f"expected the layer stack at {path!r} to be a ModuleList, got {type(stack).__name__}")
    return len(stack)


def _known_layout(model: nn.Module, fam: FamilySpec) -> ModelLayout:
    base = model.base_model_prefix
    layers = fam.layers.format(base=base)
    head = tuple(prefix.format(base=base) for prefix in fam.head)
    return ModelLayout(fam.name, base, layers, _layer_count(model, layers), head, fam.logits)


def _generic_layout(model: nn.Module) -> ModelLayout:
    """Fallback for other encoders: the one ModuleList of ``num_hidden_layers`` modules under the base
    model is the layer stack; everything outside the base model plus ``<base>.pooler`` is the head;
    the last Linear outside the base model with ``num_labels`` outputs is the logits layer."""
    config = model.config
    base = model.base_model_prefix
    why = None
    base_module = getattr(model, base, None) if base else None
    num_layers = getattr(config, "num_hidden_layers", None)
    if base_module is None or num_layers is None:
        why = "it has no base model or no num_hidden_layers"
    else:
        stacks = [
            f"{base}.{name}"
            for name, module in base_module.named_modules()
            if isinstance(module, nn.ModuleList) and len(module) == num_layers
        ]
        logits = [
            name
            for name, module in model.named_modules()
            if isinstance(module, nn.Linear)
            and not name.startswith(base + ".")
            and module.out_features == config.num_labels
        ]
        if len(stacks) != 1:
            why = f"found {len(stacks)} ModuleLists of {num_layers} layers under {base!r}, expected one"
        elif not logits:
            why = f"found no Linear with {config.num_labels} outputs outside {base!r}"
    if why is not None:
        raise ValueError(
            f"cannot apply presets to model_type {config.model_type!r}: {why}. "
            f"Supported families: {_supported_message()}"
        )
    head = tuple(name for name, _ in model.named_children() if name != base)
    if hasattr(base_module, "pooler"):
        head += (f"{base}.pooler",)
    logger.warning("model_type %r is not a known family; generic layout: layers at %s", config.model_type, stacks[0])
    return ModelLayout(f"generic:{config.model_type}", base, stacks[0], num_layers, head, logits[-1])


def model_layout(model: nn.Module) -> ModelLayout:
    """The layout of a sequence classifier, from ``model.config.model_type``."""
    fam = _FAMILY_OF.get(model.config.model_type)
    return _known_layout(model, fam) if fam is not None else _generic_layout(model)


# ---------------------------------------------------------------------------------------------
# The extra fully connected layer
# ---------------------------------------------------------------------------------------------


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
        raise ValueError(f"expected a Linear logits layer at {layout.logits!r}, got {type(logits).__name__}")
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


# ---------------------------------------------------------------------------------------------
# Applying a preset
# ---------------------------------------------------------------------------------------------


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
        raise ValueError(
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


# ---------------------------------------------------------------------------------------------
# Loading a checkpoint that may carry the extra layer
# ---------------------------------------------------------------------------------------------

_HUB_KWARGS = ("cache_dir", "force_download", "local_files_only", "token", "revision", "subfolder")


@contextlib.contextmanager
def _quiet_load_report() -> Iterator[None]:
    """Drop transformers' load report when it names the extra FC: those keys are expected, and
    ``_check_load`` turns any other problem of the report into an error."""
    report_logger = logging.getLogger("transformers.modeling_utils")

    def keep(record: logging.LogRecord) -> bool:
        return EXTRA_FC_NAME not in record.getMessage()

    report_logger.addFilter(keep)
    try:
        yield
    finally:
        report_logger.removeFilter(keep)


def _checkpoint_tensors(path_or_id: str | os.PathLike, keys: set[str], hub: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Read ``keys`` from a safetensors checkpoint (single file or sharded), local or on the Hub."""
    from safetensors import safe_open
    from transformers.utils import SAFE_WEIGHTS_INDEX_NAME, SAFE_WEIGHTS_NAME, cached_file

    def resolve(filename: str) -> str | None:
        return cached_file(path_or_id, filename, _raise_exceptions_for_missing_entries=False, **hub)

    single = resolve(SAFE_WEIGHTS_NAME)
    if single is not None:
        files = {key: single for key in keys}
    else:
        index = resolve(SAFE_WEIGHTS_INDEX_NAME)
        if index is None:
            raise ValueError(f"{path_or_id}: the extra FC layer can be loaded from safetensors checkpoints only")
        with open(index, encoding="utf-8") as handle:
            weight_map = json.load(handle)["weight_map"]
        files = {key: resolve(weight_map[key]) for key in keys if key in weight_map}
    tensors: dict[str, torch.Tensor] = {}
    for file in set(files.values()):
        with safe_open(file, framework="pt") as handle:
            tensors.update({key: handle.get_tensor(key) for key in keys if files.get(key) == file})
    return tensors


def _check_load(path_or_id: str | os.PathLike, info: dict[str, Any], expected: set[str]) -> None:
    """Raise unless the checkpoint matched the model exactly, apart from the extra-FC keys."""
    problems = []
    if info.get("missing_keys"):
        problems.append(f"missing keys {sorted(info['missing_keys'])}")
    if info.get("mismatched_keys"):
        problems.append(f"mismatched keys {sorted(info['mismatched_keys'])}")
    unexpected = set(info.get("unexpected_keys") or ())
    if unexpected != expected:
        problems.append(f"unexpected keys {sorted(unexpected)}, expected exactly the extra FC {sorted(expected)}")
    if problems:
        raise ValueError(f"{path_or_id}: checkpoint does not match its extra-FC config: " + "; ".join(problems))


def load_sequence_classifier(path_or_id: str | os.PathLike, **kwargs: Any) -> Any:
    """``AutoModelForSequenceClassification.from_pretrained`` that restores the extra FC layer.

    Without ``nlue_extra_fc`` in the config this is the plain call (any checkpoint, base models
    included). With it, the model is loaded, the layer is rebuilt from the config, its saved
    weights are read from the checkpoint and loaded strictly, and any other missing, mismatched
    or unexpected key is an error, so nothing is silently re-initialised. ``kwargs`` go to
    ``from_pretrained`` (``output_loading_info=True`` returns the loading info too, with the
    extra-FC keys no longer listed as unexpected).
    """
    from transformers import AutoConfig, AutoModelForSequenceClassification

    hub = {key: kwargs[key] for key in _HUB_KWARGS if key in kwargs}
    config = kwargs.get("config")
    if not hasattr(config, "model_type"):
        remote = {"trust_remote_code": kwargs["trust_remote_code"]} if "trust_remote_code" in kwargs else {}
        config = AutoConfig.from_pretrained(config or path_or_id, **hub, **remote)
    if not getattr(config, "nlue_extra_fc", False):
        return AutoModelForSequenceClassification.from_pretrained(path_or_id, **kwargs)
    return_info = kwargs.pop("output_loading_info", False)
    with _quiet_load_report():
        model, info = AutoModelForSequenceClassification.from_pretrained(path_or_id, output_loading_info=True, **kwargs)
    layout = model_layout(model)
    extra = add_extra_fc(
        model,
        layout,
        getattr(model.config, "nlue_extra_fc_activation", "gelu"),
        getattr(model.config, "nlue_extra_fc_dropout", None),
    )
    prefix = f"{layout.logits}.{EXTRA_FC_NAME}."
    expected = {prefix + key for key in extra.state_dict()}
    _check_load(path_or_id, info, expected)
    tensors = _checkpoint_tensors(path_or_id, expected, hub)
    extra.load_state_dict({key[len(prefix) :]: value for key, value in tensors.items()}, strict=True)
    logger.info("%s: restored the extra FC layer at %s", path_or_id, prefix.rstrip("."))
    if return_info:
        return model, {**info, "unexpected_keys": set(info["unexpected_keys"]) - expected}
    return model


# ---------------------------------------------------------------------------------------------
# Documentation
# ---------------------------------------------------------------------------------------------


def _layers_cell(spec: PresetSpec, total: int) -> str:
    layers = spec.layers(total)
    if not layers:
        return "none"
    span = f"{layers[0]}–{layers[-1]}" if len(layers) > 1 else str(layers[0])
    text = f"{span} (all {total})" if len(layers) == total else f"{span} (top {len(layers)})"
    return text + " + embeddings" if spec.train_embeddings else text


def presets_markdown_table() -> str:
    """Markdown: the presets (layers for 12-, 6- and 24-layer bases) and, per family, head and embeddings."""
    lines = [
        "Presets I–VIII are our reading of the paper's eight configurations (the figures that define them",
        'are not in its text; see "How presets I–VIII were derived" below). They run from the most to the',
        "fewest trainable parameters. L = number of encoder layers; layers are 0-based, top = last; fractions",
        "round up; the head always trains. The extra fully connected layer belongs to no preset: `--extra_fc`",
        "adds it to any of them.",
        "",
        "| preset | what trains | layers trained, 12-layer base (BERT, RoBERTa, XLM-R, DeBERTa) "
        "| layers trained, 6-layer DistilBERT | layers trained, 24-layer large base |",
        "|---|---|---|---|---|",
    ]
    for spec in PRESETS.values():
        lines.append(
            f"| {spec.name} | {spec.description} | {_layers_cell(spec, 12)} | {_layers_cell(spec, 6)} "
            f"| {_layers_cell(spec, 24)} |"
        )
    lines += [
        "",
        "| family (model types) | layers | head (always trains) | embeddings (train in I only) "
        "| extra FC (Linear d→d, GELU, dropout) sits at |",
        "|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        base = {"roberta": "roberta", "deberta": "deberta"}.get(fam.name, fam.name)
        head = ", ".join(f"`{prefix.format(base=base)}`" for prefix in fam.head)
        lines.append(
            f"| {fam.name} ({', '.join(fam.model_types)}) | `{fam.layers.format(base=base)}.{{i}}` | {head} "
            f"| {fam.embeddings_doc} | {fam.extra_fc_doc} |"
        )
    lines.append(
        "| other (generic rule) | the one ModuleList of `num_hidden_layers` modules in the base model "
        "| everything outside the base model, and `<base>.pooler` | the rest of the base model "
        "| input of the last Linear outside the base model with `num_labels` outputs |"
    )
    return "\n".join(lines) + "\n"
