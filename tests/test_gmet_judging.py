"""GMET judging: export, judges' files, majority, kappa, recomputed scores, and bad judgment files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from nlue.data.sample import sample_data_dir
from nlue.gmet.cli import main
from nlue.gmet.evaluate import GmetRun, write_run
from nlue.gmet.items import ItemPrediction, items_from_records
from nlue.gmet.judging import JudgmentFileError, reference_items
from nlue.gmet.verdicts import combine_judgments, majority_vote
from nlue.scores import score_task

sklearn_metrics = pytest.importorskip("sklearn.metrics")

N_ITEMS = 40
WRONG = "गलत"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exported run of 40 sample items: even ids predict their first answer (right), odd ids a wrong word."""
    lines = (sample_data_dir() / "gmet" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    records = [dict(json.loads(line), idx=i) for i, line in enumerate(lines[:N_ITEMS])]
    items = items_from_records(records)
    predictions, verdicts = [], []
    for item in items:
        word = item.answers[0] if item.id % 2 == 0 else WRONG
        predictions.append(ItemPrediction(item.id, [word, "अरू"], [-1.0, -2.0], [1, 1], [-1.0, -2.0]))
        verdicts.append(int(item.id % 2 == 0))
    metrics = score_task("gmet", [p.prediction for p in predictions], [list(i.answers) for i in items],
                         categories=[i.category for i in items])  # fmt: skip
    run = GmetRun(
        model="org/judged-model",
        kind="zero-shot",
        items=items,
        predictions=predictions,
        verdicts=verdicts,
        metrics=metrics,
        dataset={"id": "nlue sample data", "config": "gmet", "split": "test", "is_sample": True, "items": N_ITEMS},
    )
    out = tmp_path_factory.mktemp("gmet-run")
    write_run(run, out, results_dir=None)
    return out


def _exported(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "predictions.csv").open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _judge_csv(path: Path, rows: list[dict[str, str]], verdicts: dict[int, object]) -> Path:
    """A judge's copy of the run's record keyed by ``id`` (the format before blind sheets, still read)."""
    columns = [c for c in rows[0] if c != "judgment"] + ["judgment"]
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            key = int(row["id"]) if row["id"].isdigit() else row["id"]
            writer.writerow({**row, "judgment": verdicts.get(key, row.get("judgment", ""))})
    return path


def _judges(run_dir: Path, tmp_path: Path) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    """Two judges: A flips items 1 and 3 (accepts the 'wrong' word), B flips 3 and 4."""
    rows = _exported(run_dir)
    auto = np.array([int(r["automatic"]) for r in rows])
    a, b = auto.copy(), auto.copy()
    a[[1, 3]] = 1 - a[[1, 3]]
    b[[3, 4]] = 1 - b[[3, 4]]
    ids = [int(r["id"]) for r in rows]
    path_a = _judge_csv(tmp_path / "anita.csv", rows, dict(zip(ids, a.tolist(), strict=True)))
    path_b = _judge_csv(tmp_path / "bikash.csv", rows, dict(zip(ids, b.tolist(), strict=True)))
    return path_a, path_b, a, b


def test_record_has_one_row_per_item(run_dir: Path):
    rows = _exported(run_dir)
    assert [r["id"] for r in rows] == [str(i) for i in range(N_ITEMS)]
    assert list(rows[0]) == [
        "id", "category", "theme", "sentence", "filled", "prediction", "top_k", "answers", "automatic",
    ]  # fmt: skip
    assert rows[0]["top_k"] == f"{rows[0]['prediction']} | अरू"
    assert "[MASK]" in rows[0]["sentence"] and "[MASK]" not in rows[0]["filled"]
    jsonl = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["automatic"] for r in jsonl] == [int(r["automatic"]) for r in rows]
    assert isinstance(jsonl[0]["answers"], list) and "judgment" not in jsonl[0]


