"""Several results folders and sweep folders in `nlue report`, `nlue compare` and the Space; runs grouped by model.

Issue 29, items 5 and 6 and its "Build" bullet: `nlue report`, `compare` and `space` take several
folders (a sweep folder means its results/), a checkpoint's own copy of its results is never a run,
and only models are tested against each other: never two inputs, seeds or copies of one model, and
never runs that answered every item alike. The runs are results files written with per-item
predictions as the evaluators write them (no model is run: each test takes a second or two).
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from pathlib import Path

import pytest
from sklearn.metrics import f1_score

from nlue.cli import main
from nlue.predictions import attach, prediction_rows
from nlue.registry.tasks import TASKS
from nlue.results import RunResult, write_result

pytest.importorskip("matplotlib")
GOLDS = [0, 1] * 10
RESAMPLES = "200"


def _answers(correct: int) -> list[int]:
    """The first ``correct`` items right, the others wrong."""
    return [g if i < correct else 1 - g for i, g in enumerate(GOLDS)]


def _run(results: Path, run: str, task: str, model: str, answers: list[int], hyper: dict | None = None) -> Path:
    """A results file and its predictions, as an evaluator writes them."""
    items = [{"idx": i, "id": f"item-{i}", "text": f"वाक्य {i}", "idiom": "आँखा", "s2": f"वाक्य {i}"} for i in range(20)]
    accuracy = sum(a == g for a, g in zip(answers, GOLDS, strict=True)) / len(GOLDS)
    # The scores the predictions give (the Space and submit rescore them, and leave out a file that disagrees).
    metrics = {"macro_f1": float(f1_score(GOLDS, answers, average="macro")), "accuracy": accuracy}
    details = {}
    if task == "nediom":
        number, variant = hyper["input_variant"]
        hyper = {**hyper, "input_variant": variant}
        details = {"setting": "zero-shot", "variant": {"number": number, "name": variant}}
    result = RunResult(task=task, model=model, kind="zero-shot", metrics=metrics, dataset={"id": "test"},
                       hyperparameters=hyper or {}, details=details)  # fmt: skip
    attach(result, prediction_rows(TASKS[task], items, answers, GOLDS), results, run)
    return write_result(result, results, run)


def _sweep(root: Path, name: str, runs: dict[str, tuple[str, list[int]]]) -> Path:
    """A sweep's folder as `nlue sweep` leaves it: results/, checkpoints under runs/, markers under sweep/."""
    folder = root / name
    for run, (model, answers) in runs.items():
        _run(folder / "results", run, "sa", model, answers, {"mode": "loglik", "shots": 0, "prompt_language": "en"})
    (folder / "sweep" / "done").mkdir(parents=True)
    (folder / "sweep" / "done" / "0123abcd.json").write_text(json.dumps({"argv": ["llm"], "exit": 0}), "utf-8")
    return folder


def _checkpoint_copy(folder: Path, results: Path, run: str, name: str) -> None:
    """What `nlue train` leaves beside a checkpoint: its own nlue_results.json and predictions."""
    target = folder / "runs" / name
    target.mkdir(parents=True)
    shutil.copy(results / run / "sa.json", target / "nlue_results.json")
    shutil.copy(results / run / "sa.predictions.jsonl", target / "sa.predictions.jsonl")


