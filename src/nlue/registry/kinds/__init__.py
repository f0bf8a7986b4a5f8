"""The kinds of task: each the one place that decides how its tasks are built, fed and scored.

``classification``, ``regression``, ``mask_fill`` and ``multiple_choice`` now; idiomaticity
joins them when its benchmark arrives. A task names its kind in ``problem_type``;
``TaskSpec.kind`` returns it.
"""

from __future__ import annotations

from types import MappingProxyType

from nlue.errors import NlueError
from nlue.registry.kinds.base import (
    CAUSAL_LM_LOGLIKELIHOOD,
    FINE_TUNED_CLASSIFIER,
    GENERATION,
    MASKED_LM_FILL,
    RowRejection,
    TaskKind,
)
from nlue.registry.kinds.classification import CLASSIFICATION
from nlue.registry.kinds.idiomaticity import IDIOMATICITY
from nlue.registry.kinds.mask_fill import MASK_FILL
from nlue.registry.kinds.multiple_choice import MULTIPLE_CHOICE
from nlue.registry.kinds.regression import REGRESSION

KINDS: MappingProxyType[str, TaskKind] = MappingProxyType(
    {k.name: k for k in (CLASSIFICATION, REGRESSION, MASK_FILL, MULTIPLE_CHOICE, IDIOMATICITY)}
)

# What the paper defines and what this package adds, said the same way everywhere (README, cards, Space, results).
PRIMARY_METRIC_NOTES: MappingProxyType[str, str] = MappingProxyType(
    {
        "macro_f1": "macro-F1, reported by the paper beside accuracy; making it the primary is an nlue convention",
        "pearson_spearman_mean": (
            "the mean of Pearson and Spearman, an nlue convention: the paper reports Spearman, Pearson and R² "
            "and computes no mean"
        ),
        "combined": "the GMET combined score C = A·exp(-σ), the paper's own headline score (appendix F.2)",
        "accuracy_all_items": (
            "accuracy over every item, an invalid (unparseable) output counting as wrong, an nlue convention: "
            "the UrduMMLU paper does not state its denominator and its figures look like accuracy over parseable "
            "outputs, reported beside it as accuracy_parseable"
        ),
    }
)
PAPER_DEFINED_PRIMARIES: frozenset[str] = frozenset({"combined"})


def get_kind(name: str) -> TaskKind:
    """The kind called ``name``; a ValueError listing the kinds for an unknown one."""
    try:
        return KINDS[name]
    except KeyError:
        raise NlueError(f"unknown task kind {name!r}; expected one of: {', '.join(KINDS)}") from None


__all__ = [
    "CAUSAL_LM_LOGLIKELIHOOD",
    "FINE_TUNED_CLASSIFIER",
    "GENERATION",
    "KINDS",
    "MASKED_LM_FILL",
    "PAPER_DEFINED_PRIMARIES",
    "PRIMARY_METRIC_NOTES",
    "RowRejection",
    "TaskKind",
    "get_kind",
]