def test_two_judges_round_trip(run_dir: Path, tmp_path: Path):
    path_a, path_b, a, b = _judges(run_dir, tmp_path)
    items = reference_items(run_dir / "predictions.jsonl", need_automatic=True)
    outcome = combine_judgments([path_a, path_b], items, bootstrap_resamples=None)
    auto = np.array([i.automatic for i in items])
    # Agreement decides items 0, 2, 5...; items 1 and 4 are ties, so the automatic verdict wins; 3 both flipped.
    expected = np.where(a == b, a, auto)
    assert outcome.majority.tolist() == expected.tolist()
    assert outcome.ties == [1, 4]
    assert outcome.judges == ["anita", "bikash"]
    assert outcome.agreement["statistic"] == "cohen_kappa"
    assert outcome.agreement["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b))
    assert [d["id"] for d in outcome.disagreements] == [1, 4]
    assert outcome.disagreements[0]["anita"] == 1 and outcome.disagreements[0]["bikash"] == 0
    recomputed = score_task("gmet", [""] * N_ITEMS, expected.tolist(), categories=[i.category for i in items])
    for key in ("accuracy", "equality", "combined", "sigma"):
        assert outcome.metrics[key] == pytest.approx(recomputed[key])
    # Item 3 was accepted by both judges although the automatic verdict said wrong.
    assert outcome.majority[3] == 1 and auto[3] == 0


def test_tie_rules():
    ratings = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    automatic = [0, 0, 1, 1]
    assert majority_vote(ratings, automatic, "automatic")[0].tolist() == [0, 1, 1, 0]
    assert majority_vote(ratings, automatic, "zero")[0].tolist() == [0, 1, 0, 0]
    assert majority_vote(ratings, automatic, "one")[0].tolist() == [1, 1, 1, 0]
    three = np.array([[1, 0, 1], [0, 0, 1]])
    majority, tied = majority_vote(three, None, "zero")
    assert majority.tolist() == [1, 0] and not tied.any()


def test_cli_recomputes_scores_from_judgments(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path_a, path_b, a, b = _judges(run_dir, tmp_path)
    rows = _exported(run_dir)
    # A third judge, as JSONL with only the needed fields: agrees with A.
    path_c = tmp_path / "chandra.jsonl"
    path_c.write_text(
        "".join(json.dumps({"id": int(r["id"]), "judgment": int(v)}) + "\n" for r, v in zip(rows, a, strict=True)),
        encoding="utf-8",
    )
    results, out = tmp_path / "results", tmp_path / "judged"
    code = main(["--judgments", str(path_a), str(path_b), str(path_c), "--run", str(run_dir), "--out", str(out),
                 "--results-dir", str(results), "--bootstrap", "0", "--quiet"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "Fleiss' kappa" in printed
    majority = ((a + b + a) >= 2).astype(int)
    categories = [r["category"] for r in rows]
    expected = score_task("gmet", [""] * N_ITEMS, majority.tolist(), categories=categories)
    saved = json.loads((results / "org__judged-model" / "gmet.human.json").read_text(encoding="utf-8"))
    assert saved["kind"] == "zero-shot" and saved["model"] == "org/judged-model"
    for key in ("accuracy", "equality", "combined"):
        assert saved["metrics"][key] == pytest.approx(expected[key])
    assert saved["primary_score"] == pytest.approx(expected["combined"])
    assert "human: majority of 3 judge(s)" in saved["hyperparameters"]["verdicts"]
    assert saved["verdicts"] == "human"
    with (out / "judged.csv").open(encoding="utf-8-sig", newline="") as handle:
        judged = list(csv.DictReader(handle))
    assert [int(r["majority"]) for r in judged] == majority.tolist()
    assert {"anita", "bikash", "chandra"} <= set(judged[0])
    with (out / "disagreements.csv").open(encoding="utf-8-sig", newline="") as handle:
        assert [int(r["id"]) for r in csv.DictReader(handle)] == [1, 4]
    summary = json.loads((out / "judging.json").read_text(encoding="utf-8"))
    assert summary["agreement"]["statistic"] == "fleiss_kappa"
    assert (out / "gmet_categories.png").stat().st_size > 10_000
    assert (out / "categories.csv").is_file()
    assert not (out / "predictions.csv").exists()  # the judging files belong to the scored run


def test_judged_results_go_beside_the_automatic_ones_by_default(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`--judgments --run R` puts gmet.human.json in the default results folder, where R's gmet.json went."""
    import shutil

    run = shutil.copytree(run_dir, tmp_path / "runs" / "gmet" / run_dir.name)
    path_a, path_b, _, _ = _judges(run, tmp_path)
    monkeypatch.chdir(tmp_path / "runs")
    monkeypatch.delenv("NLUE_RESULTS_DIR", raising=False)
    assert main(["--judgments", str(path_a), str(path_b), "--run", str(run), "--bootstrap_resamples", "0"]) == 0
    assert (run / "judged" / "judging.json").is_file()  # the judged folder's default: inside the run
    assert (tmp_path / "runs" / "build" / "results" / "org__judged-model" / "gmet.human.json").is_file()
    assert not (run / "results").exists() and not (tmp_path / "runs" / "gmet" / "results").exists()


def test_cli_without_run_reads_items_from_the_first_file(run_dir: Path, tmp_path: Path, capsys):
    path_a, path_b, a, b = _judges(run_dir, tmp_path)
    out = tmp_path / "judged"
    code = main(["--judgments", str(path_a), str(path_b), "--out", str(out), "--results-dir", str(tmp_path / "r"),
                 "--bootstrap", "0", "--ties", "zero"])  # fmt: skip
    assert code == 0
    assert not (tmp_path / "r").exists()  # no model name known: no results file
    summary = json.loads((out / "judging.json").read_text(encoding="utf-8"))
    assert summary["tie_rule"] == "zero"
    expected = np.where(a == b, a, 0)
    assert summary["metrics"]["accuracy"] == pytest.approx(expected.mean())


# ------------------------------------------------------------------------------ bad judgment files
def _bad(run_dir: Path, path: Path) -> JudgmentFileError:
    items = reference_items(run_dir / "predictions.jsonl", need_automatic=True)
    with pytest.raises(JudgmentFileError) as info:
        combine_judgments([path], items, bootstrap_resamples=None)
    return info.value


def _complete(run_dir: Path) -> dict[int, object]:
    return {int(r["id"]): r["automatic"] for r in _exported(run_dir)}


def test_unknown_id(run_dir: Path, tmp_path: Path):
    rows = _exported(run_dir)
    rows.append({**rows[0], "id": "9999"})
    path = _judge_csv(tmp_path / "j.csv", rows, {**_complete(run_dir), 9999: 1})
    error = _bad(run_dir, path)
    assert f"{path}, row {N_ITEMS + 1}, field 'id': unknown item id" in str(error)
    assert "'9999'" in str(error)


@pytest.mark.parametrize("value", ["2", "yes", "-1", "0.5"])
def test_value_other_than_0_or_1(run_dir: Path, tmp_path: Path, value: str):
    path = _judge_csv(tmp_path / "j.csv", _exported(run_dir), {**_complete(run_dir), 2: value})
    message = str(_bad(run_dir, path))
    assert f"{path}, row 3, field 'judgment': must be 0 (wrong) or 1 (right) (got '{value}')" in message


def test_empty_judgment(run_dir: Path, tmp_path: Path):
    verdicts = _complete(run_dir)
    verdicts[5] = ""
    path = _judge_csv(tmp_path / "j.csv", _exported(run_dir), verdicts)
    assert f"{path}, row 6, field 'judgment': empty; write 1 (right) or 0 (wrong)" in str(_bad(run_dir, path))


def test_missing_items(run_dir: Path, tmp_path: Path):
    rows = [r for r in _exported(run_dir) if r["id"] not in ("5", "17")]
    path = _judge_csv(tmp_path / "j.csv", rows, _complete(run_dir))
    assert f"{path}, field 'id': no row for 2 item(s): ids 5, 17" in str(_bad(run_dir, path))


def test_duplicated_id(run_dir: Path, tmp_path: Path):
    rows = _exported(run_dir)
    rows.insert(4, dict(rows[1]))
    path = _judge_csv(tmp_path / "j.csv", rows, _complete(run_dir))
    assert f"{path}, row 5, field 'id': duplicated id: item 1 was judged already in row 2" in str(_bad(run_dir, path))


def test_non_integer_id(run_dir: Path, tmp_path: Path):
    rows = _exported(run_dir)
    rows[0] = {**rows[0], "id": "abc"}
    path = _judge_csv(tmp_path / "j.csv", rows, _complete(run_dir))
    assert f"{path}, row 1, field 'id': not an item id (an integer) (got 'abc')" in str(_bad(run_dir, path))


def test_unreadable_files(run_dir: Path, tmp_path: Path):
    """Judgment files are read by the builder's readers: the same checks and messages."""
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"id,judgment\n1,1\n2,\xff\xfe\n")
    assert f"{latin}, row 2, field 'judgment': not valid UTF-8" in str(_bad(run_dir, latin))
    missing = tmp_path / "nowhere.csv"
    assert f"{missing}, field '(file)': file not found" in str(_bad(run_dir, missing))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": 0, "judgment": 1}\n{"id": 1, "judgment": \n', encoding="utf-8")
    assert f"{broken}, row 2, field '(row)': not valid JSON" in str(_bad(run_dir, broken))
    sheet = tmp_path / "judge.xlsx"
    sheet.write_bytes(b"PK\x03\x04")
    assert f"{sheet}, field 'file': expected a .csv, .tsv or .jsonl judgment file" in str(_bad(run_dir, sheet))
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    assert f"{empty}, field 'file': the file has no data rows" in str(_bad(run_dir, empty))
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("id,judgment\n1,1,1\n", encoding="utf-8")
    assert f"{ragged}, row 1, field '(row)': has 3 cells but the header has 2" in str(_bad(run_dir, ragged))
    no_column = tmp_path / "no_column.csv"
    no_column.write_text("id,verdict\n0,1\n", encoding="utf-8")
    assert f"{no_column}, field 'judgment': missing column 'judgment'" in str(_bad(run_dir, no_column))


def test_all_problems_of_all_files_are_reported_and_the_cli_exits_non_zero(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    good = _judge_csv(tmp_path / "good.csv", _exported(run_dir), _complete(run_dir))
    bad = _judge_csv(tmp_path / "bad.csv", _exported(run_dir), {**_complete(run_dir), 0: "2", 7: "x"})
    code = main(["--judgments", str(good), str(bad), "--run", str(run_dir), "--out", str(tmp_path / "o"),
                 "--no-results", "--bootstrap", "0"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("nlue gmet: error: bad judgment file(s), 2 problems:")
    assert f"{bad}, row 1, field 'judgment'" in err and f"{bad}, row 8, field 'judgment'" in err
    assert str(good) not in err
    assert not (tmp_path / "o").exists()


def test_semicolon_csv_and_tsv_are_read(run_dir: Path, tmp_path: Path):
    items = reference_items(run_dir / "predictions.jsonl", need_automatic=True)
    auto = {i.id: i.automatic for i in items}
    semicolon = tmp_path / "excel.csv"
    semicolon.write_text("id;judgment\n" + "".join(f"{i};{v}\n" for i, v in auto.items()), encoding="utf-8-sig")
    tab = tmp_path / "sheet.tsv"
    tab.write_text("id\tjudgment\n" + "".join(f"{i}\t{v}\n" for i, v in auto.items()), encoding="utf-8")
    outcome = combine_judgments([semicolon, tab], items, bootstrap_resamples=None)
    assert outcome.majority.tolist() == [auto[i.id] for i in items]
    assert outcome.agreement["kappa"] == pytest.approx(1.0)
