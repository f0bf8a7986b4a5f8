"""The NLUE score: mean of each task's primary metric, with missing tasks reported."""

from __future__ import annotations

import math

import pytest

from nlue.registry.tasks import TASK_NAMES, TASKS
from nlue.scores import nlue_score, primary_score, score_task

MODEL = "XLM-R Base"


def paper_row(model: str) -> dict[str, dict[str, float]]:
    return {name: dict(spec.paper_results[model]) for name, spec in ((n, TASKS[n]) for n in TASK_NAMES)}


def test_mean_of_primary_metrics_over_all_tasks():
    result = nlue_score(paper_row(MODEL))
    expected = [TASKS[name].paper_primary_score(MODEL) for name in TASK_NAMES]
    assert result.complete and result.missing == ()
    assert list(result.task_scores) == list(TASK_NAMES)
    assert result.score == pytest.approx(sum(expected) / len(expected), abs=1e-6)
    stsb = TASKS["stsb"].paper_results[MODEL]
    assert result.task_scores["stsb"] == pytest.approx((stsb["pearson"] + stsb["spearman"]) / 2)
    assert result.task_scores["gmet"] == TASKS["gmet"].paper_results[MODEL]["combined"]
    assert result.task_scores["qnli"] == TASKS["qnli"].paper_results[MODEL]["macro_f1"]


def test_missing_tasks_are_reported_not_averaged_away():
    row = paper_row(MODEL)
    del row["gmet"], row["cr"]
    result = nlue_score(row)
    assert not result.complete
    assert result.missing == ("cr", "gmet")  # registry order
    present = [primary_score(name, metrics) for name, metrics in row.items()]
    assert result.score == pytest.approx(sum(present) / len(present))
    assert result.as_dict()["missing"] == ["cr", "gmet"] and result.as_dict()["complete"] is False


def test_empty_submission():
    result = nlue_score({})
    assert result.score is None and not result.complete and result.missing == TASK_NAMES


def test_chosen_subset_of_tasks():
    row = paper_row(MODEL)
    del row["gmet"]
    fine_tuning_tasks = [name for name in TASK_NAMES if name != "gmet"]
    assert nlue_score(row, tasks=fine_tuning_tasks).complete
    with pytest.raises(ValueError, match="outside the ones scored"):
        nlue_score(paper_row(MODEL), tasks=fine_tuning_tasks)


def test_works_on_score_task_output():
    results = {
        "qnli": score_task("qnli", [0, 1, 1, 0], [0, 1, 0, 0], bootstrap_resamples=20),
        "stsb": score_task("stsb", [0.5, 2.0, 4.0], [1.0, 2.5, 3.5]),
    }
    result = nlue_score(results)
    assert result.task_scores == {"qnli": results["qnli"]["macro_f1"], "stsb": results["stsb"]["pearson_spearman_mean"]}
    assert len(result.missing) == len(TASK_NAMES) - 2


def test_bad_results_are_refused():
    with pytest.raises(ValueError, match=r"unknown NLUE task\(s\) in results: QNLI"):
        nlue_score({"QNLI": {"macro_f1": 0.8}})
    with pytest.raises(ValueError, match="lack its primary metric 'macro_f1'"):
        nlue_score({"qnli": {"accuracy": 0.8}})
    with pytest.raises(ValueError, match="non-finite macro_f1"):
        nlue_score({"qnli": {"macro_f1": math.nan}})
