"""R², the coefficient of determination, on raw similarity scores (NLUE's STS-B task)."""

import datasets
import evaluate

from nlue.registry.paper import PAPER_CITATION
from nlue.scores import score_r_squared
from nlue.scores.metric_modules import BOOTSTRAP_ARGS_DOC, input_format

_DESCRIPTION = """\
R² tells how much of the spread of the reference scores a model's predicted scores
explain: 1 - (sum of squared errors) / (sum of squared deviations of the references from
their mean). 1 is a perfect fit, 0 is no better than always predicting the mean reference,
and a model that is further off than that goes negative. Unlike a correlation it punishes
scores on the wrong scale or with an offset, which is why NLUE reports it for STS-B next
to Pearson and Spearman. Scores are compared as given, with no rescaling, in float64.
When the references do not vary at all, the result is 1 for an exact fit and 0 otherwise.
"""

_CITATION = PAPER_CITATION

_KWARGS_DESCRIPTION = f"""
Args:
    predictions (`list` of `float`): predicted scores (for STS-B, from 0 to 5).
    references (`list` of `float`): gold scores; at least two items.
{BOOTSTRAP_ARGS_DOC}
Returns:
    r2 (`float`): at most 1, and unbounded below.
Examples:

    A model whose scores track the gold ones with a small error:

    >>> r_squared = evaluate.load("r_squared")
    >>> print(r_squared.compute(predictions=[1.0, 2.0, 3.5, 4.5], references=[1.0, 2.5, 3.0, 4.5]))
    {{'r2': 0.92}}

    A correlation of 1 does not save a model that adds 2 to every score:

    >>> print(r_squared.compute(predictions=[3.0, 4.0, 5.0, 6.0], references=[1.0, 2.0, 3.0, 4.0]))
    {{'r2': -2.2}}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RSquared(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
            # Python floats, not "numpy": its formatter would hand _compute float32 (see input_format).
            format=input_format("regression"),
            reference_urls=["https://en.wikipedia.org/wiki/Coefficient_of_determination"],
        )

    def _compute(self, predictions, references, bootstrap_resamples=None, confidence_level=0.95, seed=0):
        return score_r_squared(
            predictions,
            references,
            bootstrap_resamples=bootstrap_resamples,
            confidence_level=confidence_level,
            seed=seed,
        )
