"""GMET combined score: mask-filling accuracy discounted by how unevenly it spreads over categories."""

import evaluate

from nlue.registry.paper import PAPER_CITATION
from nlue.scores import score_task
from nlue.scores.metric_modules import BOOTSTRAP_ARGS_DOC, gmet_features

_DESCRIPTION = """\
The combined score of GMET, the zero-shot mask-filling task of the NLUE benchmark for
Nepali. A model fills one masked word per sentence; each sentence belongs to a category
(75 in NLUE, such as Family, Weather or Festivals of Nepal). With A the accuracy over all
items, A_k the accuracy within category k and sigma the population standard deviation of
the A_k, the equality factor is E = exp(-sigma) and the combined score is C = A * E. A model
that knows a little about everything therefore beats one with the same accuracy drawn from
a few categories. With a single category, E = 1 and C = A.
"""

_CITATION = PAPER_CITATION

_KWARGS_DESCRIPTION = f"""
Args:
    predictions (`list` of `str`): the word the model proposed for each masked sentence.
    references: for each item, either the list of acceptable words (a prediction is right
        when it equals one of them after Unicode NFC, whitespace, invisible-character and
        surrounding-punctuation/danda clean-up), or a 0/1 judgment of the prediction by a
        native speaker, as the NLUE authors did.
    categories (`list` of `str`): the category of each item.
{BOOTSTRAP_ARGS_DOC}
        Resampling is done within each category, so every resample keeps all categories.
Returns:
    accuracy (`float`): A, the share of items filled correctly.
    equality (`float`): E = exp(-sigma), 1 when every category is equally well served.
    combined (`float`): C = A * E, the GMET headline score.
    sigma (`float`): population standard deviation of the per-category accuracies.
    category_accuracy (`dict`): A_k for each category.
Examples:

    Predicted words checked against acceptable answers. Family is perfect, House is half
    right, so sigma = 0.25:

    >>> gmet = evaluate.load("gmet_combined")
    >>> results = gmet.compute(
    ...     predictions=["हजुरबुवा", "छोरी", " झ्याल ", "चुलो"],
    ...     references=[["हजुरबुवा", "बाजे"], ["छोरी"], ["झ्याल", "ढोका"], ["छानो"]],
    ...     categories=["Family", "Family", "House", "House"],
    ... )
    >>> print(results["accuracy"], results["sigma"], round(results["combined"], 4))
    0.75 0.25 0.5841

    Human judgments instead of answer lists, with a bootstrap interval:

    >>> results = gmet.compute(
    ...     predictions=["हिउँ", "पानी", "घाम", "बादल"],
    ...     references=[1, 1, 0, 1],
    ...     categories=["Weather", "Weather", "Weather", "Weather"],
    ...     bootstrap_resamples=100,
    ... )
    >>> print(results["equality"], results["combined"], results["combined_ci_high"])
    1.0 0.75 1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GmetCombined(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=gmet_features(),
            reference_urls=["https://arxiv.org/abs/2411.19244"],
        )

    def _compute(self, predictions, references, categories, bootstrap_resamples=None, confidence_level=0.95, seed=0):
        return score_task(
            "gmet",
            predictions,
            references,
            categories=categories,
            bootstrap_resamples=bootstrap_resamples,
            confidence_level=confidence_level,
            seed=seed,
        )
