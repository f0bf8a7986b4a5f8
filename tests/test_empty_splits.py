"""Issue 22 items 1 and 4: splits that end with no rows, and an exam's demo split that repeats test items.

A split that ends empty is left out of the repo (``datasets`` cannot load a Parquet split without
rows), and the build's summary, report, log and card say why; the repo loads. A demo row with the
question and options of a test item is rejected and counted, and the card says what was checked.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import datasets
import pytest

from nlue.cli import main
from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.registry.tasks import TASKS

from .conftest import SENTENCES

ENGINES = ("rows", "columnar")


def _options(**kwargs) -> BuildOptions:
    return BuildOptions(show_progress=False, **kwargs)


def _rows(n: int, start: int = 0) -> list[tuple[str, int]]:
    return [(f"{SENTENCES[i % len(SENTENCES)]} {i}", i % 2) for i in range(start, start + n)]


def _loads_without(repo: Path, config: str, missing: str, present: set[str]) -> None:
    loaded = datasets.load_dataset(str(repo), config)
    assert set(loaded) == present and missing not in loaded
    assert not list((repo / config).glob(f"{missing}-*.parquet"))


def test_tiny_train_whose_carved_validation_is_empty(tmp_path: Path, write_csv, capsys) -> None:
    train = write_csv(tmp_path / "train.csv", ["text", "label"], [("राम्रो छ", 1), ("नराम्रो छ", 0)])
    test = write_csv(tmp_path / "test.csv", ["text", "label"], _rows(2, 50))
    out = tmp_path / "out"
    assert main(["build", "--task", "sa", "--train", str(train), "--test", str(test), "--out", str(out), "-q"]) == 0
    summary = capsys.readouterr().out
    assert "left out: sa/validation: carving 10% of train held out no row" in summary
    _loads_without(out / "nlue", "sa", "validation", {"train", "test"})
    report = json.loads((out / "nlue.report.json").read_text(encoding="utf-8"))["configs"]["sa"]["splits"]
    assert report["validation"]["files"] == [] and "no label has 2 or more" in report["validation"]["left_out"]
    card = (out / "nlue" / "README.md").read_text(encoding="utf-8")
    assert "**`validation` is left out of this config:** carving 10% of train" in card
    assert "| `sa` | Sentiment Analysis | single sentence | macro_f1 | 2 | left out (0) | 2 |" in card
    assert "sa/validation-" not in card  # no data_files entry for it
    # The row path builds the same repo.
    rows = build_repo(
        [TaskSources(TASKS["sa"], {"train": [train], "test": [test]})], tmp_path / "rows", _options(engine="rows")
    )
    assert (rows.repo_dir / "README.md").read_text(encoding="utf-8") == card


@pytest.mark.parametrize("engine", ENGINES)
def test_validation_whose_every_row_is_in_train(tmp_path: Path, write_csv, caplog, engine: str) -> None:
    rows = _rows(8)
    train = write_csv(tmp_path / "train.csv", ["text", "label"], rows)
    validation = write_csv(tmp_path / "validation.csv", ["text", "label"], rows[:3])
    test = write_csv(tmp_path / "test.csv", ["text", "label"], _rows(2, 50))
    sources = [TaskSources(TASKS["sa"], {"train": [train], "validation": [validation], "test": [test]})]
    with caplog.at_level(logging.WARNING, logger="nlue.data.config_builder"):
        result = build_repo(sources, tmp_path / "out", _options(engine=engine))
    why = result.configs["sa"].splits["validation"].left_out
    assert why == "none of its 3 rows is left (3 also in train)"
    assert any("sa/validation is left out" in r.getMessage() for r in caplog.records)
    _loads_without(result.repo_dir, "sa", "validation", {"train", "test"})
    split = json.loads(result.report_path.read_text(encoding="utf-8"))["configs"]["sa"]["splits"]["validation"]
    assert (split["read"], split["kept"], split["leaked_from_train"]) == (3, 0, 3)  # every row accounted for


def test_test_split_emptied_by_drop_leaked_test(tmp_path: Path, write_csv) -> None:
    rows = _rows(10)
    train = write_csv(tmp_path / "train.csv", ["text", "label"], rows)
    test = write_csv(tmp_path / "test.csv", ["text", "label"], rows[:2])
    sources = [TaskSources(TASKS["sa"], {"train": [train], "test": [test]})]
    result = build_repo(sources, tmp_path / "out", _options(drop_leaked_test=True))
    assert result.configs["sa"].splits["test"].left_out == "none of its 2 rows is left (2 also in train)"
    _loads_without(result.repo_dir, "sa", "test", {"train", "validation"})


# --- item 4: an exam's demo split and test ------------------------------------------------------

ITEM = {
    "id": "t1",
    "question": "नेपालको राजधानी कुन हो?",
    "options": {"A": "पोखरा", "B": "काठमाडौँ", "C": "विराटनगर", "D": "धनगढी"},
    "correct_key": "B",
    "subdomain": "social studies",
    "level": "Grade 8",
}


def _item(number: int, **changes) -> dict:
    return {**ITEM, "id": f"t{number}", "question": f"प्रश्न {number}: नेपालको राजधानी कुन हो?", **changes}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_demo_item_copied_from_test_with_another_id_is_rejected(tmp_path: Path) -> None:
    test = _jsonl(tmp_path / "test.jsonl", [_item(i) for i in range(1, 6)])
    copied = {**_item(3), "id": "demo-3"}  # only the id changed
    spaced = {**_item(4), "id": "demo-4", "question": "  " + _item(4)["question"] + " "}  # equal once normalised
    demo = _jsonl(tmp_path / "demo.jsonl", [_item(10), copied, _item(11), spaced])
    task = TASKS["mcq_ne"]
    result = build_repo([TaskSources(task, {"demo": [demo], "test": [test]})], tmp_path / "out", _options(name="mcq"))
    splits = result.configs["mcq_ne"].splits
    assert list(splits) == ["demo", "test"]  # the registry's order, though test was read first
    assert (splits["demo"].kept, splits["demo"].rejected, splits["demo"].found_in_test) == (2, 2, 2)
    assert splits["test"].kept == 5
    rejects = [json.loads(line) for line in result.rejects_path.read_text(encoding="utf-8").splitlines()]
    assert [(r["split"], r["row"], r["field"]) for r in rejects] == [("demo", 2, "question"), ("demo", 4, "question")]
    assert all("as a test item" in r["reason"] for r in rejects)
    demo_ids = datasets.load_dataset(str(result.repo_dir), "mcq_ne", split="demo")["id"]
    assert demo_ids == ["t10", "t11"]
    card = (result.repo_dir / "README.md").read_text(encoding="utf-8")
    assert "2 `demo` rows that were test items were rejected" in card
    report = json.loads(result.report_path.read_text(encoding="utf-8"))["configs"]["mcq_ne"]["splits"]["demo"]
    assert report["found_in_test"] == 2


def test_card_says_the_demo_was_checked_against_test(exam_build) -> None:
    card = (exam_build.repo_dir / "README.md").read_text(encoding="utf-8")
    assert "the builder compares their normalised question, A, B, C, D, and no `demo` row was a test item." in card
