"""GMET scoring (appendix F.2): formulas, normalisation of words, and the paper's table 5."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlue.registry.tasks import GMET_CATEGORY_THEME, TASKS
from nlue.scores import score_task
from nlue.scoring import gmet_scores, judge_predictions

CATEGORIES = sorted(GMET_CATEGORY_THEME)


def direct_gmet(correct: list[int], categories: list[str]) -> dict[str, float]:
    """The appendix F.2 formulas written out plainly, as an independent reference."""
    accuracy = sum(correct) / len(correct)
    names = sorted(set(categories))
    per_category = []
    for name in names:
        marks = [c for c, k in zip(correct, categories, strict=True) if k == name]
        per_category.append(sum(marks) / len(marks))
    mean = sum(per_category) / len(per_category)
    sigma = math.sqrt(sum((a - mean) ** 2 for a in per_category) / len(per_category))
    equality = 1.0 if len(names) == 1 else math.exp(-sigma)
    return {"accuracy": accuracy, "sigma": sigma, "equality": equality, "combined": accuracy * equality}


@st.composite
def judged_items(draw):
    n = draw(st.integers(1, 80))
    pool = draw(st.lists(st.sampled_from(CATEGORIES), min_size=1, max_size=8, unique=True))
    categories = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    correct = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return correct, categories


@settings(max_examples=200, deadline=None)
@given(judged_items())
def test_matches_direct_formulas(items):
    correct, categories = items
    ours = gmet_scores(categories, judgments=correct)
    expected = direct_gmet(correct, categories)
    for key, value in expected.items():
        assert math.isclose(ours[key], value, rel_tol=1e-12, abs_tol=1e-12), key
    assert set(ours["category_accuracy"]) == set(categories)
    assert all(type(ours[k]) is float for k in ("accuracy", "equality", "combined", "sigma"))


def test_one_category_has_equality_one():
    scores = gmet_scores(["Weather"] * 5, judgments=[1, 0, 0, 1, 1])
    assert scores["equality"] == 1.0
    assert scores["sigma"] == 0.0
    assert scores["combined"] == scores["accuracy"] == 0.6


def test_accuracy_is_over_items_not_over_categories():
    # 3 of 3 in Family, 0 of 1 in House: A = 3/4, while the mean of the A_k would be 1/2.
    scores = gmet_scores(["Family", "Family", "Family", "House"], judgments=[1, 1, 1, 0])
    assert scores["accuracy"] == 0.75
    assert scores["sigma"] == 0.5


@pytest.mark.parametrize("model", list(TASKS["gmet"].paper_results))
def test_recovers_sigma_implied_by_paper_table(model):
    """Table 5 gives A and C per model; sigma = -ln(C / A). Build category accuracies with
    exactly that population sigma and mean A, and check the metric finds both again."""
    reported = TASKS["gmet"].paper_results[model]
    accuracy, combined = reported["accuracy"], reported["combined"]
    sigma = -math.log(combined / accuracy)
    # K equal categories alternating A + sigma and A - sigma: mean A, population std exactly sigma.
    k_categories, per_category_items = 20, 10_000
    targets = [accuracy + sigma if k % 2 == 0 else accuracy - sigma for k in range(k_categories)]
    assert all(0.0 <= t <= 1.0 for t in targets)
    # Continuous judgments would be needed to hit the targets exactly; with 10,000 items per
    # category the rounding of each A_k is below 1e-4.
    correct, categories = [], []
    for k, target in enumerate(targets):
        right = round(target * per_category_items)
        correct += [1] * right + [0] * (per_category_items - right)
        categories += [CATEGORIES[k]] * per_category_items
    scores = gmet_scores(categories, judgments=correct)
    assert scores["sigma"] == pytest.approx(sigma, abs=1e-4)
    assert scores["accuracy"] == pytest.approx(accuracy, abs=1e-4)
    assert scores["combined"] == pytest.approx(combined, abs=2e-4)
    assert scores["combined"] == pytest.approx(scores["accuracy"] * math.exp(-scores["sigma"]), rel=1e-12)


def test_words_are_compared_after_normalisation():
    # danda, spaces, a zero-width space, a wrong word, precomposed qa (U+0958) vs ka + nukta
    predictions = ["झ्याल।", " ढोका ", "छा\u200bनो", "भान्सा", "\u0958िताब"]
    answers = [["झ्याल"], ["ढोका", "दैलो"], ["छानो"], ["भान्छा"], ["\u0915\u093cिताब"]]
    assert judge_predictions(predictions, answers).tolist() == [1, 1, 1, 0, 1]


def test_words_and_judgments_give_the_same_scores():
    categories = ["Family", "Family", "House", "River"]
    words = score_task(
        "gmet", ["आमा", "दाइ", "छानो", "खोला"], [["आमा"], ["भाइ"], ["छानो"], ["नदी"]], categories=categories
    )
    judged = score_task("gmet", ["आमा", "दाइ", "छानो", "खोला"], [1, 0, 1, 0], categories=categories)
    assert words == judged


def test_bootstrap_resamples_within_categories():
    rng = np.random.default_rng(0)
    categories = ["Family"] * 30 + ["House"] * 5
    correct = [1] * 30 + rng.integers(0, 2, 5).tolist()
    scores = score_task("gmet", ["x"] * 35, correct, categories=categories, bootstrap_resamples=300, seed=1)
    # Family is always perfect in every resample because it keeps its 30 (all right) items.
    assert scores["sigma_ci_low"] <= scores["sigma"] <= scores["sigma_ci_high"]
    assert 0.0 <= scores["combined_ci_low"] <= scores["combined"] <= scores["combined_ci_high"] <= 1.0


@functools.cache
def gmet_module():
    """The gmet_combined evaluate module, loaded once by path (kept in memory: no cache files per call)."""
    import evaluate

    from nlue.scores import metric_path

    return evaluate.load(metric_path("gmet_combined"), keep_in_memory=True)


@settings(max_examples=200, deadline=None)
@given(judged_items(), st.booleans())
def test_gmet_combined_module_matches_direct_formulas(items, as_words):
    correct, categories = items
    if as_words:  # the same correctness expressed as predicted words and answer lists
        predictions = ["ठीक" if c else "गलत" for c in correct]
        references = [["ठीक", "सही"]] * len(correct)
    else:
        predictions, references = ["शब्द"] * len(correct), correct
    ours = gmet_module().compute(predictions=predictions, references=references, categories=categories)
    for key, value in direct_gmet(correct, categories).items():
        assert math.isclose(ours[key], value, rel_tol=1e-12, abs_tol=1e-12), key


def _simulated_runs(true_accuracy: np.ndarray, items: int, runs: int, rng: np.random.Generator) -> np.ndarray:
    """``runs`` test sets of ``items`` 0/1 verdicts per category, each item right with its category's rate."""
    return (rng.random((runs, len(true_accuracy), items)) < true_accuracy[None, :, None]).astype(np.int64)


