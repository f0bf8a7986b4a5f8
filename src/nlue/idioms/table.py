"""neDIOM results as tables: the paper's Table 3 shape with its numbers as reference rows, and one row per variant.

* :func:`floors` - macro-F1 of always answering idiomatic, and of always answering literal,
  on the test labels actually scored: a model at a floor has collapsed to one class (many
  of Table 3's cells sit at the paper's floors, about 0.44 and 0.18);
* :func:`table3_text` - blocks by context (S2, S1+S2, S2+S3, S1+S2+S3), columns zero-shot /
  5-shot / 10-shot each with and without the idiom, as the paper prints it: this run's row
  (macro-F1, ± the sd over seeds for few-shot, and the 95% interval), the two floors, then
  the paper's seven models as printed (:data:`nlue.registry.nediom.TABLE3`; ``-`` = not run);
* :func:`variant_rows` / :func:`variant_text` - the same run as 8 variant rows x settings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nlue.registry.kinds.idiomaticity import CONTEXTS, VARIANTS, InputVariant
from nlue.registry.nediom import TABLE3, TABLE3_MODELS, TABLE3_SETTINGS
from nlue.text_table import text_table

SHORT_SETTING = {"zero-shot": "ZS", "5-shot": "5-shot", "10-shot": "10-shot"}
NOT_RUN = "."


@dataclass(frozen=True)
class Cell:
    """One variant in one setting: macro-F1 (the mean over seeds for few-shot), its 95% interval, its sd."""

    setting: str
    variant: InputVariant
    macro_f1: float
    ci_low: float | None = None
    ci_high: float | None = None
    sd: float | None = None  # over seeds; None for a single run
    runs: int = 1

    def text(self, interval: bool = True) -> str:
        value = f"{self.macro_f1:.2f}" + (f"±{self.sd:.2f}" if self.sd is not None else "")
        if interval and self.ci_low is not None and self.ci_high is not None and not math.isnan(self.ci_low):
            value += f" [{self.ci_low:.2f}, {self.ci_high:.2f}]"
        return value


def floors(task_name: str, references: Sequence[int]) -> dict[str, float]:
    """Macro-F1 of the two constant answers on ``references`` (label ids 0 idiomatic, 1 literal)."""
    from nlue.scores import score_task

    refs = np.asarray(references, dtype=np.int64)
    return {
        "always idiomatic": float(score_task(task_name, np.zeros_like(refs), refs)["macro_f1"]),
        "always literal": float(score_task(task_name, np.ones_like(refs), refs)["macro_f1"]),
    }


def _column(setting: str, with_idiom: bool) -> int:
    """The index of a setting and idiom choice among Table 3's six columns."""
    return 2 * TABLE3_SETTINGS.index(setting) + (0 if with_idiom else 1)


def _header() -> list[str]:
    return [f"{SHORT_SETTING[s]} {'w/' if w else 'w/o'}" for s in TABLE3_SETTINGS for w in (True, False)]


def table3_text(cells: Sequence[Cell], floor_values: Mapping[str, float], model_label: str) -> str:
    """Table 3's shape: per context, this run, the floors on this test set, and the paper's models as printed."""
    ours = {(c.variant.context, _column(c.setting, c.variant.with_idiom)): c for c in cells}
    rows = [["context", "model", *_header()]]
    for context in CONTEXTS:
        mine = [ours[(context, i)].text() if (context, i) in ours else NOT_RUN for i in range(6)]
        rows.append([context, f"{model_label} (this run)", *mine])
        rows += [["", f"{name} (this test set)", *[f"{value:.2f}"] * 6] for name, value in floor_values.items()]
        for paper_model in TABLE3_MODELS:
            printed = TABLE3[context][paper_model]
            rows.append(["", f"{paper_model} (paper)", *["-" if v is None else f"{v:.2f}" for v in printed]])
    return text_table(rows)


def variant_rows(cells: Sequence[Cell]) -> list[tuple[InputVariant, dict[str, Cell]]]:
    """One row per variant in the paper's order (1-8), each with its cells by setting."""
    by_variant: dict[int, dict[str, Cell]] = {v.number: {} for v in VARIANTS}
    for cell in cells:
        by_variant[cell.variant.number][cell.setting] = cell
    return [(v, by_variant[v.number]) for v in VARIANTS]


def variant_text(cells: Sequence[Cell], floor_values: Mapping[str, float]) -> str:
    """8 variant rows x the settings run (macro-F1, sd, interval) and the floors, for reading the intervals."""
    settings = [s for s in TABLE3_SETTINGS if any(c.setting == s for c in cells)]
    rows = [["#", "context", "idiom", *settings, *floor_values]]
    for variant, by_setting in variant_rows(cells):
        shown = [by_setting[s].text() if s in by_setting else NOT_RUN for s in settings]
        floors_shown = [f"{value:.2f}" for value in floor_values.values()]
        rows.append([str(variant.number), variant.context, "with" if variant.with_idiom else "without", *shown,
                     *floors_shown])  # fmt: skip
    return text_table(rows)
