"""The builder end to end: outputs, dedup, leakage, splits, determinism, failures."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

from nlue.cli import main
from nlue.data.build import build_repo
from nlue.data.carve import stratified_holdout
from nlue.data.discover import discover_sources
from nlue.data.mapping import FieldMapping
from nlue.data.report import BuildOptions, TaskSources
from nlue.errors import NlueError, SourceError
from nlue.registry.tasks import TASK_NAMES, TASKS

from .conftest import SENTENCES


def _options(**kwargs) -> BuildOptions:
    return BuildOptions(show_progress=False, **kwargs)


def _sa_rows(n: int, start: int = 0) -> list[tuple[str, int]]:
    return [(f"{SENTENCES[i % len(SENTENCES)]} {i}", i % 2) for i in range(start, start + n)]


def _read(repo: Path, config: str, split: str) -> list[dict]:
    files = sorted((repo / config).glob(f"{split}-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


# --- the embedded sample ----------------------------------------------------------------


def test_all_configs_load_offline_with_registry_labels(sample_build) -> None:
    for name, task in ((n, TASKS[n]) for n in TASK_NAMES):
        ds = datasets.load_dataset(str(sample_build.repo_dir), name)
        assert tuple(ds) == task.splits
        features = ds[task.splits[0]].features
        if task.label_names:
            assert isinstance(features[task.label_field], datasets.ClassLabel)
            assert tuple(features[task.label_field].names) == task.label_names
        if name == "stsb":
            assert features["label"].dtype == "float64"
        if name == "gmet":
            assert ds["test"][0]["sentence"].count("[MASK]") == 1


def test_load_by_bare_folder_name(sample_build, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(sample_build.repo_dir.parent)
    ds = datasets.load_dataset("nlue", "qnli")
    assert ds["train"].features["label"].names == ["entailment", "not_entailment"]


def test_shards_are_named_like_the_hub(sample_build) -> None:
    names = sorted(p.name for p in (sample_build.repo_dir / "mnli").iterdir())
    assert names == [
        "test-00000-of-00001.parquet",
        "train-00000-of-00001.parquet",
        "validation-00000-of-00001.parquet",
    ]


def test_report_accounts_for_every_row(sample_build) -> None:
    report = json.loads(sample_build.report_path.read_text(encoding="utf-8"))
    assert report["is_sample"] is True and report["rejects"] == 0
    for cfg in report["configs"].values():
        for split in cfg["splits"].values():
            removed = split["rejected"] + split["duplicates"] + split["leaked_from_train"]
            removed += split["leaked_from_validation"] + sum(split["dropped_by_label_map"].values())
            assert split["read"] == split["kept"] + removed


def test_rebuild_is_byte_identical(sample_build, tmp_path: Path) -> None:
    from nlue.data.discover import task_sources_from_folder
    from nlue.data.sample import sample_data_dir

    again = build_repo(
        task_sources_from_folder(sample_data_dir()), tmp_path, _options(is_sample=True, license="apache-2.0")
    )
    first = sorted(p.relative_to(sample_build.repo_dir) for p in sample_build.repo_dir.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again.repo_dir) for p in again.repo_dir.rglob("*") if p.is_file())
    assert first == second
    for rel in first:
        assert (sample_build.repo_dir / rel).read_bytes() == (again.repo_dir / rel).read_bytes(), rel


# --- dedup, leakage, splits --------------------------------------------------------------


@pytest.mark.parametrize("drop_leaked_test", [False, True])
def test_duplicates_and_leakage_are_removed_and_counted(tmp_path: Path, write_csv, drop_leaked_test: bool) -> None:
    train_rows = _sa_rows(20)
    train = write_csv(
        tmp_path / "train.csv", ["text", "label"], [*train_rows, train_rows[0], (" " + train_rows[1][0], 0)]
    )
    val = write_csv(tmp_path / "val.csv", ["text", "label"], [*_sa_rows(6, 100), train_rows[2]])
    test_rows = _sa_rows(6, 200)
    leaked = [train_rows[3], _sa_rows(1, 100)[0]]
    test = write_csv(tmp_path / "test.csv", ["text", "label"], [*test_rows, *leaked])
    sources = [TaskSources(TASKS["sa"], {"train": [train], "validation": [val], "test": [test]})]
    result = build_repo(sources, tmp_path / "out", _options(drop_leaked_test=drop_leaked_test))
    splits = result.configs["sa"].splits
    # train_rows[1] is given labels 1 and 0, once each: a tie, so the majority rule keeps neither row.
    assert (splits["train"].kept, splits["train"].duplicates, splits["train"].conflicting_duplicates) == (19, 1, 2)
    assert (splits["validation"].kept, splits["validation"].leaked_from_train) == (6, 1)
    test_split = splits["test"]
    if drop_leaked_test:  # the old rule, now opt-in: test items seen in train/validation are removed
        assert test_split.kept == 6
        assert (test_split.leaked_from_train, test_split.leaked_from_validation) == (1, 1)
    else:  # the test set as released, the overlaps counted
        assert test_split.kept == 8
        assert (test_split.leaked_from_train, test_split.leaked_from_validation) == (0, 0)
        assert (test_split.overlap.with_train, test_split.overlap.with_validation) == (1, 1)
    # Both rows of the tied text are listed as rejects, with the reason.
    rejects = [json.loads(line) for line in result.rejects_path.read_text(encoding="utf-8").splitlines()]
    assert [r["row"] for r in rejects] == [2, 22]
    assert all("no label has a majority (negative 1 row, positive 1 row)" in r["reason"] for r in rejects)
    test_texts = {r["text"] for r in _read(result.repo_dir, "sa", "test")}
    assert test_texts == {t for t, _ in test_rows} | (set() if drop_leaked_test else {t for t, _ in leaked})


def test_validation_is_carved_stratified_and_seeded(tmp_path: Path, write_csv) -> None:
    rows = [(f"{SENTENCES[i % 12]} {i}", int(i % 10 < 3)) for i in range(200)]  # 30% label 1
    train = write_csv(tmp_path / "train.csv", ["text", "label"], rows)
    sources = [TaskSources(TASKS["cola"], {"train": [train]})]
    first = build_repo(sources, tmp_path / "a", _options(validation_fraction=0.2, seed=7))
    val = _read(first.repo_dir, "cola", "validation")
    train_rows = _read(first.repo_dir, "cola", "train")
    assert len(val) == 40 and len(train_rows) == 160
    assert sum(r["label"] for r in val) == 18 - 6  # 20% of the 60 positives
    assert {r["text"] for r in val}.isdisjoint({r["text"] for r in train_rows})
    assert first.configs["cola"].splits["validation"].carved_from_train
    assert [r["idx"] for r in val] == list(range(40))
    again = build_repo(sources, tmp_path / "b", _options(validation_fraction=0.2, seed=7))
    assert _read(again.repo_dir, "cola", "validation") == val
    other = build_repo(sources, tmp_path / "c", _options(validation_fraction=0.2, seed=8))
    assert _read(other.repo_dir, "cola", "validation") != val


def test_stratified_holdout_keeps_rare_classes() -> None:
    import numpy as np

    strata = np.array([0] * 50 + [1] * 3)
    mask = stratified_holdout(strata, 0.1, seed=1)
    assert mask[:50].sum() == 5 and mask[50:].sum() == 1


def test_large_split_is_sharded(tmp_path: Path, write_csv) -> None:
    train = write_csv(tmp_path / "train.csv", ["text", "label"], _sa_rows(25_000))
    test = write_csv(tmp_path / "test.csv", ["text", "label"], _sa_rows(10, 50_000))
    sources = [TaskSources(TASKS["sa"], {"train": [train], "validation": [test]})]
    result = build_repo(sources, tmp_path / "out", _options(max_shard_bytes=1_000_000))
    shards = sorted(p.name for p in (result.repo_dir / "sa").glob("train-*"))
    assert len(shards) >= 2 and all(n.endswith(f"-of-{len(shards):05d}.parquet") for n in shards)
    ds = datasets.load_dataset(str(result.repo_dir), "sa", split="train")
    assert ds.num_rows == 25_000 and ds["idx"][-1] == 24_999


def test_all_source_formats(tmp_path: Path, write_csv, write_jsonl) -> None:
    rows = _sa_rows(8)
    records = [{"premise": t, "hypothesis": t + " रे", "label": i % 3} for i, (t, _) in enumerate(rows)]
    write_csv(tmp_path / "train.tsv", ["premise", "hypothesis", "label"], [r.values() for r in records[:4]], "\t")
    (tmp_path / "train_more.json").write_text(json.dumps(records[4:6], ensure_ascii=False), encoding="utf-8")
    write_jsonl(tmp_path / "validation.jsonl", records[6:7])
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(records[7:]), tmp_path / "test.parquet")
    files = {"train": [tmp_path / "train.tsv", tmp_path / "train_more.json"]}
    files |= {"validation": [tmp_path / "validation.jsonl"], "test": [tmp_path / "test.parquet"]}
    result = build_repo([TaskSources(TASKS["mnli"], files)], tmp_path / "out", _options())
    sizes = {s: r.kept for s, r in result.configs["mnli"].splits.items()}
    assert sizes == {"train": 6, "validation": 1, "test": 1}


def test_discover_sources_layout(tmp_path: Path, write_jsonl) -> None:
    (tmp_path / "qnli").mkdir()
    for name in ("train.jsonl", "dev.jsonl", "test_a.jsonl", "test_b.jsonl"):
        write_jsonl(tmp_path / "qnli" / name, [])
    found = discover_sources(tmp_path)
    assert {k: [p.name for p in v] for k, v in found["qnli"].items()} == {
        "train": ["train.jsonl"],
        "validation": ["dev.jsonl"],
        "test": ["test_a.jsonl", "test_b.jsonl"],
    }
    (tmp_path / "squad").mkdir()
    with pytest.raises(NlueError, match="squad: not an NLUE config"):
        discover_sources(tmp_path)


# --- other schemas through the command line ------------------------------------------------


def test_three_class_csv_through_maps(tmp_path: Path, write_csv, capsys) -> None:
    rows = [(t, (-1, 0, 1)[i % 3]) for i, (t, _) in enumerate(_sa_rows(30))]
    src = write_csv(tmp_path / "reviews.csv", ["review", "sentiment"], rows)
    code = main(
        [
            "build", "--task", "sa", "--train", str(src), "--out", str(tmp_path / "out"), "--quiet",
            "--column-map", "text=review,label=sentiment", "--label-map=-1=negative,1=positive,0=drop",
        ]
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "out" / "nlue.report.json").read_text(encoding="utf-8"))
    splits = report["configs"]["sa"]["splits"]
    assert splits["train"]["dropped_by_label_map"] == {"0": 10}
    assert splits["train"]["kept"] + splits["validation"]["kept"] == 20
    assert "label-map drops" in capsys.readouterr().out
    ds = datasets.load_dataset(str(tmp_path / "out" / "nlue"), "sa")
    assert sorted(set(ds["train"]["label"]) | set(ds["validation"]["label"])) == [0, 1]


# --- failures: clear message, non-zero exit, nothing left behind ---------------------------


def _fails(tmp_path: Path, capsys, args: list[str], *expected: str) -> None:
    out = tmp_path / "out"
    code = main(["build", *args, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code != 0
    for text in expected:
        assert text in err, err
    assert not (out / "nlue").exists()
    assert not list(out.glob("*")) if out.exists() else True


def test_missing_column_fails_cleanly(tmp_path: Path, write_csv, capsys) -> None:
    src = write_csv(tmp_path / "train.csv", ["question", "label"], [("के हो?", 0)])
    _fails(
        tmp_path,
        capsys,
        ["--task", "qnli", "--train", str(src)],
        "train.csv, row 1, field 'sentence'",
        "missing column",
    )


def test_unknown_labels_fail_cleanly(tmp_path: Path, write_csv, capsys) -> None:
    src = write_csv(tmp_path / "train.csv", ["text", "label"], [("राम्रो", "pos"), ("नराम्रो", "neg")])
    _fails(
        tmp_path,
        capsys,
        ["--task", "sa", "--train", str(src)],
        "train.csv, row 1, field 'label'",
        "no valid rows",
        "unknown label",
    )


def test_bad_utf8_fails_cleanly(tmp_path: Path, capsys) -> None:
    src = tmp_path / "train.csv"
    src.write_bytes("text,label\nराम्रो,1\n".encode() + b"caf\xe9 bad,0\n")
    _fails(tmp_path, capsys, ["--task", "sa", "--train", str(src)], "train.csv, row 2, field 'text'", "not valid UTF-8")


def test_bad_utf8_in_jsonl(tmp_path: Path, capsys) -> None:
    src = tmp_path / "train.jsonl"
    src.write_bytes(b'{"text": "ok", "label": 1}\n{"text": "\xff", "label": 0}\n')
    _fails(tmp_path, capsys, ["--task", "sa", "--train", str(src)], "train.jsonl, row 2, field 'text'", "UTF-8")


@pytest.mark.parametrize("content", ["", "text,label\n"])
def test_empty_file_fails_cleanly(tmp_path: Path, capsys, content: str) -> None:
    src = tmp_path / "train.csv"
    src.write_text(content, encoding="utf-8")
    _fails(tmp_path, capsys, ["--task", "sa", "--train", str(src)], "train.csv", "empty file")


def test_strict_mode_stops_at_first_bad_row(tmp_path: Path, write_csv, capsys) -> None:
    src = write_csv(tmp_path / "train.csv", ["text", "label"], [*_sa_rows(5), ("", 1)])
    _fails(tmp_path, capsys, ["--task", "sa", "--train", str(src), "--strict"], "row 6, field 'text'", "empty text")


def test_failed_rebuild_keeps_previous_output(tmp_path: Path, write_csv, capsys) -> None:
    good = write_csv(tmp_path / "good.csv", ["text", "label"], _sa_rows(12))
    assert main(["build", "--task", "sa", "--train", str(good), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    before = (tmp_path / "out" / "nlue" / "README.md").read_bytes()
    bad = tmp_path / "bad.csv"
    bad.write_text("", encoding="utf-8")
    assert main(["build", "--task", "sa", "--train", str(bad), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert (tmp_path / "out" / "nlue" / "README.md").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["nlue", "nlue.rejects.jsonl", "nlue.report.json"]


def test_some_bad_rows_build_and_are_listed(tmp_path: Path, write_csv, capsys) -> None:
    rows = [*_sa_rows(10), ("", 1), ("ठिकै", 7)]
    src = write_csv(tmp_path / "train.csv", ["text", "label"], rows)
    assert main(["build", "--task", "sa", "--train", str(src), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "rejected rows: 2" in capsys.readouterr().out
    rejects = [
        json.loads(x) for x in (tmp_path / "out" / "nlue.rejects.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [(r["row"], r["field"]) for r in rejects] == [(11, "text"), (12, "label")]
    assert all(r["file"].endswith("train.csv") and r["config"] == "sa" and r["reason"] for r in rejects)


def test_gmet_refuses_train_split(tmp_path: Path, write_jsonl) -> None:
    src = write_jsonl(tmp_path / "train.jsonl", [{"sentence": "[MASK] हो", "category": "Colors", "answers": ["रातो"]}])
    with pytest.raises(NlueError, match="config 'gmet' has splits test"):
        build_repo([TaskSources(TASKS["gmet"], {"train": [src]})], tmp_path / "out", _options())
    assert not (tmp_path / "out" / "nlue").exists()


def test_missing_column_raises_source_error_with_mapping_hint(tmp_path: Path, write_csv) -> None:
    src = write_csv(tmp_path / "t.csv", ["q", "s", "y"], [("क?", "ख", 0)])
    mapping = FieldMapping(columns={"question": "q", "sentence": "s", "label": "label"})
    with pytest.raises(SourceError, match="field 'label': missing column"):
        build_repo([TaskSources(TASKS["qnli"], {"test": [src]}, mapping)], tmp_path / "out", _options())


def test_lists_and_objects_in_text_fields_are_rejected(tmp_path: Path, write_jsonl) -> None:
    """JSONL and Parquet sources whose text field holds a list, an object or a boolean."""
    import pyarrow as pa

    good = [{"text": t, "label": y} for t, y in _sa_rows(6)]
    bad_jsonl = [
        {"text": ["राम्रो", "छ"], "label": 1},
        {"text": {"ne": "राम्रो"}, "label": 0},
        {"text": True, "label": 1},
        {"text": 2080, "label": 0},  # a number is kept as its text
    ]
    jsonl = write_jsonl(tmp_path / "train.jsonl", [*good[:3], *bad_jsonl])
    # An int64 column (a whole column of IDs); a mixed one would be typed double by pyarrow.
    numbers = pa.Table.from_pylist([{"text": 12345, "label": 1}, {"text": 67890, "label": 0}])
    pq.write_table(numbers, tmp_path / "numbers.parquet")
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.Table.from_pylist(good[3:]), plain)
    files = {"train": [jsonl, tmp_path / "numbers.parquet"], "test": [plain]}

    result = build_repo([TaskSources(TASKS["sa"], files)], tmp_path / "out", _options())

    rejects = [json.loads(x) for x in result.rejects_path.read_text(encoding="utf-8").splitlines()]
    assert [(Path(r["file"]).name, r["row"], r["field"]) for r in rejects] == [
        ("train.jsonl", 4, "text"),
        ("train.jsonl", 5, "text"),
        ("train.jsonl", 6, "text"),
    ]
    assert all(r["reason"].startswith("expected text") for r in rejects)
    assert [r["reason"].rsplit("found ", 1)[1] for r in rejects] == ["a list", "an object", "a boolean"]
    assert [r["value"] for r in rejects] == ['["राम्रो", "छ"]', '{"ne": "राम्रो"}', "true"]
    texts = {row["text"] for split in ("train", "validation") for row in _read(result.repo_dir, "sa", split)}
    assert {"2080", "12345", "67890"} <= texts
    assert not any(t.startswith(("[", "{")) or t == "True" for t in texts)


@pytest.mark.parametrize(
    ("column", "found"),
    [
        ([["नमस्ते", "संसार"], ["ठीक"]], "found a list"),
        ([{"ne": "हो", "en": "yes"}, {"ne": "होइन", "en": "no"}], "found an object"),
    ],
)
def test_parquet_list_or_struct_text_column_is_refused(tmp_path: Path, column: list, found: str) -> None:
    """A Parquet column types every row alike, so a list/struct text column leaves no valid row."""
    import pyarrow as pa

    src = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist([{"text": v, "label": i % 2} for i, v in enumerate(column)]), src)
    with pytest.raises(SourceError, match=f"train.parquet, row 1, field 'text': .*expected text.*{found}"):
        build_repo([TaskSources(TASKS["sa"], {"train": [src]})], tmp_path / "out", _options())


def test_semicolon_csv_from_a_spreadsheet_builds(tmp_path: Path) -> None:
    """The readers the judgment import shares: a CSV saved with semicolons is read with them."""
    source = tmp_path / "train.csv"
    source.write_text("text;label\nयो फिल्म राम्रो छ;positive\nयो फिल्म नराम्रो छ;negative\n", encoding="utf-8")
    result = build_repo([TaskSources(TASKS["sa"], {"train": [source]})], tmp_path / "out", BuildOptions(name="x"))
    assert (
        result.rejects == 0
        and result.configs["sa"].splits["train"].kept + result.configs["sa"].splits["validation"].kept == 2
    )