def _csv(report: Path, name: str) -> list[dict[str, str]]:
    with (report / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _ours(report: Path) -> list[str]:
    return [r["Model"] for r in _csv(report, "nlue_table2_single_sentence") if r["numbers"] == "ours"]


@pytest.fixture
def sweeps(tmp_path: Path) -> tuple[Path, Path]:
    """Two sweeps: model-x and model-y in the first, model-x again and model-z in the second."""
    one = _sweep(tmp_path, "one", {"x__en-0shot": ("org/model-x", _answers(12)),
                                   "y__en-0shot": ("org/model-y", _answers(18))})  # fmt: skip
    two = _sweep(tmp_path, "two", {"x__en-0shot": ("org/model-x", _answers(12)),
                                   "z__en-0shot": ("org/model-z", _answers(6))})  # fmt: skip
    for folder, run in ((one, "x__en-0shot"), (two, "z__en-0shot")):
        _checkpoint_copy(folder, folder / "results", run, f"{run}-checkpoint")
    return one, two


def test_a_sweep_folder_is_its_results_and_a_checkpoints_copy_is_no_run(tmp_path: Path, sweeps) -> None:
    """Issue 29, item 5: `nlue report <sweep or parent folder>` counts no checkpoint's nlue_results.json as a run."""
    one, _ = sweeps
    out = tmp_path / "site"
    assert main(["report", str(one), "--out", str(out), "--resamples", RESAMPLES, "-q"]) == 0
    assert sorted(_ours(out)) == ["x__en-0shot", "y__en-0shot"]  # results/, as the sweep wrote it
    # A folder above results/ and runs/ that is no sweep: the copies beside the checkpoints are still no runs.
    parent = tmp_path / "parent"
    shutil.copytree(one, parent, ignore=shutil.ignore_patterns("sweep"))
    _checkpoint_copy(parent, parent / "results", "y__en-0shot", "y-checkpoint")
    assert main(["report", str(parent), "--out", str(tmp_path / "site2"), "--resamples", RESAMPLES, "-q"]) == 0
    assert sorted(_ours(tmp_path / "site2")) == ["results/x__en-0shot", "results/y__en-0shot"]
    for site in (out, tmp_path / "site2"):
        text = (site / "report.md").read_text(encoding="utf-8")
        shown = text.split("## Results files left out")[0]  # the copies may be named there, as files left out
        assert "nlue_results" not in shown and "checkpoint" not in shown
        assert not list(site.glob("significance_nlue_results*"))
    assert "nlue_results" not in (out / "report.md").read_text(encoding="utf-8")  # a sweep's runs/ is not read


def test_two_sweeps_are_reported_compared_and_shown_together(tmp_path: Path, sweeps, capsys) -> None:
    """Issue 29, item 5 and Build: two sweep folders in one report, one `nlue compare` and one Space."""
    one, two = sweeps
    out = tmp_path / "site"
    assert main(["report", str(one), str(two), "--out", str(out), "--resamples", RESAMPLES, "-q"]) == 0
    assert sorted(_ours(out)) == ["one/x__en-0shot", "one/y__en-0shot", "two/x__en-0shot", "two/z__en-0shot"]
    pairs = {(p["run_a"], p["run_b"]) for p in _csv(out, "significance_pairs")}
    # model-x is in both sweeps with the same answers: one row, tested against y and z, never against itself.
    assert pairs == {("one/x__en-0shot", "one/y__en-0shot"), ("one/x__en-0shot", "two/z__en-0shot"),
                     ("one/y__en-0shot", "two/z__en-0shot")}  # fmt: skip
    page = (out / "index.html").read_text(encoding="utf-8").replace("<wbr>", "")  # names may wrap after / and __
    assert "one/x__en-0shot (and 1 alike)" in page and "two/x__en-0shot gave the same answer on every item" in page

    capsys.readouterr()
    assert main(["compare", str(one), str(two), "--resamples", RESAMPLES]) == 0
    printed = capsys.readouterr().out
    assert printed.count("A = ") == 3 and "A = one/x__en-0shot\nB = two/z__en-0shot" in printed
    assert "B = two/x__en-0shot" not in printed and "the same answer on every item" in printed
    assert main(["compare", str(one), str(one / "results" / "x__en-0shot")]) == 2  # runs and folders: say which
    assert "not both" in capsys.readouterr().err

    from nlue.space.serve import add_space_arguments
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    parser = argparse.ArgumentParser()
    add_space_arguments(parser)
    args = parser.parse_args(["--results", str(one), str(two)])
    settings = SpaceSettings.from_env(models=tmp_path / "no-models", results_dir=args.results)
    assert [f.path for f in settings.results_folders] == [one / "results", two / "results"]
    service = SpaceService(settings)
    frame, status = service.leaderboard_table()
    assert {"one/x__en-0shot", "one/y__en-0shot", "two/x__en-0shot", "two/z__en-0shot"} <= set(frame["Model"])
    assert "4 model(s)" in status and str(one) in status and str(two) in status
    from nlue.boards.sections import exam_board_of  # the Space's tabs of the exams and idioms read the same folders

    assert [r["model"] for r in exam_board_of(settings.results_folders).rows][:1] == ["DeepSeek-V4-Flash"]
    assert len(SpaceSettings.from_env(results_dir=f"{one}:{two}", models=tmp_path).results_folders) == 2


def test_input_variants_and_copies_of_one_model_are_never_tested_as_two_models(tmp_path: Path) -> None:
    """Issue 29, item 6: neDIOM's inputs of one model share item fingerprints; only models are tested."""
    results = tmp_path / "results"
    variants = [(1, "S2/with-idiom"), (2, "S2/without-idiom"), (7, "S1+S2+S3/with-idiom")]
    y_answers = {1: _answers(17), 2: _answers(10), 7: _answers(4)}  # on input 2, y answers as x does
    for number, name in variants:
        hyper = {"setting": "zero-shot", "mode": "loglik", "prompt_language": "en", "input_variant": (number, name)}
        _run(results, f"x__zero-shot-en__v{number}", "nediom", "tiny/x", _answers(10), hyper)
        _run(results, f"y__zero-shot-en__v{number}", "nediom", "tiny/y", y_answers[number], hyper)
    out = tmp_path / "site"
    assert main(["report", str(results), "--out", str(out), "--resamples", RESAMPLES, "-q"]) == 0
    pairs = [(p["run_a"], p["run_b"]) for p in _csv(out, "significance_pairs")]
    assert pairs == [("x__zero-shot-en__v7", "y__zero-shot-en__v7"), ("x__zero-shot-en__v1", "y__zero-shot-en__v1")]
    tables = sorted(p.name for p in out.glob("significance_*.csv"))
    assert tables == ["significance_nediom_pairs.csv", "significance_not_tested.csv", "significance_pairs.csv"]
    for name in tables:  # no difference of nothing printed as a test, and no two inputs of x against each other
        text = (out / name).read_text(encoding="utf-8")
        assert "+0.000 (p=1.000)" not in text and not ("x__zero-shot-en__v1" in text and "x__zero-shot-en__v2" in text)
    (alike,) = _csv(out, "significance_not_tested")
    assert alike["runs"] == "x__zero-shot-en__v2, y__zero-shot-en__v2" and "same answer" in alike["why"]


def test_runs_are_keyed_by_their_identity_or_what_older_files_hold() -> None:
    """Issue 29, Build: grouping reads `identity` where a file has one and the files' fields where not."""
    from nlue.evals.run_groups import data_key, model_key, run_key, setting_key

    identity = {"model": "hf:org/m/", "model_fingerprint": "0123456789abcdef", "endpoint": "http://h:8000/v1",
                "mode": "generate", "shots": 5, "prompt_language": "ne", "limit": None, "seed": 3,
                "dataset_fingerprint": "feedfacecafe0000"}  # fmt: skip
    new = {"task": "sa", "model": "org/m", "identity": identity}
    old = {"task": "sa", "model": "org/m", "seed": 42, "dataset": {"fingerprint": "feedfacecafe0000"},
           "hyperparameters": {"mode": "generate", "shots": 5, "prompt_language": "ne",
                               "model": {"base_url": "http://h:8000/v1"}}}  # fmt: skip
    assert model_key(new) == "org/m · fingerprint 0123456789ab · at http://h:8000/v1"
    assert model_key(old) == "org/m · at http://h:8000/v1"
    assert setting_key(new) == setting_key(old) == "generation · 5-shot · ne prompt"
    assert data_key(new) == data_key(old) == "data feedfacecafe"
    # The seed is no part of the setting: two seeds of one model are one model in one setting.
    assert run_key({**old, "seed": 1}) == run_key(old)
    assert setting_key({"task": "sa", "kind": "fine-tune", "preset": "I"}) == ""
    assert data_key({"dataset": {"id": "me/nlue", "config": "sa", "split": "test", "limit": 8}}) == (
        "me/nlue/sa/test (first 8)"
    )
