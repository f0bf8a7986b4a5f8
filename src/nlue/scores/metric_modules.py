"""What the evaluate modules under ``metrics/`` need from the package, kept in one place.

* which task a config name means: a registered task, one of ``NLUE_TASK_FILES``, or a task file's
  path (a clear error for a wrong or missing one);
* the input features of each kind of task, so that the ``nlue`` module's ``gmet`` config
  and the ``gmet_combined`` module cannot drift apart, and the format in which evaluate
  hands them over (Python floats for scores: evaluate's NumPy format would be float32);
* the shared text describing the bootstrap arguments;
* where the module folders live, to load them offline by path.

``evaluate.load("gmet_combined")`` with a bare name resolves a folder of that name in the
current directory, and otherwise asks the Hub's canonical ``evaluate-metric``
organisation, where these modules do not live. Loading by folder path works anywhere and
offline; :func:`metric_path` finds that folder in a source checkout or an editable
install, where ``metrics/`` sits beside ``src/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import datasets

from nlue.errors import NlueError
from nlue.registry.task_file.activate import env_task_files
from nlue.registry.task_file.load import load_task_file
from nlue.registry.task_file.register import load_files
from nlue.registry.tasks import TASKS, TaskSpec, get_kind, get_task

METRIC_MODULES: tuple[str, ...] = ("nlue", "gmet_combined", "macro_f1", "r_squared")

_METRICS_DIR = Path(__file__).resolve().parents[3] / "metrics"

BOOTSTRAP_ARGS_DOC = """\
    bootstrap_resamples (`int`, *optional*): number of bootstrap resamples of the items
        (percentile intervals; GMET: within categories, bias-shifted). When given, every metric `m` is followed by `m_ci_low` and `m_ci_high`. Default
        `None`: no intervals. 1,000 is a sound choice.
    confidence_level (`float`): coverage of the interval, between 0 and 1. Default 0.95.
    seed (`int`): seed of the resampling, so that an interval can be reproduced. Default 0."""


def is_task_file_name(config_name: str) -> bool:
    """Whether a config name is a path to a task file: task names hold neither a folder separator nor a dot."""
    return config_name.lower().endswith((".yaml", ".yml")) or "/" in config_name or os.sep in config_name


def task_for_config(config_name: str, module: str = "nlue") -> TaskSpec:
    """The task a module config names, or an NlueError listing the valid configs.

    A config name is a registered task's name (a shipped task, or one registered in this process); a task
    declared in one of the files ``NLUE_TASK_FILES`` names; or the path of a task file (``my_task.yaml``),
    read here. A task from a file is loaded, not registered: the module scores with it, nothing else changes.
    """
    if config_name in ("default", None):
        raise NlueError(
            f"the {module} metric needs a task as config name, e.g. evaluate.load({module!r}, 'qnli'), or a task "
            f"file's path; expected one of: {', '.join(TASKS)}"
        )
    if config_name in TASKS:
        return TASKS[config_name]
    if is_task_file_name(config_name):
        path = Path(config_name).expanduser()
        if not path.is_file():
            raise NlueError(f"the {module} metric's config {config_name!r} looks like a task file, but no such file")
        return load_task_file(path)
    from_environment = env_task_files()
    if from_environment:
        for loaded in load_files(from_environment):
            for task in loaded.tasks:
                if task.name == config_name:
                    return task
    return get_task(config_name)  # the error that lists every valid name


def classification_config(config_name: str) -> str | None:
    """The task a ``macro_f1`` config names (None for evaluate's "default", i.e. no config)."""
    if config_name in ("default", None):
        return None
    valid = [name for name in TASKS if get_task(name).is_classification]
    if config_name not in valid:
        raise NlueError(
            f"unknown config {config_name!r} for macro_f1: give no config, or a classification task: {', '.join(valid)}"
        )
    return config_name


def task_features(spec: TaskSpec) -> datasets.Features | list[datasets.Features]:
    """Input features of a task's scorer (several alternatives for GMET's two input forms): the kind's."""
    return spec.kind.score_features(spec)


def gmet_features() -> list[datasets.Features]:
    """GMET inputs: predicted words with answer lists, or predicted words with 0/1 human judgments."""
    return get_kind("mask_fill").score_features(None)


def input_format(kind: str) -> str | None:
    """The ``MetricInfo.format`` in which evaluate hands a module's inputs to ``_compute``.

    ``"numpy"`` for integer label ids only. Real-valued scores go as Python lists, and so do
    GMET's nested answer lists. evaluate stores the inputs in an Arrow cache with the
    declared float64 type, then reads them back through ``datasets``' formatter for
    ``format``; the NumPy formatter turns every floating column into float32 whatever the
    feature says (a deep-learning default of ``datasets``, and evaluate passes no dtype), so
    STS-B scores lost everything past the 7th digit and correlations drifted by ~1e-8.
    The Python formatter returns the stored float64 values as Python floats, bit for bit,
    and the scorers turn them into float64 arrays themselves. The kind decides.
    """
    return get_kind(kind).score_format


def metric_path(name: str) -> str:
    """The folder of the evaluate module ``name``, to pass to ``evaluate.load``.

    Raises ValueError for an unknown name and FileNotFoundError when the package was
    installed without its source tree (a wheel ships no ``metrics/`` folder).
    """
    if name not in METRIC_MODULES:
        raise NlueError(f"unknown NLUE metric module {name!r}; expected one of: {', '.join(METRIC_MODULES)}")
    folder = _METRICS_DIR / name
    if not (folder / f"{name}.py").is_file():
        raise FileNotFoundError(
            f"no metric folder at {folder}: the metric modules ship with the nlue source tree, not the wheel. "
            f"Clone the repository (or install it editable), or load the published module from the Hub "
            f"with evaluate.load('<org>/{name}')"
        )
    return str(folder)
