"""Per-item predictions from every evaluator, in one schema, beside the results file that points to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.predictions import prediction_rows, read_predictions, split_fingerprint
from nlue.registry.tasks import TASKS


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from nlue.lm.tiny import save_tiny_causal_lm, save_tiny_classifier, save_tiny_encoder

    root = tmp_path_factory.mktemp("models")
    return {
        "classifier": save_tiny_classifier(root / "clf", task="sa"),
        "encoder": save_tiny_encoder(root / "enc"),
        "causal": save_tiny_causal_lm(root / "gpt2", "gpt2"),
    }


def _commands(models: dict[str, Path], data: dict[str, str], tmp: Path) -> dict[str, list[str]]:
    return {
        "evaluate": ["evaluate", "--model", str(models["classifier"]), "--task", "sa", "--dataset", data["nlue"]],
        "train": ["train", "--model", str(models["encoder"]), "--task", "sa", "--dataset", data["nlue"],
                  "--output_dir", str(tmp / "run"), "--max_steps", "1", "--disable_tqdm", "true"],
        "baseline": ["baseline", "--tasks", "sa", "--dataset", data["nlue"]],
        "gmet": ["gmet", "--model", "baseline:bigram", "--limit", "20", "--out", str(tmp / "gmet")],
        "llm nlue": ["llm", "nlue", "--model", str(models["causal"]), "--tasks", "sa", "--dataset", data["nlue"]],
        "llm nlue generate": ["llm", "nlue", "--model", str(models["causal"]), "--tasks", "sa", "--mode", "generate",
                              "--max-new-tokens", "3", "--dataset", data["nlue"]],
        "llm mcq": ["llm", "mcq", "--model", str(models["causal"]), "--task", "mcq_ne", "--dataset", data["mcq"],
                    "--mode", "loglik", "--limit", "8", "--no-chart"],
        "idioms": ["idioms", "eval", "--model", str(models["causal"]), "--setting", "zero-shot", "--context", "S2",
                   "--idiom", "with", "--dataset", data["nediom"]],
    }  # fmt: skip


@pytest.mark.parametrize(
    "command", ["evaluate", "train", "baseline", "gmet", "llm nlue", "llm nlue generate", "llm mcq", "idioms"]
)
def test_every_evaluator_writes_per_item_predictions_with_the_gold_last(
    command, models, sample_build, exam_build, nediom_build, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = {"nlue": str(sample_build.repo_dir), "mcq": str(exam_build.repo_dir), "nediom": str(nediom_build.repo_dir)}
    results = tmp_path / "results"
    argv = _commands(models, data, tmp_path)[command]
    spelling = "--results_dir" if command == "train" else "--results-dir"
    assert main([*argv, spelling, str(results), "--bootstrap_resamples" if command == "train" else "--bootstrap",
                 "0", "-q"]) == 0  # fmt: skip
    written = sorted(results.glob("*/*.json"))
    assert written
    for path in written:
        saved = json.loads(path.read_text(encoding="utf-8"))
        rows_path = path.parent / saved["predictions"]
        rows = read_predictions(rows_path)
        assert len(rows) == saved["dataset"].get("items", len(rows)) and rows
        assert all(list(row)[:3] == ["id", "input_sha256", "prediction"] and list(row)[-1] == "gold" for row in rows)
        assert saved["dataset"]["fingerprint"] == split_fingerprint(rows)
        assert len({row["id"] for row in rows}) == len(rows)  # ids tell items apart


def test_the_fingerprint_changes_with_an_item_or_a_gold_label() -> None:
    task = TASKS["sa"]
    items = [{"idx": 0, "text": "राम्रो", "label": 1}, {"idx": 1, "text": "नराम्रो", "label": 0}]
    rows = prediction_rows(task, items, [1, 1], [1, 0])
    assert rows[0]["input_sha256"] != rows[1]["input_sha256"]
    edited = prediction_rows(task, [{**items[0], "text": "राम्रै"}, items[1]], [1, 1], [1, 0])
    relabelled = prediction_rows(task, items, [1, 1], [1, 1])
    predicted = prediction_rows(task, items, [0, 0], [1, 0])  # another model: the same items and answers
    fingerprints = {split_fingerprint(r) for r in (rows, edited, relabelled)}
    assert len(fingerprints) == 3 and split_fingerprint(predicted) == split_fingerprint(rows)
