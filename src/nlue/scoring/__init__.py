"""Scoring maths for NLUE, written once and shared by the package and the evaluate modules.

The modules under ``metrics/`` are thin wrappers over the functions here; so are the
trainers and the leaderboard. Everything returns plain Python floats.

* :func:`gmet_scores` - GMET accuracy, equality, combined score, sigma, per category.
* :func:`paired_test` - paired significance tests.

This room sits below the task registry (the registry's kinds build their scoring problems with it), so it
knows no task: scoring a registered task by name, the NLUE score and the evaluate modules' helpers are
:mod:`nlue.scores`.
"""

from nlue.scoring.bootstrap import bootstrap_intervals, percentile_interval, scores_with_intervals
from nlue.scoring.classification import accuracy, classification_problem, macro_f1
from nlue.scoring.gmet import gmet_problem, gmet_scores, judge_predictions
from nlue.scoring.problem import ScoringProblem
from nlue.scoring.regression import pearson, r_squared, regression_problem, spearman
from nlue.scoring.significance import PairedComparison, paired_test

__all__ = [
    "PairedComparison",
    "ScoringProblem",
    "accuracy",
    "bootstrap_intervals",
    "classification_problem",
    "gmet_problem",
    "gmet_scores",
    "judge_predictions",
    "macro_f1",
    "paired_test",
    "pearson",
    "percentile_interval",
    "r_squared",
    "regression_problem",
    "scores_with_intervals",
    "spearman",
]
