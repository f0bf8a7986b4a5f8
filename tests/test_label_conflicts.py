"""Issue 29, item 15: an input that train or validation gives several labels keeps the majority label.

NepaliSentiment repeats 208 texts with opposite labels, and the build kept each one's first label. Now
the label most of an input's rows give wins (its first row with that label is kept), a tie leaves the
input out (every row rejected with the reason), ``--conflicts keep-first`` keeps the old rule, and the
report and the card say which rule was used and what it changed. Both engines give the same files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nlue.cli import main
from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.errors import NlueError, SourceError
from nlue.registry.tasks import TASKS

from .conftest import SENTENCES

MOSTLY_POSITIVE = "यो फिल्म राम्रो छ"  # negative first, then positive twice: the majority is not the first label
TIED = "खाना ठिकै थियो"  # positive once, negative once
REPEATED = "सेवा नराम्रो थियो"  # negative twice: a plain duplicate


def _rows() -> list[tuple[str, str]]:
    plain = [(f"{SENTENCES[i]} {i}", "positive" if i % 2 else "negative") for i in range(12)]
    return [
        (MOSTLY_POSITIVE, "negative"),  # row 1
        *plain[:4],
        (TIED, "positive"),  # row 6
        (MOSTLY_POSITIVE, "positive"),  # row 7
        (REPEATED, "negative"),  # row 8
        *plain[4:8],
        (TIED, "negative"),  # row 13
        (MOSTLY_POSITIVE, "positive"),  # row 14
        (REPEATED, "negative"),  # row 15
        *plain[8:],
    ]


def _csv(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in rows), encoding="utf-8")
    return path


def _texts(repo: Path, split: str) -> dict[str, int]:
    files = sorted((repo / "sa").glob(f"{split}-*.parquet"))
    return {row["text"]: row["label"] for f in files for row in pq.read_table(f).to_pylist()}


def _rejects(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("given", ["validation", "carved"])
def test_majority_label_wins_and_a_tie_is_left_out(tmp_path: Path, given: str) -> None:
    """issue 29, item 15: the majority label is kept, a tie rejects every row of its input, both reported."""
    train = _csv(tmp_path / "train.csv", _rows())
    test = _csv(tmp_path / "test.csv", [(f"{SENTENCES[i]} t{i}", "positive") for i in range(3)])
    files = {"train": [train], "test": [test]}
    if given == "validation":  # the same rows as validation: the rule applies there too
        files = {"train": [_csv(tmp_path / "t.csv", _rows()[1:5])], "validation": [train], "test": [test]}
    split = "train" if given == "carved" else "validation"
    outcomes = {}
    for engine in ("rows", "columnar"):
        out = tmp_path / engine
        result = build_repo([TaskSources(TASKS["sa"], files)], out, BuildOptions(show_progress=False, engine=engine))
        outcomes[engine] = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        report = result.configs["sa"].splits[split]
        built = _texts(result.repo_dir, split) | _texts(result.repo_dir, "validation")
        assert built.get(MOSTLY_POSITIVE) == 1 and TIED not in built and built.get(REPEATED) == 0
        assert report.conflicting_duplicates == 3 and report.duplicates >= 1
        assert report.label_conflicts == {
            "rule": "majority", "inputs": 2, "majority_is_first_label": 0, "majority_is_another_label": 1,
            "tied_inputs": 1, "rows_rejected_outvoted": 1, "rows_rejected_tied": 2,
        }  # fmt: skip
        rejects = [r for r in _rejects(result.rejects_path) if r["split"] == split]
        assert [(r["row"], r["field"]) for r in rejects] == [(1, "label"), (6, "label"), (13, "label")]
        assert rejects[0]["reason"].startswith(
            "same input as other rows with another label (positive 2 rows, negative 1 row): "
            "the majority label 'positive' is kept"
        )
        assert "no label has a majority (negative 1 row, positive 1 row)" in rejects[1]["reason"]
        card = (result.repo_dir / "README.md").read_text(encoding="utf-8")
        assert "keeps the label most of its rows give" in card and "`--conflicts majority`" in card
        assert f"| sa | {split} | 2 | 0 | 1 | 1 | 3 |" in card
        assert json.loads(result.report_path.read_text(encoding="utf-8"))["conflicts"] == "majority"
    assert outcomes["rows"] == outcomes["columnar"]


def test_keep_first_keeps_the_old_rule_and_says_so(tmp_path: Path, capsys) -> None:
    """issue 29, item 15: ``--conflicts keep-first`` keeps each input's first label, as builds did before."""
    train = _csv(tmp_path / "train.csv", _rows())
    out = tmp_path / "out"
    code = main(["build", "--task", "sa", "--train", str(train), "--out", str(out), "--quiet",
                 "--conflicts", "keep-first"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    built = _texts(out / "nlue", "train") | _texts(out / "nlue", "validation")
    assert built[MOSTLY_POSITIVE] == 0 and built[TIED] == 1  # each input's first label
    rejects = _rejects(out / "nlue.rejects.jsonl")
    assert [r["row"] for r in rejects] == [7, 13, 14]
    assert all(r["reason"].endswith("the earlier row is kept (--conflicts keep-first)") for r in rejects)
    report = json.loads((out / "nlue.report.json").read_text(encoding="utf-8"))
    assert report["conflicts"] == "keep-first"
    assert report["configs"]["sa"]["splits"]["train"]["label_conflicts"] == {
        "rule": "keep-first",
        "inputs": 2,
        "rows_rejected": 3,
    }
    card = (out / "nlue" / "README.md").read_text(encoding="utf-8")
    assert "keeps its first row's label" in card and "| sa | train | 2 | 3 |" in card


def test_a_split_without_conflicts_is_read_once(tmp_path: Path, monkeypatch) -> None:
    from nlue.data import config_builder

    rows = [(f"{SENTENCES[i]} {i}", "positive" if i % 2 else "negative") for i in range(10)]
    train = _csv(tmp_path / "train.csv", rows + rows[:2])  # duplicates, no conflict
    reads: list[Path] = []
    original = config_builder.WatchedSource

    def counting(path: Path) -> object:
        reads.append(path)
        return original(path)

    monkeypatch.setattr(config_builder, "WatchedSource", counting)
    options = BuildOptions(show_progress=False, engine="rows")
    result = build_repo([TaskSources(TASKS["sa"], {"train": [train]})], tmp_path / "out", options)
    assert reads == [train] and result.configs["sa"].splits["train"].label_conflicts is None
    card = (result.repo_dir / "README.md").read_text(encoding="utf-8")
    assert "No input of train or validation was given two different labels." in card


def test_strict_stops_at_the_first_input_given_two_labels(tmp_path: Path) -> None:
    train = _csv(tmp_path / "train.csv", _rows())
    options = BuildOptions(show_progress=False, strict=True)
    with pytest.raises(SourceError, match=r"train\.csv, row 7, field 'label': same input as an earlier row"):
        build_repo([TaskSources(TASKS["sa"], {"train": [train]})], tmp_path / "out", options)


def test_scores_follow_the_majority_too(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    rows = [{"sentence1": f"{SENTENCES[i]} {i}", "sentence2": SENTENCES[i], "label": i % 5} for i in range(10)]
    pair = {"sentence1": "ऊ आयो", "sentence2": "ऊ आइपुग्यो"}
    rows += [{**pair, "label": 4.5}, {**pair, "label": 3.0}, {**pair, "label": 3.0}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    result = build_repo([TaskSources(TASKS["stsb"], {"train": [path]})], tmp_path / "out", BuildOptions())
    [reject] = _rejects(result.rejects_path)
    assert reject["row"] == 11 and "(3 2 rows, 4.5 1 row): the majority label '3' is kept" in reject["reason"]


def test_an_unknown_rule_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NlueError, match="unknown --conflicts rule 'vote'; expected one of majority, keep-first"):
        build_repo([TaskSources(TASKS["sa"], {})], tmp_path, BuildOptions(conflicts="vote"))
