"""NLUE's names that other modules read, taken from its task files; the score note.

NLUE's twelve tasks are declared in ``nlue/registry/shipped_tasks/nlue/`` (one task file each,
listed by ``benchmark.yaml``) and loaded by :mod:`nlue.registry.task_file`, like any user's
task; the paper's figures stay data in :mod:`nlue.registry.paper` and are attached to them by
name (:mod:`nlue.registry.paper_figures`). The constants below are read from the loaded tasks,
so that each fact has one home.
"""

from __future__ import annotations

from types import MappingProxyType

from nlue.registry.benchmarks import NLUE

CATEGORIES: tuple[str, ...] = (
    "single sentence",
    "similarity & paraphrase",
    "inference",
    "GMET",
)

NLUE_SCORE_NOTE = (
    "The NLUE score (the mean of the tasks' primary metrics) is an nlue convention: the paper defines no "
    "overall score and does not rank its models by one."
)
_BY_NAME = {task.name: task for task in NLUE.tasks}
STSB_SCORE_RANGE: tuple[float, float] = _BY_NAME["stsb"].score_range  # type: ignore[assignment]
MASK_PLACEHOLDER: str = str(_BY_NAME["gmet"].mask)
WG_BLANK: str = str(_BY_NAME["wg"].input_spec.blank)
AD_JOINER: str = _BY_NAME["qadsm"].input_spec.joiner

# GMET: the 75 categories of appendix F.1, grouped by their 7 thematic areas (declared in gmet.yaml).
GMET_THEMES: MappingProxyType[str, tuple[str, ...]] = _BY_NAME["gmet"].categories  # type: ignore[assignment]
GMET_CATEGORY_THEME: MappingProxyType[str, str] = MappingProxyType(
    {category: theme for theme, cats in GMET_THEMES.items() for category in cats}
)
NLUE_CITATION = NLUE.citation
