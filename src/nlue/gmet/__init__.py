"""GMET zero-shot evaluation of masked language models, and human judging of the predictions.

GMET (the General Masked Evaluation Task of the NLUE paper) asks a masked LM to fill
one ``[MASK]`` per sentence with a word, without fine-tuning.

What a prediction is
    Every item's candidates (its acceptable answers, the model's top single-token
    words and its greedy multi-piece completions) are ranked by the PLL-word-l2r
    pseudo-log-likelihood divided by ``pieces ** length_alpha`` (default 1: mean
    log-probability per piece); see :mod:`nlue.lm.masked.predictor`. The top ``k`` distinct words
    are the item's whole-word predictions; the first is *the* prediction.

What "correct" means automatically
    The top-1 predicted word equals one of the item's acceptable answers after
    :func:`nlue.text.normalize.normalize_answer` is applied to both (Unicode NFC, invisible
    characters and surrounding punctuation or dandas removed), which is
    :func:`nlue.scoring.judge_predictions`. A correct word that the dataset does not
    list counts as wrong automatically: this is what the human judging fixes (the paper
    had native speakers judge every prediction), see :mod:`nlue.gmet.judging`.

The scores
    Accuracy A, equality E = exp(-sigma) of the per-category accuracies and the combined
    score C = A * E (appendix F.2), with bootstrap CIs, all from
    :func:`nlue.scores.score_task`; never re-implemented here.

Modules: :mod:`~nlue.gmet.items` (data), :mod:`~nlue.lm.masked.predictor` (masked-LM scorer),
:mod:`~nlue.lm.baselines.ngram` (download-free baselines), :mod:`~nlue.gmet.evaluate`
(a run and its outputs), :mod:`~nlue.gmet.report` (tables, chart),
:mod:`~nlue.gmet.judging` and :mod:`~nlue.gmet.agreement` (human verdicts),
:mod:`~nlue.gmet.cli` (``nlue gmet``).
"""

from nlue.gmet.agreement import cohen_kappa, fleiss_kappa
from nlue.gmet.items import GmetItem, ItemPrediction, load_items

__all__ = ["GmetItem", "ItemPrediction", "cohen_kappa", "fleiss_kappa", "load_items"]
