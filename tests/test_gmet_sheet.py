"""Blind judging sheets: judges see the sentence and the word only; the key maps their verdicts back."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nlue.data.sample import sample_data_dir
from nlue.gmet.cli import main
from nlue.gmet.evaluate import GmetRun, write_run
from nlue.gmet.items import ItemPrediction, items_from_records
from nlue.gmet.sheet import SHEET_COLUMNS, read_key
from nlue.scores import score_task

N_ITEMS = 30
WRONG = "गलत"


def _items():
    lines = (sample_data_dir() / "gmet" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    return items_from_records([dict(json.loads(line), idx=i) for i, line in enumerate(lines[:N_ITEMS])])


def _write_run(out: Path, model: str, words: list[str]) -> Path:
    items = _items()
    predictions = [
        ItemPrediction(i.id, [w] if w else [], [-1.0] if w else []) for i, w in zip(items, words, strict=True)
    ]
    answers = [list(i.answers) for i in items]
    metrics = score_task("gmet", [p.prediction for p in predictions], answers, categories=[i.category for i in items])
    verdicts = [int(p.prediction in a) for p, a in zip(predictions, answers, strict=True)]
    run = GmetRun(model, "zero-shot", items, predictions, verdicts, metrics, {"id": "sample", "is_sample": True})
    write_run(run, out, results_dir=None)
    return out


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Run A: even items right (first answer), odd items wrong. Run B agrees with A on the first ten items."""
    items = _items()
    words_a = [item.answers[0] if item.id % 2 == 0 else WRONG for item in items]
    words_b = [w if item.id < 10 else ("अर्को" if item.id % 3 else "") for item, w in zip(items, words_a, strict=True)]
    return (
        _write_run(tmp_path / "run-a", "org/model-alpha", words_a),
        _write_run(tmp_path / "run-b", "org/model-beta", words_b),
    )


def _sheet(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _fill(sheet: list[dict[str, str]], path: Path, verdict) -> Path:
    """A judge's copy of the sheet; ``verdict(row)`` gives the 0/1 judgment of each row."""
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(sheet[0]))
        writer.writeheader()
        for row in sheet:
            writer.writerow({**row, "judgment": verdict(row)})
    return path


def test_the_sheet_shows_only_the_sentence_and_the_word(two_runs: tuple[Path, Path]):
    run_a, _ = two_runs
    rows = _sheet(run_a / "judging" / "sheet.csv")
    assert tuple(rows[0]) == SHEET_COLUMNS
    assert len(rows) == N_ITEMS and all(r["judgment"] == "" for r in rows)
    text = (run_a / "judging" / "sheet.csv").read_text(encoding="utf-8-sig")
    assert "model-alpha" not in text and "automatic" not in text
    items = {item.sentence: item for item in _items()}
    for row in rows:
        item = items[row["sentence"]]
        assert row["filled"] == item.filled(row["word"])
        # The listed answers appear only where the model's own word is one of them.
        shown = set(row.values()) - {row["sentence"], row["filled"], row["key"], ""}
        assert shown == {row["word"]}
    # Shuffled with the seed: not in item order, and the same order on a rewrite.
    order = [items[r["sentence"]].id for r in rows]
    assert order != sorted(order)
    key = read_key(run_a / "judging" / "sheet_key.json")
    assert not key.reference_shown and set(key.entries) == {r["key"] for r in rows}


def test_same_seed_same_sheet_and_reference_only_when_asked(tmp_path: Path, two_runs: tuple[Path, Path]):
    run_a, _ = two_runs
    for name in ("x", "y"):
        assert main(["--sheet", str(run_a), "--out", str(tmp_path / name), "--sheet-seed", "7"]) == 0
    assert (tmp_path / "x" / "sheet.csv").read_bytes() == (tmp_path / "y" / "sheet.csv").read_bytes()
    assert main(["--sheet", str(run_a), "--out", str(tmp_path / "ref"), "--sheet-reference"]) == 0
    rows = _sheet(tmp_path / "ref" / "sheet.csv")
    assert "reference" in rows[0] and all(r["reference"] for r in rows)
    assert read_key(tmp_path / "ref" / "sheet_key.json").reference_shown


