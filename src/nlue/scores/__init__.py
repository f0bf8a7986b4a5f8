"""Scores of registered tasks, on the maths of :mod:`nlue.scoring`.

* :func:`score_task` - all metrics of a registry task, optionally with bootstrap CIs.
* :func:`score_macro_f1`, :func:`score_r_squared` - the single-metric modules.
* :func:`compare_systems` - paired significance tests between two systems on one task.
* :func:`nlue_score` - one number per model, with missing tasks reported.
* :func:`metric_path` - the folder of an evaluate module, for offline ``evaluate.load``.
"""

from nlue.scores.metric_modules import METRIC_MODULES, metric_path
from nlue.scores.overall import NlueScore, nlue_score, primary_score
from nlue.scores.tasks import build_problem, compare_systems, score_macro_f1, score_r_squared, score_task

__all__ = [
    "METRIC_MODULES",
    "NlueScore",
    "build_problem",
    "compare_systems",
    "metric_path",
    "nlue_score",
    "primary_score",
    "score_macro_f1",
    "score_r_squared",
    "score_task",
]
