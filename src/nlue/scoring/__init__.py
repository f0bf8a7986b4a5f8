"""Scoring maths for NLUE, written once and shared by the package and the evaluate modules.

The modules under ``metrics/`` are thin wrappers over the functions here; so are the
trainers and the leaderboard. Everything returns plain Python floats.

* :func:`score_task` - all metrics of a registry task, optionally with bootstrap CIs.
* :func:`score_macro_f1`, :func:`score_r_squared` - the single-metric modules.
* :func:`gmet_scores` - GMET accuracy, equality, combined score, sigma, per category.
* :func:`compare_systems` / :func:`paired_test` - paired significance tests.
* :func:`nlue_score` - one number per model, with missing tasks reported.
* :func:`metric_path` - the folder of an evaluate module, for offline ``evaluate.load``.
"""

from typing import Any

from nlue.scoring.bootstrap import bootstrap_intervals, percentile_interval, scores_with_intervals
from nlue.scoring.classification import accuracy, classification_problem, macro_f1
from nlue.scoring.gmet import gmet_problem, gmet_scores, judge_predictions
from nlue.scoring.problem import ScoringProblem
from nlue.scoring.regression import pearson, r_squared, regression_problem, spearman
from nlue.scoring.significance import PairedComparison, paired_test

# Names that need the task registry load on first use: the registry's kinds import the
# scoring maths above, so this package must not import the registry while it loads.
_REGISTRY_NAMES = {
    "METRIC_MODULES": "nlue.scoring.metric_modules",
    "metric_path": "nlue.scoring.metric_modules",
    "NlueScore": "nlue.scoring.overall",
    "nlue_score": "nlue.scoring.overall",
    "primary_score": "nlue.scoring.overall",
    "build_problem": "nlue.scoring.task_scores",
    "compare_systems": "nlue.scoring.task_scores",
    "score_macro_f1": "nlue.scoring.task_scores",
    "score_r_squared": "nlue.scoring.task_scores",
    "score_task": "nlue.scoring.task_scores",
}


def __getattr__(name: str) -> Any:
    module = _REGISTRY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'nlue.scoring' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "METRIC_MODULES",
    "NlueScore",
    "PairedComparison",
    "ScoringProblem",
    "accuracy",
    "bootstrap_intervals",
    "build_problem",
    "classification_problem",
    "compare_systems",
    "gmet_problem",
    "gmet_scores",
    "judge_predictions",
    "macro_f1",
    "metric_path",
    "nlue_score",
    "paired_test",
    "pearson",
    "percentile_interval",
    "primary_score",
    "r_squared",
    "regression_problem",
    "score_macro_f1",
    "score_r_squared",
    "score_task",
    "scores_with_intervals",
    "spearman",
]