@pytest.mark.parametrize(("mean", "spread"), [(0.5, 0.12), (0.3, 0.0)], ids=["uneven", "even"])
def test_intervals_cover_at_the_papers_design(mean, spread):
    """75 categories x 20 items, as in the paper; nominal 95%, accepted 92-98% for A, E and C.

    The target is what the statistic gives on average over test sets of this design (the
    same categories, fresh items): sigma from 20 items per category carries binomial noise,
    so that is what the paper's E and C estimate. The target is measured with 20,000 test
    sets; each of 300 simulated runs then gets its interval through score_task, the
    function the gmet_combined module calls.
    """
    categories, items, runs = 75, 20, 300
    rng = np.random.default_rng(75 * 20)
    true_accuracy = np.clip(rng.normal(mean, spread, categories), 0.0, 1.0)
    names = [name for name in CATEGORIES[:categories] for _ in range(items)]
    reference = _simulated_runs(true_accuracy, items, 20_000, rng).mean(axis=2)
    sigma = reference.std(axis=1)
    target = {
        "accuracy": float(reference.mean()),
        "equality": float(np.exp(-sigma).mean()),
        "combined": float((reference.mean(axis=1) * np.exp(-sigma)).mean()),
    }
    covered = dict.fromkeys(target, 0)
    contains_point = dict.fromkeys(target, 0)
    for run, verdicts in enumerate(_simulated_runs(true_accuracy, items, runs, rng)):
        scores = score_task(
            "gmet", [""] * verdicts.size, verdicts.ravel().tolist(), categories=names, bootstrap_resamples=400, seed=run
        )
        for name, value in target.items():
            covered[name] += scores[f"{name}_ci_low"] <= value <= scores[f"{name}_ci_high"]
            contains_point[name] += scores[f"{name}_ci_low"] <= scores[name] <= scores[f"{name}_ci_high"]
    coverage = {name: count / runs for name, count in covered.items()}
    assert all(0.92 <= share <= 0.98 for share in coverage.values()), coverage
    assert contains_point == dict.fromkeys(target, runs)
