"""The paper's inconsistent cells are flagged, recomputed here independently from the registry's numbers.

Each check is redone by other means than nlue.registry.paper_checks uses (brute force over integer
confusion matrices, simulation), for every row of every table the registry holds, so a
future or corrected table is checked the same way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlue.registry.paper import PAPER_MODELS
from nlue.registry.tasks import NLUE_SCORE_NOTE, TASKS

MODELS = [m.name for m in PAPER_MODELS]


def _flagged(task: str, model: str, check: str) -> bool:
    return any(flag.check == check for flag in TASKS[task].paper_flags.get(model, ()))


def _printed(value: float) -> float:
    """The registry keeps cells on the 0-1 scale; the paper printed percent with two decimals."""
    return round(100 * value, 2)


@pytest.mark.parametrize("model", MODELS)
def test_stsb_r2_above_pearson_squared_is_flagged(model: str):
    scores = TASKS["stsb"].paper_results[model]
    # Smallest Pearson and largest R² the printed (rounded) cells allow.
    pearson = (_printed(scores["pearson"]) - 0.005) / 100
    r2 = (_printed(scores["r2"]) + 0.005) / 100
    impossible = (_printed(scores["r2"]) - 0.005) / 100 > ((_printed(scores["pearson"]) + 0.005) / 100) ** 2
    assert _flagged("stsb", model, "r2_above_pearson_squared") == impossible, (pearson, r2)


def test_stsb_nine_of_ten_rows_are_flagged_as_probably_swapped():
    flags = [f for fs in TASKS["stsb"].paper_flags.values() for f in fs]
    assert len(flags) == 9 and all("swapped" in f.summary for f in flags)
    assert "NepBERT" not in TASKS["stsb"].paper_flags


def _macro_f1_span(accuracy: float, share_0: float) -> tuple[float, float]:
    """Macro-F1 range by brute force over a dense grid of confusion matrices (shares within ±2 points)."""
    shares = np.linspace(share_0 - 0.02, share_0 + 0.02, 41)[:, None]
    fraction = np.linspace(0.0, 1.0, 4001)[None, :]
    low_x, high_x = np.maximum(0.0, accuracy - (1 - shares)), np.minimum(shares, accuracy)
    x = low_x + (high_x - low_x) * fraction  # share of items that are correct members of class 0
    y = accuracy - x
    fn0, fp0 = shares - x, (1 - shares) - y  # class-0 items missed, class-1 items called class 0
    with np.errstate(invalid="ignore", divide="ignore"):
        f1_0 = np.where(x > 0, 2 * x / (2 * x + fn0 + fp0), 0.0)
        f1_1 = np.where(y > 0, 2 * y / (2 * y + fn0 + fp0), 0.0)
    macro = ((f1_0 + f1_1) / 2)[(high_x >= low_x).ravel()]
    return float(macro.min()), float(macro.max())


BINARY = [name for name, task in TASKS.items() if len(task.label_names) == 2 and task.benchmark == "nlue"]


@pytest.mark.parametrize("task", BINARY)
def test_impossible_accuracy_and_macro_f1_pairs_are_flagged(task: str):
    spec = TASKS[task]
    share_0 = spec.class_balance[spec.label_names[0]]
    for model in MODELS:
        scores = spec.paper_results[model]
        low, high = _macro_f1_span(scores["accuracy"], share_0)
        # Two printed cells, each rounded to half a unit of 0.0001: allow 0.0002 either way.
        possible = low - 2e-4 <= scores["macro_f1"] <= high + 2e-4
        assert _flagged(task, model, "accuracy_macro_f1_impossible") == (not possible), (task, model, low, high)


def test_wg_rows_named_by_the_issue_are_flagged():
    assert _flagged("wg", "NepBERTa", "accuracy_macro_f1_impossible")
    assert _flagged("wg", "Multilingual BERT", "accuracy_macro_f1_impossible")
    assert not _flagged("wg", "XLM-R Base", "accuracy_macro_f1_impossible")  # 50.77 / 50.52 is possible


@pytest.mark.parametrize("model", MODELS)
def test_gmet_sigma_below_sampling_noise_is_flagged(model: str):
    """Simulate sigma with the same true accuracy in all 75 categories of 20 items; flag below its 0.1% quantile."""
    scores = TASKS["gmet"].paper_results[model]
    accuracy, combined = scores["accuracy"], scores["combined"]
    implied = -math.log(combined / accuracy)
    rng = np.random.default_rng(0)
    per_category = rng.binomial(20, accuracy, size=(50_000, 75)) / 20
    floor = np.quantile(per_category.std(axis=1), 0.001)
    # The registry's floor is an approximation; only a clear verdict must agree.
    if abs(implied - floor) > 0.005:
        assert _flagged("gmet", model, "gmet_sigma_below_noise") == (implied < floor), (implied, floor)
    assert _flagged("gmet", "m-DeBERTa-v3", "gmet_sigma_below_noise")


def test_flags_keep_the_printed_numbers_and_explain_themselves():
    for task in TASKS.values():
        for model, flags in task.paper_flags.items():
            for flag in flags:
                assert flag.model == model and flag.task == task.name
                assert set(flag.cells) <= set(task.paper_results[model])
                assert flag.summary and len(flag.explanation) > 60
    # Numbers are as printed: the flagged WG cells still read 67.12 / 50.52.
    assert _printed(TASKS["wg"].paper_results["NepBERTa"]["accuracy"]) == 67.12
    assert _printed(TASKS["wg"].paper_results["NepBERTa"]["macro_f1"]) == 50.52


def test_conventions_are_declared_as_ours():
    assert "nlue convention" in NLUE_SCORE_NOTE and "paper defines no overall score" in NLUE_SCORE_NOTE
    assert "nlue convention" in TASKS["stsb"].primary_note and not TASKS["stsb"].primary_is_paper_defined
    assert "nlue convention" in TASKS["sa"].primary_note
    assert TASKS["gmet"].primary_is_paper_defined and "paper's own" in TASKS["gmet"].primary_note


def test_provenance_follows_the_paper():
    assert "MultiNLI" in " ".join(TASKS["mnli"].sources)
    assert not any("XGLUE" in s for s in TASKS["wg"].sources)
    assert "news" not in TASKS["qadsm"].domains and any("advert" in d for d in TASKS["qadsm"].domains)
    gmet = " ".join(TASKS["gmet"].sources)
    assert "authentic" in gmet and "written for NLUE" not in gmet
    guesses = {m.name: m for m in PAPER_MODELS}
    for name in ("RoBERTa Nepali", "Multilingual BERT", "NepBERTa", "NepBERT", "NepaliBERT"):
        assert not guesses[name].hub_id_confirmed and guesses[name].hub_id_note
