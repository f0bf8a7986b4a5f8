"""The NLUE benchmark metric: one config per Nepali NLU task, scored the way the NLUE paper reports."""

import evaluate

from nlue.registry.paper import PAPER_CITATION
from nlue.registry.tasks import TASK_NAMES
from nlue.scores import score_task
from nlue.scores.metric_modules import BOOTSTRAP_ARGS_DOC, task_features, task_for_config

_DESCRIPTION = f"""\
Scores for the twelve tasks of NLUE, a Nepali language-understanding benchmark. Pick the
task with the config name ({", ".join(TASK_NAMES)}). A task of your own, declared in a task
file, is scored the same way by its kind: give the file's path as the config name
(evaluate.load("nlue", "path/to/my_task.yaml")), or name the file in the NLUE_TASK_FILES
variable and give the task's name. Classification tasks report accuracy and
macro-F1, averaged over every class the task defines even when a batch lacks one. STS-B
reports Pearson, Spearman, their mean (the task's headline number) and R². GMET, the
zero-shot mask-filling task, reports accuracy, the equality factor exp(-sigma) across
categories, their product (the combined score), sigma and each category's accuracy.
"""

_CITATION = PAPER_CITATION

_KWARGS_DESCRIPTION = f"""
Args:
    predictions: classification: predicted label ids, in the order the task's dataset lists
        its labels (e.g. mnli: 0 entailment, 1 neutral, 2 contradiction); stsb: predicted
        similarity scores; gmet: the word the model put in place of the mask.
    references: classification: gold label ids; stsb: gold scores from 0 to 5; gmet: for each
        item either the list of acceptable words, or a 0/1 judgment of the predicted word by a
        native speaker.
    categories: gmet only: the category of each item (e.g. "Family").
{BOOTSTRAP_ARGS_DOC}
Returns:
    classification: accuracy, macro_f1. stsb: pearson, spearman, pearson_spearman_mean, r2.
    gmet: accuracy, equality, combined, sigma, category_accuracy (a dict by category).
    All values are floats from 0 to 1 (correlations from -1, R² can be negative).
Examples:

    Three-way inference (MNLI). No item is neutral, yet the neutral class still counts,
    with an F1 of zero:

    >>> nlue_metric = evaluate.load("nlue", "mnli")
    >>> results = nlue_metric.compute(predictions=[0, 2, 2, 0], references=[0, 2, 0, 0])
    >>> print(results["accuracy"], round(results["macro_f1"], 4))
    0.75 0.4889

    Similarity scores (STS-B) with a 95% bootstrap interval:

    >>> stsb = evaluate.load("nlue", "stsb")
    >>> results = stsb.compute(
    ...     predictions=[0.5, 1.5, 2.0, 3.5, 4.5], references=[0.0, 1.0, 2.5, 3.0, 5.0], bootstrap_resamples=200
    ... )
    >>> print(results["spearman"], results["pearson_spearman_mean"] > 0.9)
    1.0 True
    >>> print(sorted(results)[:3])
    ['pearson', 'pearson_ci_high', 'pearson_ci_low']

    GMET: a right word in each Family item, none in House:

    >>> gmet = evaluate.load("nlue", "gmet")
    >>> results = gmet.compute(
    ...     predictions=["बुवा", "दिदी।", "कुर्सी", "भित्ता"],
    ...     references=[["बुवा", "बाबा"], ["दिदी"], ["ढोका"], ["छानो", "छाना"]],
    ...     categories=["Family", "Family", "House", "House"],
    ... )
    >>> print(results["accuracy"], results["sigma"], round(results["combined"], 4))
    0.5 0.5 0.3033
    >>> print(results["category_accuracy"])
    {{'Family': 1.0, 'House': 0.0}}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Nlue(evaluate.Metric):
    def _info(self):
        # Fails here, at load time, with the list of valid configs when the config is not a task.
        spec = task_for_config(self.config_name)
        # A task file's path as config name: from here on the config is the task's name (evaluate keeps its
        # cache under <metric>/<config>, where a path would not do), and the task scores as loaded.
        self._task = spec
        self.config_name = spec.name
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=task_features(spec),
            format=spec.kind.score_format,
            reference_urls=["https://arxiv.org/abs/2411.19244"],
        )

    def _compute(
        self, predictions, references, categories=None, bootstrap_resamples=None, confidence_level=0.95, seed=0
    ):
        return score_task(
            self._task,
            predictions,
            references,
            categories=categories,
            bootstrap_resamples=bootstrap_resamples,
            confidence_level=confidence_level,
            seed=seed,
        )
