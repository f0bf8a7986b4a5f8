"""CPU inference through oneDNN's linear primitive: packed weights, GELU and residual add fused in.

Why: in eager PyTorch every ``nn.Linear`` on a CPU is an ``addmm`` that copies the bias into
its output before the product and re-packs the weight for the BLAS kernel on every call; a
BERT-style layer then runs GELU over the whole ``tokens x 3072`` result and, after each output
projection, adds the residual before the layer norm: extra passes over large activations.
oneDNN's linear primitive takes a weight packed once into its own blocked layout, adds the
bias inside the product, and applies GELU or the residual add to the results while they are
still in cache (post-ops). Measured on the 2-core machine (``benchmarks/eval_throughput.py``,
README): a BERT-base evaluation runs 1.04x as fast on a quiet machine (78.6% -> 81.9% of its
matmul rate; the gain drowns in the noise of a contended one); the logits differ from eager ones by float rounding only (about 1e-6 on a raw model:
the same products, summed by another kernel).

How: :func:`fused_view` returns a *view* of the model, a second module tree in which

* every float32 ``nn.Linear`` becomes one packed-weight linear call;
* an intermediate block (``dense`` Linear, then an exact-erf GELU as ``intermediate_act_fn``,
  the HF encoder layout) becomes one linear-with-GELU call;
* an output block (``forward(hidden_states, input_tensor)`` =
  ``LayerNorm(dropout(dense(hidden_states)) + input_tensor)``) becomes one linear-with-add
  call and the same layer norm;

and every other module, parameter, buffer and hook is the model's own, shared. The model is
never modified (other threads, later training and saving see it as it was). The packed weights
are copies, made when the view is built (0.06-0.6 s for a BERT-base model on the 2-core machine)
and kept with the model while its modules and weights stay as they were, so the view costs a
second copy of the Linear weights for as long as the model lives; a change to either is seen
and the next call packs afresh. Block kinds are matched by their attributes, and each (class,
kind) is accepted only after its fused form reproduced the block's own output on a random probe
(once per process), so a class that uses these names for something else keeps its own forward.
Only modules in eval mode are fused. PEFT's LoRA wrappers keep their own forward; the plain
Linear layers inside them are packed, and still are ``nn.Linear`` with the same parameters,
which is what PEFT checks. Quantised layers are no float32 ``nn.Linear`` and are left alone.

The operators (``torch.ops.mkldnn._linear_pointwise`` and ``_reorder_linear_weight``) are the
ones PyTorch's own compiler emits for these fusions on CPU; they are private, so their absence
or a failed probe simply means no fusion.
"""

from __future__ import annotations

import copy
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

logger = logging.getLogger(__name__)

PROBE_TOLERANCE = 1e-4  # relative to the block's largest output; float rounding is ~1e-6
# Verdicts of the probe, per (block class, kind): True = the fused form reproduces the block.
_verdicts: dict[tuple[type, str], bool] = {}
_verdicts_lock = threading.Lock()
# The last view built for each model, with the state it was built from (see _state).
_views: weakref.WeakKeyDictionary[Any, tuple[tuple, Any]] = weakref.WeakKeyDictionary()
_views_lock = threading.Lock()


def available() -> bool:
    """Whether this PyTorch build has oneDNN and the fused linear operators."""
    return (
        torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
        and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
    )


def _is_exact_gelu(act: Any) -> bool:
    """Whether ``act`` is GELU with the exact erf form (oneDNN's ``gelu`` with algorithm ``none``)."""
    if isinstance(act, torch.nn.GELU):
        return act.approximate == "none"
    return type(act).__name__ == "GELUActivation" and getattr(act, "act", None) is torch.nn.functional.gelu


def _plain_linear(module: Any) -> bool:
    weight = getattr(module, "weight", None)
    return type(module) is torch.nn.Linear and weight is not None and weight.dtype == torch.float32


class _PackedLinear(torch.nn.Linear):
    """An ``nn.Linear`` that shares another's weight and bias and runs with the weight packed for oneDNN.

    A subclass, not a wrapper, so that code around it that checks ``isinstance(layer, nn.Linear)`` or
    reads ``layer.weight`` (PEFT's LoRA layers do both) still sees a Linear layer and its parameters.
    ``post`` is the operator's post-op: "none", or "gelu" where the view folds the GELU after it in.
    """

    packed: torch.Tensor
    post: str

    @classmethod
    def of(cls, linear: torch.nn.Linear, post: str = "none") -> _PackedLinear:
        view = copy.copy(linear)  # shares the parameter table: no second weight but the packed one
        view.__class__ = cls
        view.packed = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), None)
        view.post = post
        return view

    def _bias(self) -> torch.Tensor | None:
        return None if self.bias is None else self.bias.detach()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        algorithm = "none" if self.post == "gelu" else ""
        return torch.ops.mkldnn._linear_pointwise(x.contiguous(), self.packed, self._bias(), self.post, [], algorithm)

    def plus(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """``linear(x) + residual`` in one call."""
        return torch.ops.mkldnn._linear_pointwise.binary(
            x.contiguous(), residual.contiguous(), self.packed, self._bias(), "add"
        )


class _FusedOutput(torch.nn.Module):
    """An HF output block: ``LayerNorm(dense(h) + input_tensor)`` with the add done by the product."""

    def __init__(self, dense: torch.nn.Linear, layer_norm: torch.nn.Module) -> None:
        super().__init__()
        self.dense = _PackedLinear.of(dense)
        self.LayerNorm = layer_norm

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense.plus(hidden_states, input_tensor))


