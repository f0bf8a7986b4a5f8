"""The `nlue` evaluate module scores a task declared in a task file as it scores the shipped ones (issue 30, item 2).

The config name is a task file's path (``evaluate.load("metrics/nlue", "my_task.yaml")``), or a task's
name when ``NLUE_TASK_FILES`` names its file. Values are checked against sklearn and scipy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, r2_score

from nlue.errors import NlueError
from nlue.registry.tasks import TASKS
from nlue.scores import metric_path
from tests.user_tasks import write_user_tasks

evaluate = pytest.importorskip("evaluate")


@pytest.fixture
def task_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    monkeypatch.delenv("NLUE_TASK_FILES", raising=False)
    return write_user_tasks(tmp_path / "tasks")


def test_a_task_files_path_is_a_config_and_scores_every_declared_label(task_files: dict[str, Path]) -> None:
    """Issue 30, item 2: a 5-label Nepali task by its file's path: macro-F1 over all five labels (one absent from
    the batch counts, with F1 0), as sklearn computes it with the task's labels; intervals on request."""
    module = evaluate.load(metric_path("nlue"), str(task_files["ne_news_topic"]))
    assert module.config_name == "ne_news_topic" and "ne_news_topic" not in TASKS  # loaded, not registered
    predictions, references = [0, 1, 2, 2, 0, 1, 3, 2], [0, 1, 2, 3, 1, 1, 3, 0]  # label 4 (culture) never occurs
    scores = module.compute(predictions=predictions, references=references, bootstrap_resamples=200)
    assert scores["accuracy"] == pytest.approx(accuracy_score(references, predictions), abs=1e-12)
    expected = f1_score(references, predictions, average="macro", labels=[0, 1, 2, 3, 4], zero_division=0)
    assert scores["macro_f1"] == pytest.approx(expected, abs=1e-12)
    assert expected != pytest.approx(f1_score(references, predictions, average="macro"))  # the 5th label counts
    assert scores["macro_f1_ci_low"] <= scores["macro_f1"] <= scores["macro_f1_ci_high"]
    with pytest.raises(ValueError):  # a label id the task does not have
        module.compute(predictions=[5], references=[0])


def test_a_task_named_in_nlue_task_files_is_a_config(task_files: dict[str, Path], monkeypatch) -> None:
    """Issue 30, item 2: with NLUE_TASK_FILES naming the files (a folder here), the task's name is its config:
    the Urdu 3-class task and the regression task, checked against sklearn and scipy."""
    monkeypatch.setenv("NLUE_TASK_FILES", str(task_files["ne_news_topic"].parent))
    urdu = evaluate.load(metric_path("nlue"), "ur_review_sentiment")
    predictions, references = [0, 2, 2, 1, 0, 2], [0, 2, 1, 1, 0, 0]
    scores = urdu.compute(predictions=predictions, references=references)
    assert scores == pytest.approx(
        {"accuracy": accuracy_score(references, predictions),
         "macro_f1": f1_score(references, predictions, average="macro", labels=[0, 1, 2])}, abs=1e-12,
    )  # fmt: skip
    relatedness = evaluate.load(metric_path("nlue"), "ne_headline_relatedness")
    predictions, references = [0.4, 1.9, 2.2, 3.6, 4.1, 1.0], [0.5, 1.5, 2.5, 3.0, 5.0, 0.5]
    scores = relatedness.compute(predictions=predictions, references=references)
    pearson, spearman = pearsonr(references, predictions)[0], spearmanr(references, predictions)[0]
    assert scores["pearson"] == pytest.approx(pearson, abs=1e-12)
    assert scores["spearman"] == pytest.approx(spearman, abs=1e-12)
    assert scores["pearson_spearman_mean"] == pytest.approx((pearson + spearman) / 2, abs=1e-12)
    assert scores["r2"] == pytest.approx(r2_score(references, predictions), abs=1e-12)
    assert "ur_review_sentiment" not in TASKS


def test_a_wrong_task_config_says_what_was_expected(task_files: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(NlueError, match="looks like a task file, but no such file"):
        evaluate.load(metric_path("nlue"), str(tmp_path / "missing.yaml"))
    with pytest.raises(NlueError, match="unknown NLUE task 'ur_review_sentiment'"):  # NLUE_TASK_FILES unset
        evaluate.load(metric_path("nlue"), "ur_review_sentiment")
