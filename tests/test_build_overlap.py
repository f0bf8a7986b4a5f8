"""The test set stays the release's: overlaps with train/validation are counted, not removed."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

from nlue.cli import main
from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.registry.tasks import TASKS

from .conftest import SENTENCES


def _options(**kwargs) -> BuildOptions:
    return BuildOptions(show_progress=False, **kwargs)


def _sa_rows(n: int, start: int = 0) -> list[tuple[str, int]]:
    return [(f"{SENTENCES[i % len(SENTENCES)]} {i}", i % 2) for i in range(start, start + n)]


def _read(repo: Path, config: str, split: str) -> list[dict]:
    files = sorted((repo / config).glob(f"{split}-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def _report(result) -> dict:
    return json.loads(result.report_path.read_text(encoding="utf-8"))


def _leaky_sa(tmp_path: Path, write_csv) -> tuple[dict, list[tuple[str, int]]]:
    """Train, validation and a test file holding 6 own rows, 2 train rows and 1 validation row."""
    train_rows = _sa_rows(20)
    train = write_csv(tmp_path / "train.csv", ["text", "label"], train_rows)
    val = write_csv(tmp_path / "val.csv", ["text", "label"], _sa_rows(6, 100))
    test_rows = [*_sa_rows(6, 200), train_rows[3], train_rows[4], _sa_rows(1, 100)[0]]
    test = write_csv(tmp_path / "test.csv", ["text", "label"], test_rows)
    return {"train": [train], "validation": [val], "test": [test]}, test_rows


def test_test_rows_seen_in_train_are_kept_and_counted(tmp_path: Path, write_csv) -> None:
    files, test_rows = _leaky_sa(tmp_path, write_csv)
    result = build_repo([TaskSources(TASKS["sa"], files)], tmp_path / "out", _options())
    test = result.configs["sa"].splits["test"]
    assert test.kept == 9 and test.read == 9
    assert (test.leaked_from_train, test.leaked_from_validation) == (0, 0)
    assert (test.overlap.with_train, test.overlap.with_validation) == (2, 1)
    # Kept in source order, as released.
    assert [r["text"] for r in _read(result.repo_dir, "sa", "test")] == [t for t, _ in test_rows]
    split = _report(result)["configs"]["sa"]["splits"]["test"]
    assert (split["overlap_with_train"], split["overlap_with_validation"]) == (2, 1)
    assert _report(result)["drop_leaked_test"] is False


def test_drop_leaked_test_removes_them(tmp_path: Path, write_csv, capsys) -> None:
    files, test_rows = _leaky_sa(tmp_path, write_csv)
    args = ["build", "--task", "sa", "--train", str(files["train"][0]), "--validation", str(files["validation"][0])]
    args += ["--test", str(files["test"][0]), "--out", str(tmp_path / "out"), "--quiet", "--drop-leaked-test"]
    assert main(args) == 0
    report = json.loads((tmp_path / "out" / "nlue.report.json").read_text(encoding="utf-8"))
    split = report["configs"]["sa"]["splits"]["test"]
    assert (split["kept"], split["leaked_from_train"], split["leaked_from_validation"]) == (6, 2, 1)
    assert (split["overlap_with_train"], split["overlap_with_validation"]) == (0, 0)
    assert report["drop_leaked_test"] is True
    kept = {r["text"] for r in _read(tmp_path / "out" / "nlue", "sa", "test")}
    assert kept == {t for t, _ in test_rows[:6]}
    card = (tmp_path / "out" / "nlue" / "README.md").read_text(encoding="utf-8")
    assert "`--drop-leaked-test` removed 3 test items" in card


def test_repeats_within_test_are_kept_and_counted(tmp_path: Path, write_csv) -> None:
    rows = _sa_rows(6, 200)
    same, other_label = rows[0], (rows[1][0], 1 - rows[1][1])
    test = write_csv(tmp_path / "test.csv", ["text", "label"], [*rows, same, other_label])
    train = write_csv(tmp_path / "train.csv", ["text", "label"], _sa_rows(12))
    result = build_repo([TaskSources(TASKS["sa"], {"train": [train], "test": [test]})], tmp_path / "out", _options())
    split = result.configs["sa"].splits["test"]
    assert split.kept == 8 and split.rejected == 0
    assert (split.kept_duplicates, split.kept_conflicting_duplicates) == (1, 1)
    assert (split.duplicates, split.conflicting_duplicates) == (0, 0)
    assert result.rejects == 0 and result.rejects_path.read_text(encoding="utf-8") == ""
    got = [(r["text"], r["label"]) for r in _read(result.repo_dir, "sa", "test")]
    assert got == [*rows, same, other_label]
    ds = datasets.load_dataset(str(result.repo_dir), "sa", split="test")
    assert ds.num_rows == 8 and ds["idx"] == list(range(8))


def test_near_duplicates_are_counted_not_removed(tmp_path: Path, write_csv) -> None:
    train = write_csv(
        tmp_path / "train.csv",
        ["text", "label"],
        [("मैले १२ वटा आँप किनें।", 1), ("Good movie, really!", 1), *_sa_rows(10)],
    )
    test_rows = [
        ("मैले 12 वटा आँप किनें", 1),  # other digits, no danda
        ("good movie really", 0),  # case and punctuation
        ("मैले १२ वटा आँप किनें।", 1),  # exact: an overlap, not a near-duplicate
        *_sa_rows(4, 300),
    ]
    test = write_csv(tmp_path / "test.csv", ["text", "label"], test_rows)
    result = build_repo([TaskSources(TASKS["sa"], {"train": [train], "test": [test]})], tmp_path / "out", _options())
    split = result.configs["sa"].splits["test"]
    assert split.kept == len(test_rows)
    assert split.overlap.with_train == 1 and split.overlap.near_duplicates_of_train == 2
    assert _report(result)["configs"]["sa"]["splits"]["test"]["near_duplicates_of_train"] == 2


def test_single_field_overlap_for_mnli(tmp_path: Path, write_jsonl, write_csv) -> None:
    premises = [f"{s} {i}" for i, s in enumerate(SENTENCES[:6])]
    train = [{"premise": p, "hypothesis": f"कथन {i}", "label": i % 3} for i, p in enumerate(premises)]
    test = [
        {"premise": premises[0], "hypothesis": "नयाँ कथन क", "label": 0},  # premise shared
        {"premise": premises[1], "hypothesis": "नयाँ कथन ख", "label": 1},  # premise shared
        {"premise": "अर्कै वाक्य", "hypothesis": "कथन 2", "label": 2},  # hypothesis shared
        {"premise": premises[3], "hypothesis": "कथन 3", "label": 0},  # the whole pair: exact overlap
        {"premise": "फेरि अर्कै वाक्य", "hypothesis": "अर्कै कथन", "label": 1},
    ]
    val = [{"premise": premises[4], "hypothesis": "अर्को कथन", "label": 2}]
    files = {
        "train": [write_jsonl(tmp_path / "train.jsonl", train)],
        "validation": [write_jsonl(tmp_path / "validation.jsonl", val)],
        "test": [write_jsonl(tmp_path / "test.jsonl", test)],
    }
    result = build_repo([TaskSources(TASKS["mnli"], files)], tmp_path / "out", _options())
    splits = result.configs["mnli"].splits
    assert splits["test"].kept == 5 and splits["test"].overlap.with_train == 1
    assert dict(splits["test"].overlap.fields_shared_with_train) == {"premise": 3, "hypothesis": 2}
    assert dict(splits["validation"].overlap.fields_shared_with_train) == {"premise": 1, "hypothesis": 0}
    report = _report(result)["configs"]["mnli"]["splits"]
    assert report["test"]["field_overlap_with_train"] == {"premise": 3, "hypothesis": 2}
    assert "field_overlap_with_train" not in report["train"]
    # Single-input tasks have no per-field counts.
    sa_files, _ = _leaky_sa(tmp_path, write_csv)
    sa = build_repo([TaskSources(TASKS["sa"], sa_files)], tmp_path / "sa", _options())
    assert "field_overlap_with_train" not in _report(sa)["configs"]["sa"]["splits"]["test"]


def test_overlap_counts_appear_in_the_card(tmp_path: Path, write_jsonl) -> None:
    train = [{"premise": f"{s} {i}", "hypothesis": f"कथन {i}", "label": i % 3} for i, s in enumerate(SENTENCES)]
    test = [
        {"premise": train[0]["premise"], "hypothesis": "नयाँ कथन", "label": 0},
        dict(train[1]),
        {"premise": "अर्कै वाक्य।", "hypothesis": "अर्को कथन", "label": 2},
        {"premise": "अर्कै वाक्य", "hypothesis": "अर्को कथन", "label": 2},
    ]
    files = {
        "train": [write_jsonl(tmp_path / "train.jsonl", train)],
        "validation": [write_jsonl(tmp_path / "v.jsonl", [{"premise": "भिन्न", "hypothesis": "कथन 5", "label": 1}])],
        "test": [write_jsonl(tmp_path / "t.jsonl", test)],
    }
    result = build_repo([TaskSources(TASKS["mnli"], files)], tmp_path / "out", _options())
    card = (result.repo_dir / "README.md").read_text(encoding="utf-8")
    section = card.split("#### Overlap between splits", 1)[1].split("\n### ", 1)[0]
    assert "The test set is kept as released" in section
    lines = [line for line in section.splitlines() if line.startswith("| test |")]
    # exact with train, with validation, near-duplicates of train, shared premise, shared hypothesis, repeats
    assert lines == ["| test | 1 | 0 | 0 | 2 | 1 | 0 |"], section
    assert "| validation | 0 | - | 0 | 0 | 1 | - |" in section
    assert "| split | same inputs as train |" in section and "shared `premise`" in section


def test_carved_validation_counts_test_overlap_by_built_split(tmp_path: Path, write_csv) -> None:
    train_rows = _sa_rows(40)
    train = write_csv(tmp_path / "train.csv", ["text", "label"], train_rows)
    test = write_csv(tmp_path / "test.csv", ["text", "label"], [*train_rows, *_sa_rows(3, 500)])
    result = build_repo([TaskSources(TASKS["sa"], {"train": [train], "test": [test]})], tmp_path / "out", _options())
    splits = result.configs["sa"].splits
    assert splits["validation"].carved_from_train and splits["validation"].kept == 4
    # Every train row reappears in test: 36 now in the built train split, 4 in the carved validation.
    assert (splits["test"].overlap.with_train, splits["test"].overlap.with_validation) == (36, 4)
    assert splits["test"].kept == 43
    assert splits["validation"].overlap.near_duplicates_of_train == 0


@pytest.mark.parametrize("drop", [False, True])
def test_report_accounts_for_every_row(tmp_path: Path, write_csv, drop: bool) -> None:
    files, _ = _leaky_sa(tmp_path, write_csv)
    result = build_repo([TaskSources(TASKS["sa"], files)], tmp_path / "out", _options(drop_leaked_test=drop))
    for split in _report(result)["configs"]["sa"]["splits"].values():
        removed = split["rejected"] + split["duplicates"] + split["leaked_from_train"]
        removed += split["leaked_from_validation"] + sum(split["dropped_by_label_map"].values())
        assert split["read"] == split["kept"] + removed


def test_loose_text_folds_what_near_duplicates_ignore() -> None:
    from nlue.text.normalize import loose_text

    assert loose_text("मैले १२ वटा आँप किनें।") == loose_text("मैले 12 वटा आँप किनें") == "मैले12वटाआँपकिनें"
    assert loose_text("Good movie, “really”!") == "goodmoviereally"
    assert loose_text("पर्\u200dयो") == loose_text("पर्यो")
    assert loose_text("राम्रो ॥") == "राम्रो"
    assert loose_text("क ख") != loose_text("क ग")
