"""Row validation: every rule gives a problem naming file, row and field."""

from __future__ import annotations

import pytest

from nlue.data.mapping import FieldMapping, parse_pairs
from nlue.data.rows import Dropped, RowConverter
from nlue.errors import RowProblem, SourceError
from nlue.registry.tasks import TASKS


def convert(task: str, record: dict, mapping: FieldMapping | None = None):
    return RowConverter(TASKS[task], mapping).convert("src.csv", 7, record)


def assert_problem(result, field: str, reason: str) -> None:
    assert isinstance(result, RowProblem), result
    assert (result.file, result.row, result.field) == ("src.csv", 7, field)
    assert reason in result.reason
    assert "src.csv, row 7, field" in result.describe()


def test_valid_row_is_normalised() -> None:
    row = convert("sa", {"text": "  राम्रो\u200b  छ ", "label": "1"})
    assert row == {"text": "राम्रो छ", "label": 1}


def test_label_by_name_or_id() -> None:
    assert convert("mnli", {"premise": "क", "hypothesis": "ख", "label": "contradiction"})["label"] == 2
    assert convert("mnli", {"premise": "क", "hypothesis": "ख", "label": 1.0})["label"] == 1


def test_missing_value_and_empty_text() -> None:
    assert_problem(convert("sa", {"text": None, "label": 1}), "text", "missing value")
    assert_problem(convert("sa", {"text": " \u200b ", "label": 1}), "text", "empty text")
    assert_problem(convert("sa", {"text": "ठीक", "label": ""}), "label", "missing label")


def test_unknown_label_lists_the_valid_ones() -> None:
    result = convert("sa", {"text": "ठीक छ", "label": "3"})
    assert_problem(result, "label", "unknown label; expected one of 0=negative, 1=positive")


def test_stsb_score_range_and_type() -> None:
    base = {"sentence1": "क", "sentence2": "ख"}
    assert convert("stsb", {**base, "label": "3.8"})["label"] == 3.8
    assert_problem(convert("stsb", {**base, "label": "5.5"}), "label", "outside 0-5")
    assert_problem(convert("stsb", {**base, "label": "nan"}), "label", "outside 0-5")
    assert_problem(convert("stsb", {**base, "label": "high"}), "label", "expected a number")


def test_wg_answer_and_blank() -> None:
    base = {"option1": "राम", "option2": "श्याम"}
    assert convert("wg", {**base, "sentence": "_ ले खायो।", "answer": "2"})["answer"] == 1
    assert convert("wg", {**base, "sentence": "_ ले खायो।", "answer": 1})["answer"] == 0
    assert_problem(convert("wg", {**base, "sentence": "_ ले खायो।", "answer": 0}), "answer", "expected answer 1 or 2")
    assert_problem(convert("wg", {**base, "sentence": "राम र श्याम।", "answer": 1}), "sentence", "exactly one blank")


def test_gmet_rules() -> None:
    good = {"sentence": "आकाश [MASK] छ।", "category": "Colors", "answers": ["निलो", " नीलो। "]}
    row = convert("gmet", good)
    assert row["theme"] == "Concepts & Knowledge" and row["answers"] == ["निलो", "नीलो"]
    assert convert("gmet", {**good, "answers": "निलो|नीलो"})["answers"] == ["निलो", "नीलो"]
    assert convert("gmet", {**good, "answers": '["निलो"]'})["answers"] == ["निलो"]
    assert_problem(convert("gmet", {**good, "sentence": "आकाश निलो छ।"}), "sentence", "exactly one [MASK], found 0")
    assert_problem(convert("gmet", {**good, "sentence": "[MASK] [MASK]"}), "sentence", "found 2")
    assert_problem(convert("gmet", {**good, "category": "Cars"}), "category", "unknown GMET category; expected")
    assert_problem(convert("gmet", {**good, "theme": "Nepal Specific"}), "theme", "belongs to theme")
    assert convert("gmet", {**good, "answers": []})["answers"] == []  # scored by human judging only
    assert_problem(convert("gmet", {**good, "answers": " । "}), "answers", "hold no word")


def test_column_and_label_maps() -> None:
    mapping = FieldMapping(columns={"text": "review", "label": "stars"}, labels={"-1": "negative", "0": "drop"})
    converter = RowConverter(TASKS["sa"], mapping)
    assert converter.convert("f", 1, {"review": "खराब", "stars": -1}) == {"text": "खराब", "label": 0}
    assert converter.convert("f", 2, {"review": "ठिकै", "stars": "0"}) == Dropped("0")
    assert converter.convert("f", 3, {"review": "असल", "stars": "positive"})["label"] == 1


def test_missing_column_is_a_source_error() -> None:
    converter = RowConverter(TASKS["qnli"])
    with pytest.raises(SourceError, match=r"data.csv, row 1, field 'sentence': missing column.*question, sentence"):
        converter.check_columns("data.csv", 1, ["question", "label"])


def test_column_map_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="--column-map names headline"):
        RowConverter(TASKS["sa"], FieldMapping(columns={"headline": "h"}))


def test_parse_pairs() -> None:
    assert parse_pairs("-1=negative, 1=positive,0=drop", "--label-map") == {
        "-1": "negative",
        "1": "positive",
        "0": "drop",
    }
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        parse_pairs("text", "--column-map")


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (["नमस्ते"], "found a list"),
        (("नमस्ते",), "found a list"),
        ({"ne": "नमस्ते"}, "found an object"),
        ([], "found a list"),
        (True, "found a boolean"),
        (float("nan"), "found NaN"),
        (float("inf"), "found an infinite number"),
        (b"abc", "found bytes"),
    ],
)
def test_text_field_refuses_non_text(value, found: str) -> None:
    """A list or object in a text field used to be stored as its Python repr ("['नमस्ते']")."""
    result = convert("sa", {"text": value, "label": 1})
    assert_problem(result, "text", "expected text")
    assert found in result.reason


def test_text_field_takes_numbers_as_their_text() -> None:
    # A query or an answer option can be a number (a model number, a year); JSON and Parquet
    # writers then type the column as numbers.
    row = convert("qadsm", {"query": 2080, "ad_title": "क", "ad_description": "ख", "relevance_label": 1})
    assert row["query"] == "2080"
    wg = convert("wg", {"sentence": "_ साल राम्रो थियो।", "option1": 2079, "option2": 1.5, "answer": 1})
    assert (wg["option1"], wg["option2"]) == ("2079", "1.5")
    assert convert("sa", {"text": 10**30, "label": 1})["text"] == "1" + "0" * 30
    assert convert("sa", {"text": 0.1, "label": 1})["text"] == "0.1"
    assert convert("sa", {"text": -3.0, "label": 1})["text"] == "-3.0"


def test_non_text_problem_shows_what_was_found() -> None:
    result = convert("mnli", {"premise": "क", "hypothesis": {"text": "ख", "lang": "ne"}, "label": 0})
    assert_problem(result, "hypothesis", "expected text")
    assert result.value == '{"text": "ख", "lang": "ne"}'
