"""Figures reported by the NLUE paper (arXiv:2411.19244), kept as data.

Only numbers and names live here; the task registry (:mod:`nlue.registry.tasks`) exposes them
per task. Scores are the paper's test-set percentages, as printed (tables 2-5); the
registry converts them to the 0-1 scale our metrics return.
"""

from __future__ import annotations

from dataclasses import dataclass

# Column order of the paper's results tables. Each model row below lists its 25 numbers
# in exactly this order, so a row can be checked against the paper at a glance.
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("sa", "accuracy"), ("sa", "macro_f1"),
    ("cola", "accuracy"), ("cola", "macro_f1"),
    ("wg", "accuracy"), ("wg", "macro_f1"),
    ("qqp", "accuracy"), ("qqp", "macro_f1"),
    ("mrpc", "accuracy"), ("mrpc", "macro_f1"),
    ("stsb", "spearman"), ("stsb", "pearson"), ("stsb", "r2"),
    ("qadsm", "accuracy"), ("qadsm", "macro_f1"),
    ("mnli", "accuracy"), ("mnli", "macro_f1"),
    ("qnli", "accuracy"), ("qnli", "macro_f1"),
    ("rte", "accuracy"), ("rte", "macro_f1"),
    ("cr", "accuracy"), ("cr", "macro_f1"),
    ("gmet", "accuracy"), ("gmet", "combined"),
)  # fmt: skip


@dataclass(frozen=True)
class PaperModel:
    """A base encoder evaluated in the paper."""

    name: str
    params_millions: int
    hub_id: str
    hub_id_confirmed: bool  # False: our guess at the checkpoint the paper used, not stated by it
    results_percent: tuple[float, ...]
    best_hparams: str  # appendix E row: "config,lr,epochs,batch" per task, "|"-separated
    hub_id_note: str = ""  # why the Hub id is a guess
    # Pretrained on many languages (True) or on Nepali alone: from each model's own name and card, not a
    # column of the paper's tables, so the report's monolingual vs multilingual grouping says it is ours.
    multilingual: bool = False


# Task order of the appendix E hyperparameter table.
HPARAM_TASKS: tuple[str, ...] = (
    "sa", "cola", "wg", "qqp", "mrpc", "stsb", "qadsm", "mnli", "qnli", "rte", "cr",
)  # fmt: skip