def test_round_trip_from_the_runs_own_sheet(two_runs: tuple[Path, Path], tmp_path: Path):
    run_a, _ = two_runs
    sheet = _sheet(run_a / "judging" / "sheet.csv")
    # Both judges accept every word except the wrong one; the second also rejects one right word.
    first = _fill(sheet, tmp_path / "ana.csv", lambda r: int(r["word"] != WRONG))
    rejected = next(r["key"] for r in sheet if r["word"] != WRONG)
    second = _fill(sheet, tmp_path / "bikash.csv", lambda r: int(r["word"] != WRONG and r["key"] != rejected))
    results = tmp_path / "results"
    code = main(["--judgments", str(first), str(second), "--run", str(run_a), "--ties", "zero",
                 "--out", str(tmp_path / "judged"), "--results-dir", str(results), "--bootstrap", "0"])  # fmt: skip
    assert code == 0
    saved = json.loads((results / "org__model-alpha" / "gmet.human.json").read_text(encoding="utf-8"))
    assert saved["verdicts"] == "human"
    items = _items()
    expected = [int(item.id % 2 == 0) for item in items]
    rejected_item = next(
        i.id for i in items if i.sentence == next(r for r in sheet if r["key"] == rejected)["sentence"]
    )
    expected[rejected_item] = 0  # a tie, and ties count as wrong here
    reference = score_task("gmet", [""] * N_ITEMS, expected, categories=[i.category for i in items])
    assert saved["metrics"]["accuracy"] == pytest.approx(reference["accuracy"])
    assert saved["metrics"]["combined"] == pytest.approx(reference["combined"])


def test_one_sheet_for_two_runs_judges_shared_words_once(two_runs: tuple[Path, Path], tmp_path: Path):
    run_a, run_b = two_runs
    out = tmp_path / "shared"
    assert main(["--sheet", str(run_a), str(run_b), "--out", str(out)]) == 0
    rows = _sheet(out / "sheet.csv")
    text = (out / "sheet.csv").read_text(encoding="utf-8-sig")
    assert "alpha" not in text and "beta" not in text and "run-a" not in text
    words_a = {json.loads(x)["id"]: json.loads(x)["prediction"] for x in (run_a / "predictions.jsonl").open()}
    words_b = {json.loads(x)["id"]: json.loads(x)["prediction"] for x in (run_b / "predictions.jsonl").open()}
    pairs = {(i, w) for i, w in words_a.items()} | {(i, w) for i, w in words_b.items() if w}
    assert len(rows) == len(pairs)  # the first ten items are shared, B proposed nothing for some
    sheet = _fill(rows, tmp_path / "judge.csv", lambda r: int(r["word"] not in (WRONG, "अर्को")))
    key = out / "sheet_key.json"
    for run, name in ((run_a, "org__model-alpha"), (run_b, "org__model-beta")):
        code = main(["--judgments", str(sheet), "--run", str(run), "--sheet-key", str(key),
                     "--out", str(tmp_path / f"judged-{name}"), "--results-dir", str(tmp_path / "r"),
                     "--bootstrap", "0"])  # fmt: skip
        assert code == 0
    saved_a = json.loads((tmp_path / "r" / "org__model-alpha" / "gmet.human.json").read_text(encoding="utf-8"))
    saved_b = json.loads((tmp_path / "r" / "org__model-beta" / "gmet.human.json").read_text(encoding="utf-8"))
    assert saved_a["metrics"]["accuracy"] == pytest.approx(sum(1 for i in words_a if i % 2 == 0) / N_ITEMS)
    assert saved_b["metrics"]["accuracy"] == pytest.approx(sum(1 for i in words_b if i < 10 and i % 2 == 0) / N_ITEMS)


def test_sheet_problems_are_reported(two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    run_a, _ = two_runs
    rows = _sheet(run_a / "judging" / "sheet.csv")
    short = _fill(rows[:-2], tmp_path / "short.csv", lambda r: 1)
    code = main(["--judgments", str(short), "--run", str(run_a), "--no-results", "--out", str(tmp_path / "o")])
    assert code == 2
    assert f"{short}, field 'key': no row for 2 sheet key(s)" in capsys.readouterr().err
    # A sheet copy without --run: nothing maps the keys back.
    full = _fill(rows, tmp_path / "full.csv", lambda r: 1)
    assert main(["--judgments", str(full), "--no-results", "--out", str(tmp_path / "p")]) == 2
    assert "sheet_key.json" in capsys.readouterr().err
