"""Where each encoder family keeps its layer stack, its head and its logits layer.

The presets (:mod:`nlue.training.presets`) unfreeze "the head plus the top k layers";
this module says, per ``config.model_type``, what those are, with a generic rule for
encoders of other families.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from torch import nn

from nlue.errors import NlueError

logger = logging.getLogger(__name__)

HEAD, EMBEDDINGS = "head", "embeddings"


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
        raise NlueError(f"expected the layer stack at {path!r} to be a ModuleList, got {type(stack).__name__}")
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
        raise NlueError(
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