@dataclass(frozen=True)
class _Kind:
    """A kind of block the view fuses: how to recognise it, build its replacement and probe both."""

    name: str
    matches: Callable[[Any], bool]
    build: Callable[[Any], torch.nn.Module]
    probe_inputs: Callable[[Any, torch.Generator], tuple[torch.Tensor, ...]]


def _hidden(block: Any, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    width = block.dense.in_features if hasattr(block, "dense") else block.in_features
    return (torch.randn(2, 3, width, generator=generator),)


def _hidden_and_residual(block: Any, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    residual = torch.randn(2, 3, block.dense.out_features, generator=generator)
    return (*_hidden(block, generator), residual)


_KINDS = (
    _Kind(
        "linear+gelu",
        lambda block: (
            _plain_linear(getattr(block, "dense", None)) and _is_exact_gelu(getattr(block, "intermediate_act_fn", None))
        ),
        lambda block: _PackedLinear.of(block.dense, post="gelu"),
        _hidden,
    ),
    _Kind(
        "linear+add",
        lambda block: (
            _plain_linear(getattr(block, "dense", None))
            and isinstance(getattr(block, "LayerNorm", None), torch.nn.LayerNorm)
            and isinstance(getattr(block, "dropout", None), torch.nn.Dropout)
        ),
        lambda block: _FusedOutput(block.dense, block.LayerNorm),
        _hidden_and_residual,
    ),
    _Kind("linear", _plain_linear, _PackedLinear.of, _hidden),
)


def _probe(block: Any, fused: torch.nn.Module, kind: _Kind) -> bool:
    """Whether ``fused`` gives ``block``'s output on a small random input."""
    inputs = kind.probe_inputs(block, torch.Generator().manual_seed(0))
    try:
        want, got = block(*inputs), fused(*inputs)
    except Exception as error:  # any failure of a private operator means: do not fuse this kind
        logger.debug("fused %s of %s failed its probe: %s", kind.name, type(block).__name__, error)
        return False
    if not isinstance(want, torch.Tensor) or not isinstance(got, torch.Tensor) or want.shape != got.shape:
        return False
    scale = float(want.abs().max()) or 1.0
    return float((want - got).abs().max()) <= PROBE_TOLERANCE * scale


def _fused_block(block: Any) -> torch.nn.Module | None:
    """The fused replacement of ``block``, or None if it is no kind the view fuses (or failed the probe)."""
    if block.training:
        return None
    for kind in _KINDS:
        if not kind.matches(block):
            continue
        key = (type(block), kind.name)
        verdict = _verdicts.get(key)
        if verdict is False:  # refused before: pack nothing for it
            return None
        fused = kind.build(block)
        if verdict is None:
            verdict = _probe(block, fused, kind)
            with _verdicts_lock:
                _verdicts[key] = verdict
            logger.debug("%s blocks of class %s: %s", kind.name, type(block).__name__, "fused" if verdict else "kept")
        return fused if verdict else None
    return None


def _rebuilt(module: Any) -> tuple[Any, int]:
    """``module`` with every fusable block replaced, copying only the modules on the way to one."""
    fused = _fused_block(module)
    if fused is not None:
        return fused, 1
    children = {}
    count = 0
    for name, child in module._modules.items():
        new_child, found = (child, 0) if child is None else _rebuilt(child)
        children[name] = new_child
        count += found
    if not count:
        return module, 0
    view = copy.copy(module)  # shares parameters, buffers and hooks; gets its own table of children
    view._modules = children
    return view, count


def _state(model: Any) -> tuple:
    """What a view depends on: the module tree (which modules, in which mode) and every parameter's
    storage and in-place version counter (bumped by optimiser steps, ``load_state_dict`` and ``copy_``)."""
    modules = tuple((id(module), module.training) for module in model.modules())
    parameters = tuple((id(p), p.data_ptr(), p._version) for p in model.parameters())
    return modules, parameters


def fused_view(model: Any) -> Any | None:
    """A view of ``model`` for CPU inference (see the module docstring), or None if nothing in it fuses.

    The view is kept (weakly, with the model) and returned again while the model's modules and
    weights are unchanged; any change makes the next call build a new one. Run it only under
    ``torch.inference_mode`` (the fused operators have no gradient).
    """
    parameter = next(model.parameters(), None)
    if not available() or parameter is None or parameter.device.type != "cpu":
        return None
    state = _state(model)
    kept = _views.get(model)
    if kept is not None and kept[0] == state:
        return kept[1]
    with torch.inference_mode():
        view, count = _rebuilt(model)
    view = view if count else None
    with _views_lock:
        _views[model] = (state, view)
    logger.debug("CPU inference view of %s: %d blocks fused", type(model).__name__, count)
    return view
