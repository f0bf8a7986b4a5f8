"""The task registry's public face: the single source of truth for every task.

The builder, dataset card, metrics, trainers, Space and README tables all read
:data:`TASKS` (every task of every benchmark) and :func:`get_task`. Where things live:
:mod:`nlue.registry.spec` (what a task is), :mod:`nlue.registry.kinds` (what each kind of
task decides), :mod:`nlue.registry.task_file` (tasks declared in task files: the shipped ones
under ``nlue/registry/shipped_tasks/`` and a user's, loaded by one path),
:mod:`nlue.registry.benchmarks` (benchmarks and the lookup). A command that takes a user's
task wraps its work in :func:`registered_task_files`.
"""

from nlue.registry.benchmarks import (
    BENCHMARKS,
    NLUE,
    TASK_NAMES,
    TASKS,
    TRAINABLE_TASKS,
    Benchmark,
    benchmark_of,
    get_task,
    registered,
    tasks_in_category,
)
from nlue.registry.kinds import KINDS, PAPER_DEFINED_PRIMARIES, PRIMARY_METRIC_NOTES, TaskKind, get_kind
from nlue.registry.nlue import (
    AD_JOINER,
    CATEGORIES,
    GMET_CATEGORY_THEME,
    GMET_THEMES,
    MASK_PLACEHOLDER,
    NLUE_SCORE_NOTE,
    STSB_SCORE_RANGE,
    WG_BLANK,
)
from nlue.registry.spec import HParams, InputSpec, TaskSpec
from nlue.registry.task_file.load import load_file, load_task_file
from nlue.registry.task_file.register import registered_task_files

__all__ = [
    "AD_JOINER",
    "BENCHMARKS",
    "CATEGORIES",
    "GMET_CATEGORY_THEME",
    "GMET_THEMES",
    "KINDS",
    "MASK_PLACEHOLDER",
    "NLUE",
    "NLUE_SCORE_NOTE",
    "PAPER_DEFINED_PRIMARIES",
    "PRIMARY_METRIC_NOTES",
    "STSB_SCORE_RANGE",
    "TASKS",
    "TASK_NAMES",
    "TRAINABLE_TASKS",
    "WG_BLANK",
    "Benchmark",
    "HParams",
    "InputSpec",
    "TaskKind",
    "TaskSpec",
    "benchmark_of",
    "get_kind",
    "get_task",
    "load_file",
    "load_task_file",
    "registered",
    "registered_task_files",
    "tasks_in_category",
]