PAPER_MODELS: tuple[PaperModel, ...] = (
    PaperModel(
        "Distilbert-Nepali", 67, "Sakonii/distilbert-base-nepali", True,
        (86.34, 86.33, 84.51, 80.96, 58.20, 58.08,
         81.63, 81.07, 80.52, 77.95, 84.57, 83.13, 71.13, 65.74, 65.63,
         68.57, 68.61, 79.61, 79.46, 56.06, 55.63, 52.82, 52.63,
         51.47, 42.84),
        "I,2e-5,3,16|I,2e-5,5,16|II,2e-5,8,32|VI,2e-5,3,16|VI,2e-5,4,16|I,2e-5,15,16|"
        "VI,2e-5,4,16|VI,2e-5,3,16|VI,2e-5,2,16|V,2e-5,10,32|V,1e-5,4,16",
    ),
    PaperModel(
        "NepBERT", 82, "Rajan/NepaliBERT", False,
        (83.34, 83.34, 80.51, 74.80, 52.49, 52.04,
         71.17, 69.61, 67.34, 56.91, 41.44, 41.06, 12.71, 61.03, 60.80,
         51.93, 51.09, 60.04, 59.96, 53.88, 53.85, 55.63, 39.70,
         13.60, 12.52),
        "I,2e-5,2,16|I,2e-5,8,16|II,2e-5,4,32|VI,2e-5,2,16|VI,2e-5,3,16|I,2e-5,15,16|"
        "VI,2e-5,3,16|VI,2e-5,4,16|VI,2e-5,3,16|V,2e-5,12,32|V,1e-5,3,16",
        "a likely match by name and size; the paper gives no Hub id",
    ),
    PaperModel(
        "NepaliBERT", 110, "Shushant/nepaliBERT", False,
        (87.06, 87.06, 84.51, 80.92, 54.77, 54.75,
         77.37, 76.67, 66.86, 58.49, 75.91, 73.76, 57.62, 63.27, 63.18,
         63.27, 63.25, 77.58, 77.43, 51.89, 51.80, 55.63, 55.63,
         44.53, 37.99),
        "I,2e-5,2,16|I,2e-5,8,16|II,2e-5,5,32|VI,2e-5,4,16|VII,2e-5,5,16|I,2e-5,14,16|"
        "VI,2e-5,5,16|VI,2e-5,3,16|VI,2e-5,2,16|V,2e-5,9,32|IV,1e-5,3,16",
        "a likely match by name and size; the paper gives no Hub id",
    ),
    PaperModel(
        "BERT Nepali", 110, "IRIISNEPAL/BERT_Nepali_110M", True,
        (87.73, 87.72, 84.76, 80.65, 66.81, 66.13,
         80.88, 80.48, 76.50, 73.61, 84.57, 83.87, 71.54, 64.35, 64.34,
         71.80, 71.92, 81.26, 81.22, 53.28, 53.27, 59.15, 51.63,
         49.40, 42.63),
        "I,2e-5,2,16|I,2e-5,10,16|II,2e-5,10,32|VI,2e-5,2,16|VII,2e-5,5,16|I,2e-5,15,16|"
        "VI,2e-5,5,16|VI,2e-5,3,16|VI,2e-5,2,16|V,2e-5,11,32|V,1e-5,2,16",
    ),
    PaperModel(
        "NepBERTa", 110, "NepBERTa/NepBERTa", False,
        (86.62, 86.62, 84.15, 80.60, 67.12, 50.52,
         81.83, 81.57, 80.42, 78.67, 87.54, 86.44, 76.53, 63.71, 63.64,
         71.87, 71.85, 81.24, 81.15, 55.07, 53.33, 58.52, 57.33,
         46.40, 39.89),
        "I,2e-5,2,16|I,2e-5,8,16|I,2e-5,9,32|VI,2e-5,4,16|VII,2e-5,4,16|I,2e-5,15,16|"
        "VI,2e-5,3,32|VI,2e-5,3,16|VI,2e-5,2,16|V,2e-5,10,32|V,1e-5,2,32",
        "a likely match by name and size; the paper gives no Hub id",
    ),
    PaperModel(
        "RoBERTa Nepali", 125, "IRIISNEPAL/RoBERTa_Nepali_110M", False,
        (87.75, 87.74, 85.44, 82.14, 68.07, 68.07,
         81.15, 80.60, 79.47, 75.25, 87.75, 86.32, 76.68, 65.02, 65.00,
         73.10, 73.07, 81.86, 81.78, 52.49, 52.44, 49.29, 49.12,
         57.27, 48.76),
        "I,2e-5,2,16|I,2e-5,9,16|I,2e-5,9,32|VI,2e-5,2,16|VI,2e-5,6,16|II,2e-5,12,8|"
        "VI,2e-5,3,32|VII,2e-5,7,16|VI,2e-5,2,16|V,2e-5,15,32|V,2e-5,5,32",
        "the paper gives 125M parameters, this repository's name says 110M: the same model is our guess",
    ),
    PaperModel(
        "DeBERTa-Nepali", 139, "Sakonii/deberta-base-nepali", True,
        (87.43, 87.42, 85.08, 81.86, 59.76, 59.75,
         82.85, 82.33, 80.61, 78.23, 81.62, 80.00, 66.35, 65.23, 65.21,
         74.01, 74.01, 82.64, 82.64, 53.88, 53.04, 50.70, 50.67,
         52.60, 44.56),
        "I,2e-5,3,16|I,2e-5,5,16|II,2e-5,8,32|VI,2e-5,2,16|VII,2e-5,4,16|I,2e-5,5,16|"
        "VI,2e-5,5,16|VII,2e-5,5,16|VI,2e-5,4,16|V,2e-5,10,32|IV,2e-5,5,32",
    ),
    PaperModel(
        "Multilingual BERT", 172, "google-bert/bert-base-multilingual-cased", False,
        (86.35, 86.34, 82.41, 78.95, 67.12, 50.52,
         82.31, 81.78, 81.47, 78.02, 87.75, 86.62, 76.93, 63.91, 63.84,
         71.60, 71.85, 83.47, 83.46, 68.19, 68.00, 47.89, 47.38,
         14.13, 12.80),
        "I,2e-5,3,16|I,2e-5,10,16|II,2e-5,10,32|VI,2e-5,2,16|VII,2e-5,3,16|I,2e-5,5,16|"
        "VI,2e-5,5,16|VI,2e-5,3,16|VI,2e-5,2,16|V,2e-5,10,32|IV,2e-5,3,32",
        "the paper does not say cased or uncased; the cased model is our guess",
        multilingual=True,
    ),
    PaperModel(
        "XLM-R Base", 270, "FacebookAI/xlm-roberta-base", True,
        (88.33, 88.34, 85.64, 82.03, 50.77, 50.52,
         83.06, 82.68, 82.71, 80.59, 87.68, 86.79, 76.77, 63.70, 63.70,
         75.23, 75.22, 83.13, 83.13, 57.06, 54.86, 50.00, 49.80,
         53.27, 44.75),
        "I,2e-5,3,16|I,2e-5,5,16|I,2e-5,8,32|VI,2e-5,2,16|VI,2e-5,4,16|I,2e-5,13,16|"
        "VI,2e-5,3,32|VII,2e-5,5,16|VI,2e-5,3,16|V,2e-5,15,32|IV,2e-5,3,32",
        multilingual=True,
    ),
    PaperModel(
        "m-DeBERTa-v3", 276, "microsoft/mdeberta-v3-base", True,
        (88.94, 88.93, 88.31, 85.64, 67.45, 67.44,
         84.34, 83.82, 83.48, 81.93, 90.22, 89.57, 81.33, 66.42, 66.42,
         78.76, 78.84, 86.65, 86.65, 57.85, 57.80, 46.48, 32.84,
         45.33, 42.77),
        "I,2e-5,3,16|I,2e-5,5,16|I,2e-5,8,32|VI,2e-5,3,16|VII,2e-5,6,16|I,2e-5,14,16|"
        "VI,2e-5,3,16|VI,2e-5,3,16|VI,2e-5,2,16|IV,2e-5,12,32|IV,1e-5,4,8",
        multilingual=True,
    ),
)  # fmt: skip


def paper_model(name_or_hub_id: str | None) -> PaperModel | None:
    """The paper's encoder named ``name_or_hub_id`` (its name in the paper or our Hub id for it), if any."""
    if not name_or_hub_id:
        return None
    wanted = str(name_or_hub_id).strip().casefold()
    return next((m for m in PAPER_MODELS if wanted in (m.name.casefold(), m.hub_id.casefold())), None)


PAPER_CITATION = """@article{nyachhyon2024nlue,
  title   = {Consolidating and Developing Benchmarking Datasets for the Nepali
             Natural Language Understanding Tasks},
  author  = {Nyachhyon and Sharma and Thapa and Bal},
  journal = {arXiv preprint arXiv:2411.19244},
  year    = {2024}
}"""
