"""The annotation round trip: mined candidates -> sheets -> labels and spans -> kappa, adjudication, items -> split."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.gmet.judging import JudgmentFileError
from nlue.idioms.annotate import SHEET_COLUMNS, import_annotations
from nlue.idioms.cli import main as idioms_main
from nlue.idioms.split import draw_pool
from nlue.registry.tasks import get_task

DATA = Path(__file__).parent / "data"
# Per mined candidate (in mining order): annotator 1's and 2's labels, and a span annotator 2 marks instead.
A1 = ["Ι", "NA", "I", "I", "I", "literal"]  # a Greek capital iota for I, as OCR writes it
A2 = ["I", "na", "I", "L", "I", "L"]
A2_SPAN = {4: "कमाइ हात लाग्यो"}  # annotator 2 takes in the word before the idiom


@pytest.fixture
def mined(tmp_path: Path) -> Path:
    out = tmp_path / "work"
    assert idioms_main(["mine", "--idioms", str(DATA / "nediom_idioms.txt"), "--corpus",
                        str(DATA / "nediom_corpus.txt"), "--out", str(out), "-q"]) == 0  # fmt: skip
    return out / "candidates.jsonl"


def _read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _write(path: Path, rows: list[dict], columns: list[str]) -> Path:
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _fill(sheet: Path, labels: list[str], spans: dict[int, str] | None = None) -> Path:
    rows = _read(sheet)
    for number, (row, label) in enumerate(zip(rows, labels, strict=True)):
        row["label"] = label
        if spans and number in spans:
            row["position"] = row["S2"].replace(spans[number], f"###{spans[number]}###", 1)
    return _write(sheet, rows, list(SHEET_COLUMNS))


def _export(mined: Path, out: Path, names: str) -> list[Path]:
    assert idioms_main(["annotate-export", "--candidates", str(mined), "--out", str(out), "--annotators", names]) == 0
    return [out / f"{name}.csv" for name in names.split(",")]


def test_export_gives_every_annotator_the_same_blank_sheet(mined: Path, tmp_path: Path) -> None:
    first, second = _export(mined, tmp_path / "sheets", "a1,a2")
    assert first.read_bytes() == second.read_bytes() and first.read_bytes().startswith(b"\xef\xbb\xbf")
    rows = _read(first)
    assert list(rows[0]) == list(SHEET_COLUMNS) and all(row["label"] == "" for row in rows)
    assert all("###" in row["position"] for row in rows)  # the mined span, for the annotator to correct


def test_two_annotators_kappa_disagreements_and_adjudication(mined: Path, tmp_path: Path) -> None:
    a1, a2 = _export(mined, tmp_path / "sheets", "a1,a2")
    _fill(a1, A1)
    _fill(a2, A2, A2_SPAN)
    out = tmp_path / "agreed"
    args = ["annotate-import", "--candidates", str(mined), "--sheets", str(a1), str(a2), "--out", str(out)]
    assert idioms_main(args) == 0
    report = json.loads((out / "annotation_report.json").read_text(encoding="utf-8"))
    norm = {"Ι": "I", "literal": "L", "na": "NA"}
    expected = cohen_kappa_score([norm.get(x, x) for x in A1], [norm.get(x, x) for x in A2])
    agreement = report["agreement"]
    assert agreement["statistic"] == "cohen_kappa" and agreement["kappa"] == pytest.approx(expected, abs=1e-4)
    assert agreement["unanimous_labels"] == pytest.approx(5 / 6, abs=1e-4)
    assert agreement["span_agreement"] == pytest.approx(4 / 5, abs=1e-4)  # all but item 5 of the five I/L items
    assert (report["dropped_na"], report["unresolved"], report["kept"]) == (1, 2, 3)
    kept = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [item["label"] for item in kept] == ["I", "I", "L"] and all("###" in item["position"] for item in kept)
    disagreements = _read(out / "disagreements.csv")
    assert [(row["a1_label"], row["a2_label"]) for row in disagreements] == [("I", "L"), ("I", "I")]
    assert "###कमाइ हात लाग्यो###" in disagreements[1]["a2_position"]
    # The adjudicator settles the first (idiomatic, as annotator 1 marked it) and leaves the second open.
    disagreements[0]["label"], disagreements[0]["position"] = "I", disagreements[0]["a1_position"]
    adjudication = _write(tmp_path / "adjudicated.csv", disagreements, list(disagreements[0]))
    assert idioms_main([*args, "--adjudication", str(adjudication)]) == 0
    report = json.loads((out / "annotation_report.json").read_text(encoding="utf-8"))
    assert (report["adjudicated"], report["unresolved"], report["kept"]) == (1, 1, 4)
    assert report["overruled_by_adjudication"] == {"a1": 0, "a2": 1} and report["kept_labels"] == {"I": 3, "L": 1}
    # What annotate-import keeps is what the builder reads.
    items = out / "items.jsonl"
    result = build_repo([TaskSources(get_task("nediom"), {"test": [items]})], tmp_path / "build",
                        BuildOptions(name="nediom", show_progress=False))  # fmt: skip
    assert result.rejects == 0 and result.configs["nediom"].splits["test"].kept == 4


def _fleiss_by_hand(matrix: list[list[str]], labels: tuple[str, ...]) -> float:
    n = len(matrix[0])
    agree, shares = [], dict.fromkeys(labels, 0.0)
    for row in matrix:
        counts = [row.count(label) for label in labels]
        agree.append((sum(c * c for c in counts) - n) / (n * (n - 1)))
        for label, count in zip(labels, counts, strict=True):
            shares[label] += count / (n * len(matrix))
    expected = sum(p * p for p in shares.values())
    return (float(np.mean(agree)) - expected) / (1 - expected)


def test_three_annotators_get_fleiss_kappa(mined: Path, tmp_path: Path) -> None:
    a3_labels = ["I", "NA", "L", "I", "I", "L"]
    sheets = _export(mined, tmp_path / "sheets", "a1,a2,a3")
    for sheet, labels in zip(sheets, (A1, A2, a3_labels), strict=True):
        _fill(sheet, labels)
    candidates = [json.loads(line) for line in mined.read_text(encoding="utf-8").splitlines()]
    kept, disagreements, report = import_annotations(candidates, sheets)
    norm = {"Ι": "I", "literal": "L", "na": "NA"}
    matrix = [[norm.get(x, x) for x in labels] for labels in zip(A1, A2, a3_labels, strict=True)]
    assert report["agreement"]["statistic"] == "fleiss_kappa"
    assert report["agreement"]["kappa"] == pytest.approx(_fleiss_by_hand(matrix, ("I", "L", "NA")), abs=1e-4)
    assert len(kept) == 3 and len(disagreements) == 2


def test_bad_sheets_are_reported_all_at_once_with_file_row_and_field(mined: Path, tmp_path: Path) -> None:
    a1, a2 = _export(mined, tmp_path / "sheets", "a1,a2")
    _fill(a1, ["I", "NA", "X", "I", "I", "L"])
    rows = _read(a2)
    rows[0]["label"], rows[0]["position"] = "I", rows[0]["S2"]  # I without a marked span
    rows[1]["label"] = "NA"
    _write(a2, rows[:2], list(SHEET_COLUMNS))  # the other four rows left out
    candidates = [json.loads(line) for line in mined.read_text(encoding="utf-8").splitlines()]
    with pytest.raises(JudgmentFileError) as caught:
        import_annotations(candidates, [a1, a2])
    found = {(Path(p.file).name, p.row, p.field) for p in caught.value.problems}
    assert found == {("a1.csv", 3, "label"), ("a2.csv", 1, "position"), ("a2.csv", 0, "key")}
    assert "no label for 4 candidate(s)" in str(caught.value) and "expected I, L or NA" in str(caught.value)
    a1, a2 = _export(mined, tmp_path / "again", "a1,a2")
    _fill(a1, A1)
    _write(a2, _read(_fill(a2, A2))[:5], list(SHEET_COLUMNS))
    with pytest.raises(JudgmentFileError, match=r"no label for 1 candidate"):
        import_annotations(candidates, [a1, a2])


def test_split_keeps_idioms_apart_and_is_seeded(tmp_path: Path) -> None:
    items = [{"id": f"x{n}", "idiom": f"मुहार{n // 2} लाग्नु", "label": "IL"[n % 2]} for n in range(40)]
    pool, test = draw_pool(items, per_label=5, seed=7)
    assert len(pool) == 10 and sorted(i["label"] for i in pool) == ["I"] * 5 + ["L"] * 5
    assert not {i["idiom"] for i in pool} & {i["idiom"] for i in test} and len(test) == 30
    assert draw_pool(items, per_label=5, seed=7) == (pool, test) and draw_pool(items, 5, seed=8) != (pool, test)
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    out = tmp_path / "sources" / "nediom"
    assert idioms_main(["split", "--input", str(source), "--out", str(out), "--per-label", "5", "--seed", "7"]) == 0
    written = [json.loads(line) for line in (out / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert written == pool
    # Only whole idioms: one idiom with three literal contexts cannot give exactly two literal items.
    uneven = [{"idiom": "क ख", "label": "L"}] * 3 + [{"idiom": "ग घ", "label": "I"}] * 2
    assert idioms_main(["split", "--input", str(_jsonl(tmp_path / "u.jsonl", uneven)), "--out", str(out),
                        "--per-label", "2"]) == 2  # fmt: skip


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path
