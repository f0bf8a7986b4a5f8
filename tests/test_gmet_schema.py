"""GMET rows as releases may give them: no answers, categories by number or by a map."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from nlue.cli import main
from nlue.data.build import build_repo
from nlue.data.mapping import FieldMapping, parse_category_map
from nlue.data.report import BuildOptions, TaskSources
from nlue.data.rows import RowConverter
from nlue.errors import RowProblem
from nlue.registry.tasks import GMET_THEMES, TASKS

SENTENCES = ["आकाश [MASK] छ।", "हामी [MASK] खान्छौं।", "बिहान [MASK] उदायो।", "नदीमा [MASK] बग्छ।"]


def _options(**kwargs) -> BuildOptions:
    return BuildOptions(show_progress=False, **kwargs)


def _rejects(result) -> list[dict]:
    return [json.loads(line) for line in result.rejects_path.read_text(encoding="utf-8").splitlines()]


def test_rows_without_answers_build_and_load_back(tmp_path: Path, write_csv, write_jsonl) -> None:
    no_column = write_csv(tmp_path / "test.csv", ["sentence", "category"], [(SENTENCES[0], "Colors")])
    empty = write_jsonl(
        tmp_path / "test_more.jsonl",
        [
            {"sentence": SENTENCES[1], "category": "Food", "answers": []},
            {"sentence": SENTENCES[2], "category": "Sky", "answers": None},
            {"sentence": SENTENCES[3], "category": "River", "answers": ["पानी"]},
        ],
    )
    result = build_repo([TaskSources(TASKS["gmet"], {"test": [no_column, empty]})], tmp_path / "out", _options())
    assert result.rejects == 0
    ds = datasets.load_dataset(str(result.repo_dir), "gmet", split="test")
    assert ds["answers"] == [[], [], [], ["पानी"]]
    assert ds.features["answers"] == datasets.List(datasets.Value("string"))
    report = json.loads(result.report_path.read_text(encoding="utf-8"))
    assert report["configs"]["gmet"]["splits"]["test"]["without_answers"] == 3
    card = (result.repo_dir / "README.md").read_text(encoding="utf-8")
    assert "3 of the 4 items have no listed answers" in card


def test_empty_answer_cells_in_csv_mean_no_answers(tmp_path: Path, write_csv) -> None:
    src = write_csv(tmp_path / "test.csv", ["sentence", "category", "answers"], [(SENTENCES[0], "Colors", "")])
    result = build_repo([TaskSources(TASKS["gmet"], {"test": [src]})], tmp_path / "out", _options())
    assert datasets.load_dataset(str(result.repo_dir), "gmet", split="test")["answers"] == [[]]


def test_converter_answers_rules() -> None:
    converter = RowConverter(TASKS["gmet"])
    base = {"sentence": SENTENCES[0], "category": "Colors"}
    for missing in ({}, {"answers": None}, {"answers": []}, {"answers": ""}, {"answers": "[]"}):
        assert converter.convert("f.jsonl", 3, {**base, **missing})["answers"] == []
    problem = converter.convert("f.jsonl", 3, {**base, "answers": [" । "]})
    assert isinstance(problem, RowProblem) and problem.field == "answers" and "no word" in problem.reason
    converter.check_columns("f.csv", 1, ["sentence", "category"])  # answers is optional


@pytest.mark.parametrize(
    ("answers", "reason"),
    [
        (["पानी", None], "answer 2 of the list is null"),
        ('["पानी", null]', "answer 2 of the list is null"),
        ([None], "answer 1 of the list is null"),
        (["पानी", ["नदी"]], "answer 2 of the list: expected text"),
        (["पानी", True], "found a boolean"),
        ("[" * 5000, "do not parse"),  # nested past what json can read: a reject, not a RecursionError
    ],
)
def test_answers_that_are_no_words_are_rejected_not_stored(answers, reason: str) -> None:
    """Issue 22 item 5: a null in the list was stored as the answer "None"."""
    converter = RowConverter(TASKS["gmet"])
    problem = converter.convert("f.jsonl", 3, {"sentence": SENTENCES[0], "category": "Colors", "answers": answers})
    assert isinstance(problem, RowProblem) and problem.field == "answers" and reason in problem.reason, problem
    numbers = converter.convert(
        "f.jsonl", 4, {"sentence": SENTENCES[0], "category": "Colors", "answers": [2080, "२०८०"]}
    )
    assert numbers["answers"] == ["2080", "२०८०"]  # a number is its text, as in a text field


def test_category_by_number_follows_the_paper_order() -> None:
    order = [c for cats in GMET_THEMES.values() for c in cats]
    assert len(order) == 75
    converter = RowConverter(TASKS["gmet"])
    for raw, expected in ((1, order[0]), ("14", order[13]), (75.0, order[74]), (" 3 ", order[2])):
        row = converter.convert("f.jsonl", 1, {"sentence": SENTENCES[0], "category": raw})
        assert row["category"] == expected and row["theme"] in GMET_THEMES, raw


@pytest.mark.parametrize("raw", [0, 76, "Cars", "", None])
def test_unknown_category_is_rejected_with_what_was_expected(raw) -> None:
    problem = RowConverter(TASKS["gmet"]).convert("f.jsonl", 9, {"sentence": SENTENCES[0], "category": raw})
    assert isinstance(problem, RowProblem)
    assert (problem.file, problem.row, problem.field) == ("f.jsonl", 9, "category")
    assert "1-75" in problem.reason and "--category-map" in problem.reason


def test_category_map_pairs_and_files(tmp_path: Path) -> None:
    pairs = parse_category_map("परिवार=Family, अन्तरिक्ष=Space (sun, moon),खोला=24")
    assert pairs == {"परिवार": "Family", "अन्तरिक्ष": "Space (sun, moon)", "खोला": "24"}
    (tmp_path / "map.csv").write_text('source,category\nरङ,Colors\nसमुद्र,"Ocean/Sea"\n', encoding="utf-8")
    assert parse_category_map(str(tmp_path / "map.csv")) == {"रङ": "Colors", "समुद्र": "Ocean/Sea"}
    (tmp_path / "map.json").write_text(json.dumps({"रङ": "Colors", "7": "Family"}), encoding="utf-8")
    assert parse_category_map(str(tmp_path / "map.json")) == {"रङ": "Colors", "7": "Family"}
    converter = RowConverter(TASKS["gmet"], FieldMapping(categories=pairs))
    assert converter.convert("f", 1, {"sentence": SENTENCES[0], "category": "खोला"})["category"] == "River"
    assert converter.convert("f", 2, {"sentence": SENTENCES[0], "category": "अन्तरिक्ष"})["theme"] == "Broader World"
    with pytest.raises(ValueError, match=r"--category-map.*'Cars'.*75"):
        RowConverter(TASKS["gmet"], FieldMapping(categories={"गाडी": "Cars"}))
    with pytest.raises(ValueError, match="--category-map: expected SOURCE=CATEGORY"):
        parse_category_map("Family")


def test_category_map_through_the_command_line(tmp_path: Path, write_csv) -> None:
    src = write_csv(
        tmp_path / "test.csv",
        ["sentence", "category"],
        [(SENTENCES[0], "रङ"), (SENTENCES[1], "4"), (SENTENCES[2], "Sky"), (SENTENCES[3], "गाडी")],
    )
    out = tmp_path / "out"
    args = ["build", "--task", "gmet", "--test", str(src), "--category-map", "रङ=Colors", "--out", str(out), "--quiet"]
    assert main(args) == 0
    ds = datasets.load_dataset(str(out / "nlue"), "gmet", split="test")
    assert ds["category"] == ["Colors", "Food", "Sky"]
    rejects = [json.loads(x) for x in (out / "nlue.rejects.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["file"], r["row"], r["field"], r["value"]) for r in rejects] == [(str(src), 4, "category", "गाडी")]
    assert "expected" in rejects[0]["reason"]


def test_category_map_is_refused_for_other_configs(tmp_path: Path, write_csv, capsys) -> None:
    src = write_csv(tmp_path / "train.csv", ["text", "label"], [("राम्रो", 1)])
    code = main(["build", "--task", "sa", "--train", str(src), "--category-map", "a=Colors", "--out", str(tmp_path)])
    assert code == 2 and "--category-map applies to gmet" in capsys.readouterr().err


def test_card_says_which_gmet_fields_are_the_papers(sample_build) -> None:
    card = (sample_build.repo_dir / "README.md").read_text(encoding="utf-8")
    section = card.split("### `gmet`", 1)[1]
    assert "| field | from the paper | added by nlue |" in section
    for field in ("`sentence`", "`category`", "`theme`", "`answers`"):
        assert f"| {field} |" in section
