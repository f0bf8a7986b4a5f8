"""The non-neural baseline (baseline:tfidf): every trainable task on the sample, honest scores, determinism."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

from nlue.boards.leaderboard import result_rows
from nlue.data.access import load_task
from nlue.data.build import build_repo
from nlue.data.discover import task_sources_from_folder
from nlue.data.report import BuildOptions
from nlue.evals.baseline_cli import DEFAULT_NAME, MODEL_ID, main, predictions_path, run_baseline
from nlue.lm.baselines.tfidf import NGRAM_RANGE, TfidfBaseline
from nlue.registry.tasks import TASK_NAMES, TASKS
from nlue.results import RunResult
from nlue.scores import score_task

TRAINABLE = [name for name in TASK_NAMES if TASKS[name].kind.trainable]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, RunResult]]:
    results_dir = tmp_path_factory.mktemp("tfidf-results")
    return results_dir, run_baseline(None, "all", results_dir)


def _predictions(results_dir: Path, task: str) -> list:
    lines = predictions_path(results_dir, task).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["prediction"] for line in lines]


def test_every_trainable_task_is_trained_and_written(sample_run) -> None:
    results_dir, results = sample_run
    assert list(results) == TRAINABLE
    assert TRAINABLE and not any(not TASKS[t].kind.trainable for t in results)  # GMET is not among them
    for task, result in results.items():
        on_disk = json.loads((results_dir / DEFAULT_NAME / f"{task}.json").read_text(encoding="utf-8"))
        assert on_disk["kind"] == "baseline" and on_disk["model"] == MODEL_ID
        assert on_disk["dataset"]["is_sample"] is True
        assert "non-neural floor" in on_disk["notes"]
        hyper = result.hyperparameters
        assert hyper["ngram_range"] == list(NGRAM_RANGE) and hyper["feature_count"] > 0
        assert (hyper.get("C") or hyper.get("alpha")) is not None
        assert bool(hyper["pair_features"]) == _is_pair(task)
        assert result.timings["fit_seconds"] >= 0 and result.timings["predict_seconds"] >= 0
        primary = result.primary_metric
        assert result.metrics[f"{primary}_ci_low"] <= result.primary_score <= result.metrics[f"{primary}_ci_high"]


def _is_pair(task: str) -> bool:
    spec = TASKS[task]
    example = load_task(None, spec)["train"][0]
    return spec.kind.text_pair(spec, example)[1] is not None


def test_the_leaderboard_reads_the_results_as_a_baseline(sample_run) -> None:
    results_dir, results = sample_run
    board = result_rows(results_dir)
    assert board.skipped == []  # the predictions files (.jsonl) are not mistaken for results files
    (row,) = board.rows
    assert row.model == MODEL_ID and row.kinds == ("baseline",)
    assert "sample" in row.data
    assert set(row.task_scores) == set(TRAINABLE)
    for task, score in row.task_scores.items():
        assert score == pytest.approx(results[task].primary_score)


def test_scores_are_score_task_recomputed_from_the_predictions(sample_run) -> None:
    results_dir, results = sample_run
    for task, result in results.items():
        spec = TASKS[task]
        references = load_task(None, spec)["test"][str(spec.label_field)]
        again = score_task(task, _predictions(results_dir, task), references, bootstrap_resamples=1000, seed=42)
        assert result.metrics == {k: v for k, v in again.items() if isinstance(v, float)}


def test_regression_predictions_stay_in_the_score_range(sample_run) -> None:
    results_dir, results = sample_run
    regression = [t for t in results if not TASKS[t].kind.has_classes]
    assert regression  # STS-B
    for task in regression:
        low, high = TASKS[task].score_range
        predictions = _predictions(results_dir, task)
        assert all(isinstance(p, float) and low <= p <= high for p in predictions)


def test_same_seed_same_predictions(sample_run, tmp_path: Path) -> None:
    results_dir, results = sample_run
    tasks = ["sa", "stsb", "wg", "mnli"]
    again = run_baseline(None, ",".join(tasks), tmp_path, seed=42)
    for task in tasks:
        assert _predictions(tmp_path, task) == _predictions(results_dir, task)
        assert again[task].metrics == results[task].metrics
        assert again[task].hyperparameters == results[task].hyperparameters


def test_a_task_that_does_not_train_is_refused_or_skipped(tmp_path: Path) -> None:
    untrained = [t for t in TASKS.values() if not t.kind.trainable]
    assert untrained
    with pytest.raises(ValueError, match="task"):
        TfidfBaseline(untrained[0])
    assert list(run_baseline(None, [untrained[0].name, "cr"], tmp_path, bootstrap_resamples=0)) == ["cr"]


# --------------------------------------------------------------------------- a task the n-grams can solve
_MARKERS = {0: ("नराम्रो", "दुःखद", "बेकार"), 1: ("रमाइलो", "सुन्दर", "उत्कृष्ट")}
_FILLER = [
    "आज",
    "हामी",
    "गाउँ",
    "बजार",
    "किताब",
    "पानी",
    "घर",
    "बाटो",
    "साथी",
    "दिन",
    "समय",
    "काम",
    "विद्यालय",
    "खेत",
    "बिहान",
    "बेलुका",
    "हिमाल",
    "नदी",
    "मान्छे",
    "गाडी",
    "पसल",
    "खाना",
    "चिया",
    "कुरा",
]


def _synthetic_rows(rng: random.Random, count: int, seen: set[str]) -> list[dict]:
    """Sentences of neutral words with one word that marks the class, never seen before (no duplicates)."""
    rows: list[dict] = []
    while len(rows) < count:
        label = rng.randrange(2)
        words = rng.sample(_FILLER, rng.randint(5, 9))
        words.insert(rng.randrange(len(words) + 1), rng.choice(_MARKERS[label]))
        text = " ".join(words) + "।"
        if text not in seen:
            seen.add(text)
            rows.append({"text": text, "label": label})
    return rows


@pytest.fixture(scope="module")
def synthetic_dataset(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("synthetic")
    folder = root / "src" / "sa"
    folder.mkdir(parents=True)
    rng, seen = random.Random(7), set()
    for split, count in (("train", 160), ("validation", 40), ("test", 80)):
        rows = _synthetic_rows(rng, count, seen)
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    options = BuildOptions(license="apache-2.0", show_progress=False)
    return str(build_repo(task_sources_from_folder(root / "src"), root / "out", options).repo_dir)


def test_character_ngram_signal_is_learned(synthetic_dataset: str, tmp_path: Path) -> None:
    results = run_baseline(synthetic_dataset, "sa", tmp_path, bootstrap_resamples=200)
    result = results["sa"]
    assert result.metrics["macro_f1"] >= 0.9
    assert result.dataset["is_sample"] is False and result.dataset["id"] == synthetic_dataset


# --------------------------------------------------------------------------- the command line
def test_main_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Both spellings of an option, and the short --bootstrap, as every nlue sub-command takes them.
    code = main(["--tasks", "sa,stsb", "--results_dir", str(tmp_path), "--bootstrap", "100", "--results-name", "tf"])
    out = capsys.readouterr().out
    assert code == 0
    assert "95% CI" in out and "macro_f1" in out and "pearson_spearman_mean" in out and "SAMPLE" in out
    assert (tmp_path / "tf" / "stsb.json").is_file() and predictions_path(tmp_path, "sa", "tf").is_file()


def test_nlue_baseline_runs_this_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from nlue.cli import main as nlue_main

    assert nlue_main(["baseline", "--tasks", "cr", "--results-dir", str(tmp_path), "--bootstrap-resamples", "0"]) == 0
    assert "cr" in capsys.readouterr().out
    assert json.loads((tmp_path / DEFAULT_NAME / "cr.json").read_text(encoding="utf-8"))["model"] == MODEL_ID


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tasks", "sa,nope"], "'nope' is not a task this command takes; valid: sa, cola"),
        (["--tasks", "sa", "--dataset", "{missing}"], "missing: no such folder"),
        (["--tasks", "gmet"], "'gmet' is not a task this command takes"),  # not trainable: refused while parsing
        (["--tasks", "sa", "--bootstrap-resamples", "-1"], "--bootstrap-resamples"),
    ],
)
def test_main_errors_exit_2(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{missing}", str(tmp_path / "missing")) for a in argv]
    assert main([*argv, "--results-dir", str(tmp_path / "results")]) == 2
    error = capsys.readouterr().err
    assert "\nnlue baseline: error:" in f"\n{error}" and message in error
    assert not (tmp_path / "results" / DEFAULT_NAME / "sa.json").exists()  # nothing trained before the error


def test_results_hold_no_nan_primary(sample_run) -> None:
    _, results = sample_run
    assert all(r.primary_score is not None and math.isfinite(r.primary_score) for r in results.values())
