"""`nlue compare`: paired tests between runs, checked against direct computations (scipy, sklearn)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score

from nlue.cli import main
from nlue.evals.compare.pairs import compare_runs
from nlue.predictions import attach, prediction_rows
from nlue.registry.tasks import TASKS
from nlue.results import RunResult, write_result
from nlue.scoring.significance import holm, mcnemar_exact


def _run(results: Path, name: str, task: str, predictions, golds, texts=None) -> Path:
    """A results file and its predictions, as an evaluator writes them."""
    items = [{"idx": i, "text": (texts or {}).get(i, f"वाक्य {i}")} for i in range(len(golds))]
    as_wrong = [-1 if p is None else p for p in predictions]  # an invalid LLM answer is wrong
    metrics = {"macro_f1": float(f1_score(golds, as_wrong, average="macro", labels=[0, 1])), "accuracy": 0.0}
    result = RunResult(task=task, model=name, kind="fine-tune", metrics=metrics, dataset={"id": "test"})
    attach(result, prediction_rows(TASKS[task], items, predictions, golds), results, name)
    write_result(result, results, name)
    return results / name


@pytest.fixture
def golds() -> list[int]:
    return np.random.default_rng(0).integers(0, 2, size=120).tolist()


def test_two_runs_of_the_same_model_and_seed_show_no_difference(tmp_path: Path, golds, capsys) -> None:
    same = np.where(np.random.default_rng(1).random(120) < 0.7, golds, 1 - np.asarray(golds)).tolist()
    a, b = _run(tmp_path, "a", "sa", same, golds), _run(tmp_path, "b", "sa", same, golds)
    (c,) = compare_runs([a, b], resamples=2000)
    assert c.difference == 0 and c.ci_low == c.ci_high == 0 and c.p_value == 1.0 and c.mcnemar_p == 1.0
    assert main(["compare", str(a), str(b), "--resamples", "500"]) == 0
    assert "no difference shown" in capsys.readouterr().out


def test_two_different_runs_report_the_difference_a_direct_computation_gives(tmp_path: Path, golds) -> None:
    rng = np.random.default_rng(2)
    gold = np.asarray(golds)
    pred_a = np.where(rng.random(120) < 0.85, gold, 1 - gold)
    pred_b = np.where(rng.random(120) < 0.6, gold, 1 - gold)
    a = _run(tmp_path, "a", "sa", pred_a.tolist(), golds)
    b = _run(tmp_path, "b", "sa", pred_b.tolist(), golds)
    (c,) = compare_runs([a, b], resamples=4000, seed=3)
    direct = f1_score(gold, pred_a, average="macro") - f1_score(gold, pred_b, average="macro")
    assert c.difference == pytest.approx(direct) and c.ci_low < direct < c.ci_high and c.p_value < 0.01
    only_a, only_b = int(((pred_a == gold) & (pred_b != gold)).sum()), int(((pred_b == gold) & (pred_a != gold)).sum())
    assert (c.right_only_a, c.right_only_b) == (only_a, only_b)
    assert c.mcnemar_p == pytest.approx(stats.binomtest(only_a, only_a + only_b).pvalue)


def test_holm_matches_its_definition_and_runs_on_different_items_are_refused(tmp_path: Path, golds, capsys) -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])  # statsmodels' multipletests
    assert mcnemar_exact(0, 0) == 1.0
    a = _run(tmp_path, "a", "sa", golds, golds)
    b = _run(tmp_path, "b", "sa", golds, golds, texts={3: "अर्कै वाक्य"})  # one item's text differs
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "nlue compare: error: " in err and "scored on different items" in err and str(a) in err and str(b) in err


def test_holm_is_applied_across_the_tasks_of_a_pair(tmp_path: Path, golds) -> None:
    rng = np.random.default_rng(4)
    gold = np.asarray(golds)
    for task in ("sa", "cola", "qnli"):
        better = np.where(rng.random(120) < 0.8, gold, 1 - gold)
        worse = np.where(rng.random(120) < 0.65, gold, 1 - gold)
        _run(tmp_path, "a", task, better.tolist(), golds)
        _run(tmp_path, "b", task, worse.tolist(), golds)
    comparisons = compare_runs([tmp_path / "a", tmp_path / "b"], resamples=1000)
    assert sorted(c.task for c in comparisons) == ["cola", "qnli", "sa"]
    assert [c.p_holm for c in comparisons] == pytest.approx(holm([c.p_value for c in comparisons]))
    saved = tmp_path / "out.json"
    assert main(["compare", "a", "b", "--results-dir", str(tmp_path), "--json", str(saved), "--resamples", "200"]) == 0
    assert {row["task"] for row in json.loads(saved.read_text(encoding="utf-8"))} == {"sa", "cola", "qnli"}


def test_llm_runs_by_generation_compare_with_invalid_answers_wrong(tmp_path: Path, golds) -> None:
    gold = np.asarray(golds)
    answers_a = [None if i % 10 == 0 else int(g) for i, g in enumerate(gold)]  # every tenth answer invalid
    a = _run(tmp_path, "a", "sa", answers_a, golds)
    b = _run(tmp_path, "b", "sa", gold.tolist(), golds)
    (c,) = compare_runs([a, b], resamples=500)
    as_wrong = [-1 if p is None else p for p in answers_a]
    assert c.score_a == pytest.approx(f1_score(gold, as_wrong, labels=[0, 1], average="macro", zero_division=0))
    assert c.right_only_a == 0 and c.right_only_b == 12 and c.score_b == 1.0


def test_compare_reads_what_the_evaluators_write(sample_build, tmp_path: Path, capsys) -> None:
    """Two baseline runs with one seed predict the same: compare says so, on the files the command wrote."""
    common = ["baseline", "--tasks", "sa,rte", "--dataset", str(sample_build.repo_dir), "--bootstrap", "0",
              "--results-dir", str(tmp_path), "-q"]  # fmt: skip
    assert main([*common, "--name", "first"]) == 0 and main([*common, "--name", "second"]) == 0
    capsys.readouterr()
    assert main(["compare", "first", "second", "--results-dir", str(tmp_path), "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert out.count("no difference shown") == 2 and "macro_f1" in out and "differ\n" not in out
