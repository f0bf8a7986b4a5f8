"""Bad input is refused with a ValueError that names the problem."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlue.scores import score_macro_f1, score_r_squared, score_task
from nlue.scoring import gmet_scores


@pytest.mark.parametrize(
    ("task", "predictions", "references", "match"),
    [
        ("qnli", [0, 1, 1], [0, 1], r"lengths differ: got 3 predictions, 2 references"),
        ("stsb", [1.0, 2.0], [1.0, 2.0, 3.0], r"lengths differ: got 2 predictions, 3 references"),
        ("qnli", [], [], r"empty input"),
        ("stsb", [], [], r"empty input"),
        ("stsb", [1.0], [2.0], r"at least 2 items, got 1"),
        (
            "qnli",
            [0, 2, 1],
            [0, 1, 1],
            r"label id 2 in predictions \(position 1\) is outside the labels of task 'qnli'",
        ),
        ("mnli", [0, 1, 2], [0, 3, 1], r"label id 3 in references \(position 1\) .* valid ids: 0, 1, 2"),
        ("sa", [0, -1], [0, 1], r"label id -1 in predictions"),
        ("sa", [0, 0.5], [0, 1], r"integer label ids; position 1"),
        ("sa", ["neg", "pos"], [0, 1], r"integer label ids"),
        ("stsb", [1.0, math.nan, 2.0], [1.0, 2.0, 3.0], r"predictions hold NaN at position 1"),
        ("stsb", [1.0, 2.0, 3.0], [1.0, math.inf, 3.0], r"references hold an infinite value at position 1"),
        ("stsb", [1.0, 2.0], [-math.inf, 2.0], r"references hold an infinite value at position 0"),
    ],
)
def test_bad_task_inputs(task, predictions, references, match):
    with pytest.raises(ValueError, match=match):
        score_task(task, predictions, references)


def test_unknown_task_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown NLUE task 'squad'; expected one of: sa, cola"):
        score_task("squad", [0], [0])


def test_categories_only_for_gmet():
    with pytest.raises(ValueError, match="categories apply to GMET only"):
        score_task("qnli", [0], [0], categories=["Family"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"categories": None}, r"missing categories"),
        ({"categories": ["Family", "House"]}, r"lengths differ: got 3 items, 2 categories"),
        ({"categories": ["Family", "", "House"]}, r"missing categories: item 1"),
        ({"categories": ["Family", None, "House"]}, r"missing categories: item 1"),
    ],
)
def test_gmet_categories_are_required(kwargs, match):
    with pytest.raises(ValueError, match=match):
        score_task("gmet", ["क", "ख", "ग"], [["क"], ["ख"], ["ग"]], **kwargs)


@pytest.mark.parametrize(
    ("predictions", "references", "match"),
    [
        (["क", "ख"], [["क"], []], r"answers for item 1 are an empty list"),
        (["क", "ख"], [["क"]], r"lengths differ: got 2 predictions, 1 answers"),
        (["क", 3], [["क"], ["ख"]], r"predictions must be words \(strings\); item 1"),
        (["क", "ख"], [["क"], 1], r"mix answer lists and judgments"),
        (["क", "ख"], [1, 2], r"judgments must be 0 \(wrong\) or 1 \(right\); item 1 holds 2"),
        ([], [], r"empty input"),
    ],
)
def test_bad_gmet_inputs(predictions, references, match):
    with pytest.raises(ValueError, match=match):
        score_task("gmet", predictions, references, categories=["Family"] * len(predictions))


def test_gmet_needs_one_input_form():
    with pytest.raises(ValueError, match="either answers or judgments"):
        gmet_scores(["Family"], predictions=["क"], answers=[["क"]], judgments=[1])
    with pytest.raises(ValueError, match="needs predictions with answers, or 0/1 judgments"):
        gmet_scores(["Family"], predictions=["क"])


def test_macro_f1_labels():
    with pytest.raises(ValueError, match=r"label id 5 in predictions .* outside the labels of the given labels"):
        score_macro_f1([0, 5], [0, 1], labels=[0, 1])
    with pytest.raises(ValueError, match=r"disagree with task 'qnli'"):
        score_macro_f1([0, 1], [0, 1], task="qnli", labels=[0, 1, 2])
    with pytest.raises(ValueError, match=r"not a classification task"):
        score_macro_f1([0, 1], [0, 1], task="stsb")
    with pytest.raises(ValueError, match=r"repeat an id"):
        score_macro_f1([0, 1], [0, 1], labels=[0, 1, 1])
    with pytest.raises(ValueError, match=r"predictions must be a list with one value per item, got int"):
        score_macro_f1(3, [0, 1], labels=[0, 1])
    # Non-contiguous explicit labels work, and a class never seen still counts.
    assert score_macro_f1([10, 10], [10, 10], labels=[10, 20, 30]) == {"macro_f1": pytest.approx(1 / 3)}


def test_r_squared_refuses_non_numbers():
    with pytest.raises(ValueError, match="predictions must be numbers"):
        score_r_squared(["a", "b"], [1.0, 2.0])
    with pytest.raises(ValueError, match="flat list"):
        score_r_squared(np.ones((2, 2)), np.ones((2, 2)))


def test_module_errors_reach_the_user():
    """The same messages come out of evaluate's compute, not an Arrow error from deep inside."""
    import evaluate

    from nlue.scores import metric_path

    qnli = evaluate.load(metric_path("nlue"), "qnli")
    with pytest.raises(ValueError, match="outside the labels of task 'qnli'"):
        qnli.compute(predictions=[0, 7], references=[0, 1])
    stsb = evaluate.load(metric_path("nlue"), "stsb")
    with pytest.raises(ValueError, match="NaN at position 0"):
        stsb.compute(predictions=[math.nan, 1.0], references=[0.0, 1.0])
