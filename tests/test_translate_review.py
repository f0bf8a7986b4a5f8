"""The quality loop: a seeded review sample out, verdicts in, bad batches asked again; back-translation scores."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.registry.tasks import get_task
from nlue.translate.cli import main as translate_main
from nlue.translate.review import export_review
from tests.lm_fault_server import FaultServer
from tests.test_translate_engine import GLUE, _rows, _translate, fake_nepali, server  # noqa: F401


def _sheet(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _write_sheet(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_review_sends_back_a_bad_batch_and_the_next_run_replaces_only_its_rows(
    server: FaultServer,  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
    capsys,
) -> None:
    out = tmp_path / "work"
    assert _translate(server, GLUE / "RTE.train.tsv", out, "--batch-size", "4") == 0
    output = out / "rte" / "train.translated.jsonl"
    before = _rows(output)
    review = ["review", "export", "--task", "rte", "--out", str(out), "--share", "0.5", "--min-rows", "1"]
    assert translate_main(review) == 0
    sample = out / "_translate" / "rte-train" / "review" / "sample.csv"
    rows = _sheet(sample)
    assert len(rows) == 6 and sample.read_bytes().startswith("\ufeff".encode())
    assert list(rows[0]) == ["source_id", "batch", "en_sentence1", "ne_sentence1", "en_sentence2", "ne_sentence2",
                             "label", "adequacy", "fluency", "cultural_fit", "acceptable", "comment"]  # fmt: skip
    for row in rows:
        assert row["ne_sentence1"] == fake_nepali(row["en_sentence1"]) and row["label"] in (
            "entailment",
            "not_entailment",
        )
    again = export_review(get_task("rte"), output, tmp_path / "other", share=0.5, min_rows=1, seed=42)
    assert [r["source_id"] for r in _sheet(again)] == [r["source_id"] for r in rows]  # seeded
    other_seed = export_review(get_task("rte"), output, tmp_path / "other", share=0.5, min_rows=1, seed=7)
    assert [r["source_id"] for r in _sheet(other_seed)] != [r["source_id"] for r in rows]
    assert (sample.parent / "RUBRIC.md").read_text().startswith("# Reviewing")
    # one reviewer marks one row of one batch unacceptable; a second reviewer agrees with the rest
    bad = rows[0]
    first = [{**r, "adequacy": "2" if r is bad else "5", "acceptable": "no" if r is bad else "yes"} for r in rows]
    second = [{**r, "acceptable": "yes"} for r in rows[1:]]
    sheets = [_write_sheet(tmp_path / "r1.csv", first), _write_sheet(tmp_path / "r2.csv", second)]
    broken = _write_sheet(tmp_path / "bad.csv", [{**rows[1], "acceptable": "maybe", "fluency": "9"}])
    base = ["review", "import", "--task", "rte", "--out", str(out), "--sheets"]
    assert translate_main([*base, str(broken)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv, row 1, field 'fluency': expected a score from 1 to 5" in err and "field 'acceptable'" in err
    assert translate_main([*base, *map(str, sheets)]) == 0
    verdicts = json.loads((sample.parent / "verdicts.json").read_text())
    assert verdicts["sent_back"] == [bad["batch"]] and verdicts["rows_unacceptable"] == 1
    assert verdicts["rows_reviewed"] == 6 and verdicts["rows_judged_by_several"] == 5
    assert json.loads((sample.parent / "retranslate.json").read_text()) == {bad["batch"]: 1}
    # the same translate command again: only the batch sent back is asked, and only its rows change
    asked = len(server.state.records)
    assert _translate(server, GLUE / "RTE.train.tsv", out, "--batch-size", "4") == 0
    assert len(server.state.records) - asked == 1
    for old, new in zip(before, _rows(output), strict=True):
        if old["provenance"]["batch"] == bad["batch"]:
            assert new["sentence1"] == "संशोधित " + old["sentence1"] and new["provenance"]["review_round"] == 1
        else:
            assert new == old


def test_backtranslation_scores_a_seeded_sample_against_the_english(server: FaultServer, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "work"
    assert _translate(server, GLUE / "RTE.train.tsv", out) == 0
    argv = ["backtranslate", "--task", "rte", "--out", str(out), "--endpoint", server.base_url, "--model", "tiny",
            "--share", "0.25", "--min-rows", "2", "-q"]  # fmt: skip
    assert translate_main(argv) == 0
    folder = out / "_translate" / "rte-train" / "backtranslation"
    report = json.loads((folder / "report.json").read_text())
    assert (
        report["rows"] == 3 and report["scores"]["texts"] == 6 and set(report["by_field"]) == {"sentence1", "sentence2"}
    )
    # the scripted round trip loses only capitals: chrF is high, and below 100
    assert 80 < report["scores"]["chrf"] < 100 and 0 < report["scores"]["bleu"] < 100
    import sacrebleu

    rows = _rows(folder / "rows.jsonl")
    assert rows[0]["back"] == rows[0]["english"].lower()
    assert rows[0]["chrf"] == pytest.approx(
        sacrebleu.sentence_chrf(rows[0]["back"], [rows[0]["english"]]).score, abs=0.01
    )
    asked = len(server.state.records)
    assert translate_main(argv) == 0 and len(server.state.records) == asked  # cached: nothing asked again
    assert translate_main(["backtranslate", "--task", "rte", "--out", str(out), "-q"]) == 2


def test_the_dataset_card_says_how_a_translated_split_was_made(server: FaultServer, tmp_path: Path) -> None:  # noqa: F811
    from nlue.cli import main as nlue_main

    out = tmp_path / "work"
    assert _translate(server, GLUE / "RTE.train.tsv", out, "--batch-size", "4") == 0

    def card() -> str:
        build = tmp_path / "build"
        if build.exists():
            import shutil

            shutil.rmtree(build)
        assert nlue_main(["build", "--source", str(out), "--configs", "rte", "--out", str(build), "-q"]) == 0
        return (build / "nlue" / "README.md").read_text(encoding="utf-8")

    text = card()
    assert "- machine-translated" in text.split("---")[1]  # a tag in the card's metadata
    section = text.split("## How the machine-translated splits were made")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if line.startswith("| rte | train |"))
    assert "`RTE.train.tsv` (glue-rte)" in row and "`openai:tiny` (engine)" in row and "`nlue-translate-v1`" in row
    assert "| 12 → 12 | 0 / 0 / 0 |" in row and "**none imported**" in row and "not run" in row
    assert "entailment 6 → 6, not_entailment 6 → 6" in section
    assert "No native-speaker review was imported for `rte` train" in section
    assert str(tmp_path) not in text  # file names only: no path of the machine that built it
    # after a review and a back-translation, the card reports both
    assert translate_main(["review", "export", "--task", "rte", "--out", str(out), "--share", "0.5",
                           "--min-rows", "1"]) == 0  # fmt: skip
    sample = out / "_translate" / "rte-train" / "review" / "sample.csv"
    verdicts = [{**r, "acceptable": "no" if i == 0 else "yes"} for i, r in enumerate(_sheet(sample))]
    sheet = _write_sheet(tmp_path / "r1.csv", verdicts)
    assert translate_main(["review", "import", "--task", "rte", "--out", str(out), "--sheets", str(sheet)]) == 0
    assert translate_main(["backtranslate", "--task", "rte", "--out", str(out), "--endpoint", server.base_url,
                           "--model", "tiny", "--share", "0.25", "--min-rows", "2", "-q"]) == 0  # fmt: skip
    back = json.loads((out / "_translate" / "rte-train" / "backtranslation" / "report.json").read_text())
    section = card().split("## How the machine-translated splits were made")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if line.startswith("| rte | train |"))
    batch = verdicts[0]["batch"]
    assert f"6 rows, 1 unacceptable; 1 batch sent back (**1 not yet translated again**: {batch})" in row
    assert f"BLEU {back['scores']['bleu']}, chrF {back['scores']['chrf']} (3 of 12 rows, by `openai:tiny`)" in row
    assert "No native-speaker review" not in section
    # the batch sent back is translated again: the card no longer says it is waiting
    assert _translate(server, GLUE / "RTE.train.tsv", out, "--batch-size", "4") == 0
    section = card().split("## How the machine-translated splits were made")[1]
    row = next(line for line in section.splitlines() if line.startswith("| rte | train |"))
    assert "6 rows, 1 unacceptable; 1 batch sent back |" in row
    # a dataset built from sources that were not translated has no such section and no such tag
    from nlue.data.access import sample_repo

    sample_card = (sample_repo("nlue") / "README.md").read_text(encoding="utf-8")
    assert "- machine-translated" not in sample_card.split("---")[1] and "How the machine-translated" not in sample_card


def test_translation_provenance_is_none_for_other_files_and_survives_a_moved_file(tmp_path: Path) -> None:
    from nlue.data.translation_provenance import translation_provenance

    plain = tmp_path / "rte" / "train.jsonl"
    plain.parent.mkdir()
    plain.write_text('{"sentence1": "क", "sentence2": "ख", "label": "entailment"}\n', encoding="utf-8")
    assert translation_provenance(plain) is None
    moved = tmp_path / "rte" / "train.translated.jsonl"
    moved.write_text(json.dumps({"sentence1": "क", "provenance": {"model": "m", "prompt_version": "v"}}) + "\n")
    assert translation_provenance(moved) == {"file": moved.name, "model": "m", "prompt_version": "v",
                                             "run_report": False}  # fmt: skip
    broken = tmp_path / "_translate" / "rte-train" / "report.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json")
    with pytest.raises(NlueError, match=r"report\.json: not valid JSON"):
        translation_provenance(moved)
