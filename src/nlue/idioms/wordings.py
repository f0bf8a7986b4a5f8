"""neDIOM zero-shot in each prompt wording (``nlue idioms eval --wordings all``): ours, as for the other benchmarks.

Each zero-shot cell (a setting and an input variant) is asked again in every other wording of the
prompt language (:mod:`nlue.registry.wordings`), with the cell's scorer and mode and the same items
and label words; the cell's own answers are the main wording's. The section and the per-item records
are those of :mod:`nlue.evals.llm.wordings`, and :mod:`nlue.evals.verify` checks them the same way.
Few-shot cells fine-tune an encoder and are asked with no prompt: they have no wordings.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from nlue.evals.llm.wordings import Asked, WordingRobustness, ask_wordings
from nlue.registry.kinds.idiomaticity import InputVariant
from nlue.registry.spec import TaskSpec

Metrics = Callable[[TaskSpec, Any, np.ndarray, "int | None", int], dict]  # nlue.idioms.evaluate.zero_shot_metrics


def zero_shot_answers(scorer: Any, task: TaskSpec, items: Sequence[Mapping[str, Any]], ids: Sequence[str],
                      refs: np.ndarray, variant: InputVariant, language: str, resamples: int | None, seed: int,
                      zero_shot_metrics: Metrics) -> Asked:  # fmt: skip
    """``items`` of one variant put to ``scorer`` as ``task``'s prompt words them, scored as the cell scores its own
    (by generation, as its answers are parsed; by log-likelihood, with ``zero_shot_metrics``)."""
    from nlue.evals.llm import label_generation as gen

    if scorer.mode == "generate":
        prompts, outputs, words = scorer.answers(items, variant, language)
        gen.require_answers(outputs, f"{task.name} {variant.name}")
        strict, _, rows = gen.answer_rows(ids, prompts, outputs, words, refs.tolist())
        metrics = gen.label_scores(strict, refs.tolist(), len(words), resamples, seed)
        extras = [{"output": r["output"], "verdict": r["verdict"], "category": r["strict"]["category"]} for r in rows]
        return Asked(metrics, [p.label for p in strict], extras)
    scores = scorer.scores(items, variant, language)
    extras = [{"loglikelihoods": dict(zip(scores.choices, np.round(row, 4).tolist(), strict=True))}
              for row in scores.loglikelihoods]  # fmt: skip
    return Asked(zero_shot_metrics(task, scores, refs, resamples, seed), scores.predictions.tolist(), extras)


def cell_wordings(scorer: Any, task: TaskSpec, wordings: str, items: Sequence[Mapping[str, Any]], ids: Sequence[str],
                  refs: np.ndarray, variant: InputVariant, language: str, main: Asked, resamples: int | None,
                  seed: int, zero_shot_metrics: Metrics) -> WordingRobustness | None:  # fmt: skip
    """One zero-shot cell in each other wording (``main``: the cell's own answers); None for the main alone."""

    def ask(worded: TaskSpec) -> Asked:
        other = copy.copy(scorer)
        other.task = worded
        return zero_shot_answers(other, worded, items, ids, refs, variant, language, resamples, seed,
                                 zero_shot_metrics)  # fmt: skip

    return ask_wordings(task, language, wordings, ask, main)
