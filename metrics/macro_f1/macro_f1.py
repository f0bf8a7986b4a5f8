"""Macro-F1 over every class a task defines, the headline number of the NLUE classification tasks."""

import datasets
import evaluate

from nlue.registry.paper import PAPER_CITATION
from nlue.registry.tasks import TASKS
from nlue.scores import score_macro_f1
from nlue.scores.metric_modules import BOOTSTRAP_ARGS_DOC, classification_config, input_format

_CLASSIFICATION_TASKS = [name for name, spec in TASKS.items() if spec.is_classification]

_DESCRIPTION = f"""\
Macro-averaged F1: the F1 of each class, then their plain mean, so that a rare class
weighs as much as a common one. The set of classes is fixed before looking at the data:
load the module with an NLUE task as config ({", ".join(_CLASSIFICATION_TASKS)}) to use
that task's classes, or pass `labels`. A class that the predictions and references never
mention then still enters the mean with an F1 of 0, where a metric that only averages the
classes it sees would report a higher number on a lopsided batch. Without a task or
`labels`, the classes seen in either list are used.
"""

_CITATION = PAPER_CITATION

_KWARGS_DESCRIPTION = f"""
Args:
    predictions (`list` of `int`): predicted label ids.
    references (`list` of `int`): gold label ids.
    labels (`list` of `int`, *optional*): every class id to average over. Not allowed to
        disagree with the task's classes when the module was loaded with a task config.
{BOOTSTRAP_ARGS_DOC}
Returns:
    macro_f1 (`float`): from 0 to 1.
Examples:

    QNLI has two classes. This batch only holds entailment (0), and every prediction is
    right, yet not-entailment still counts, so macro-F1 is 0.5:

    >>> macro_f1 = evaluate.load("macro_f1", "qnli")
    >>> print(macro_f1.compute(predictions=[0, 0, 0], references=[0, 0, 0]))
    {{'macro_f1': 0.5}}

    Explicit labels and a 90% bootstrap interval:

    >>> macro_f1 = evaluate.load("macro_f1")
    >>> results = macro_f1.compute(
    ...     predictions=[0, 1, 2, 2, 1, 0], references=[0, 1, 2, 1, 1, 0], labels=[0, 1, 2],
    ...     bootstrap_resamples=200, confidence_level=0.9,
    ... )
    >>> print(round(results["macro_f1"], 4), list(results))
    0.8222 ['macro_f1', 'macro_f1_ci_low', 'macro_f1_ci_high']
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MacroF1(evaluate.Metric):
    def _info(self):
        classification_config(self.config_name)  # a wrong config fails at load time, listing the valid ones
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}),
            format=input_format("classification"),
            reference_urls=["https://scikit-learn.org/stable/modules/generated/sklearn.metrics.f1_score.html"],
        )

    def _compute(self, predictions, references, labels=None, bootstrap_resamples=None, confidence_level=0.95, seed=0):
        return score_macro_f1(
            predictions,
            references,
            task=classification_config(self.config_name),
            labels=labels,
            bootstrap_resamples=bootstrap_resamples,
            confidence_level=confidence_level,
            seed=seed,
        )
