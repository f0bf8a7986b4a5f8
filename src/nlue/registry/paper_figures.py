"""The NLUE paper's figures for one task, attached to its declaration by name.

A task file says ``paper_figures: nlue``; the loader asks :func:`nlue_paper_figures` for the
task's reported scores (0-1), the appendix-E best configurations and the flagged cells. The
figures themselves stay data in Python (:mod:`nlue.registry.paper`, :mod:`nlue.registry.paper_checks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from nlue.registry.paper import HPARAM_TASKS, PAPER_MODELS, RESULT_COLUMNS
from nlue.registry.paper_checks import PaperFlag, paper_flags
from nlue.registry.spec import HParams

# The papers whose tables a task file can attach (paper_figures: NAME), and the tasks each reports on.
PAPER_TASKS: Mapping[str, frozenset[str]] = MappingProxyType({"nlue": frozenset(t for t, _ in RESULT_COLUMNS)})


def _percent_results(task: str) -> MappingProxyType[str, MappingProxyType[str, float]]:
    """Per-model reported scores of one task, converted from percent to 0-1."""
    out: dict[str, MappingProxyType[str, float]] = {}
    for model in PAPER_MODELS:
        if len(model.results_percent) != len(RESULT_COLUMNS):
            raise ValueError(
                f"paper results row for {model.name!r} has {len(model.results_percent)} "
                f"numbers, expected {len(RESULT_COLUMNS)}"
            )
        scores = {
            metric: round(value / 100.0, 6)
            for (col_task, metric), value in zip(RESULT_COLUMNS, model.results_percent, strict=True)
            if col_task == task
        }
        out[model.name] = MappingProxyType(scores)
    return MappingProxyType(out)


def _best_hparams(task: str) -> MappingProxyType[str, HParams]:
    if task not in HPARAM_TASKS:
        return MappingProxyType({})
    position = HPARAM_TASKS.index(task)
    out: dict[str, HParams] = {}
    for model in PAPER_MODELS:
        cells = model.best_hparams.split("|")
        if len(cells) != len(HPARAM_TASKS):
            raise ValueError(f"appendix E row for {model.name!r} has {len(cells)} cells")
        preset, lr, epochs, batch = cells[position].split(",")
        out[model.name] = HParams(preset, float(lr), int(epochs), int(batch))
    return MappingProxyType(out)


def _flags(
    task: str, class_balance: Mapping[str, float], label_names: tuple[str, ...]
) -> MappingProxyType[str, tuple[PaperFlag, ...]]:
    """This task's flagged cells of the paper's tables, by model (see nlue.registry.paper_checks)."""
    shares = {task: class_balance[label_names[0]]} if len(label_names) == 2 and class_balance else None
    out: dict[str, list[PaperFlag]] = {}
    for flag in paper_flags(PAPER_MODELS, shares):
        if flag.task == task:
            out.setdefault(flag.model, []).append(flag)
    return MappingProxyType({model: tuple(flags) for model, flags in out.items()})


def nlue_paper_figures(task: str, class_balance: Mapping[str, float], label_names: tuple[str, ...]) -> dict[str, Any]:
    """``paper_results``, ``paper_best_hparams`` and ``paper_flags`` of NLUE task ``task``, as TaskSpec fields."""
    if task not in PAPER_TASKS["nlue"]:
        raise ValueError(f"the NLUE paper reports no figures for a task named {task!r}")
    return {
        "paper_results": _percent_results(task),
        "paper_best_hparams": _best_hparams(task),
        "paper_flags": _flags(task, class_balance, label_names),
    }
