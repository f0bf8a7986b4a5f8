"""Judge agreement statistics: Cohen's kappa against scikit-learn, Fleiss' kappa against a worked example."""

from __future__ import annotations

import numpy as np
import pytest

from nlue.gmet.agreement import agreement, cohen_kappa, fleiss_kappa, percent_agreement, rating_counts

sklearn_metrics = pytest.importorskip("sklearn.metrics")


@pytest.mark.parametrize("seed", range(8))
def test_cohen_kappa_matches_sklearn(seed: int):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, size=40)
    flip = rng.random(40) < 0.3
    b = np.where(flip, 1 - a, a)
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_more_labels_and_unequal_label_sets():
    a = [0, 1, 2, 2, 1, 0, 2, 1]
    b = [0, 1, 1, 2, 1, 0, 2, 2]
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b))
    a, b = [1, 1, 1, 0], [1, 1, 1, 1]  # one judge used a single label
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b))


def test_cohen_kappa_known_values_and_degenerate_case():
    assert cohen_kappa([0, 1, 0, 1], [0, 1, 0, 1]) == pytest.approx(1.0)
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None  # chance agreement is 1: undefined
    with pytest.raises(ValueError):
        cohen_kappa([0, 1], [0])


def test_fleiss_kappa_worked_example():
    # The classic worked example of Fleiss' kappa (10 items, 14 raters, 5 categories): 0.210.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(counts) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_kappa_binary_cases():
    ratings = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]])
    assert fleiss_kappa(rating_counts(ratings)) == pytest.approx(1.0)
    assert fleiss_kappa(rating_counts(np.ones((5, 3), dtype=int))) is None
    # By hand: P_i = (1, 1/3, 1/3, 1), so P_bar = 2/3; p(1) = 6/12, so P_e = 1/2; kappa = (2/3 - 1/2) / (1/2).
    ratings = np.array([[1, 1, 1], [1, 1, 0], [0, 1, 0], [0, 0, 0]])
    assert fleiss_kappa(rating_counts(ratings)) == pytest.approx(1 / 3)
    # p(1) = 7/12: P_e = (49 + 25) / 144, P_bar = 2/3 again.
    ratings = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 0, 0]])
    expected_pe = (49 + 25) / 144
    assert fleiss_kappa(rating_counts(ratings)) == pytest.approx((2 / 3 - expected_pe) / (1 - expected_pe))
    with pytest.raises(ValueError, match="same number of judges"):
        fleiss_kappa([[1, 1], [2, 1]])


def test_agreement_picks_the_statistic_by_number_of_judges():
    two = np.array([[1, 1], [0, 1], [0, 0], [1, 1]])
    stats = agreement(two)
    assert stats["statistic"] == "cohen_kappa"
    assert stats["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(two[:, 0], two[:, 1]))
    assert stats["unanimous"] == pytest.approx(0.75) == percent_agreement(two)
    three = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]])
    assert agreement(three)["statistic"] == "fleiss_kappa"
    assert agreement(np.array([[1], [0]]))["kappa"] is None
