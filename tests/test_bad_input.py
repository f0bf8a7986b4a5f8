"""Issue 22: source files a reader must refuse by name, and texts the builder must not store as given.

Each case ends with exit code 2 and a message naming file, row and field (never a traceback, a
codec message or raw control bytes on the terminal), or builds without the character at fault.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nlue.cli import main
from nlue.data.arrow_sources import read_batches
from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.data.sources import jsonl_rows, read_records
from nlue.errors import RowProblem, SourceError
from nlue.registry.tasks import TASKS

from .conftest import SENTENCES


def _build(tmp_path: Path, train: Path, *extra: str) -> int:
    return main(["build", "--task", "sa", "--train", str(train), *extra, "--out", str(tmp_path / "out"), "--quiet"])


def _fails_with(tmp_path: Path, capsys, train: Path, *expected: str) -> str:
    code = _build(tmp_path, train)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    for text in expected:
        assert text in err, err
    assert not (tmp_path / "out" / "nlue").exists()
    return err


def _good_lines(count: int = 6) -> list[str]:
    return [json.dumps({"text": f"{SENTENCES[i]} {i}", "label": i % 2}, ensure_ascii=False) for i in range(count)]


def _jsonl(tmp_path: Path, bad: str, name: str = "train.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([*_good_lines(3), bad, *_good_lines(3)]) + "\n", encoding="utf-8")
    return path


# --- item 2: deep nesting ---------------------------------------------------------------------


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_text_field_is_refused_by_row_and_field(tmp_path: Path, capsys, depth: int) -> None:
    train = _jsonl(tmp_path, '{"label": 1, "text": ' + "[" * depth + "]" * depth + "}")
    _fails_with(tmp_path, capsys, train, "train.jsonl, row 4, field 'text'", "nested")


def test_deeply_nested_json_array_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "train.json"
    path.write_text('[{"text": ' + "[" * 100_000 + "]" * 100_000 + ', "label": 1}]', encoding="utf-8")
    with pytest.raises(SourceError, match="nested too deep"):
        list(read_records(path))


# --- item 6: a key named twice ----------------------------------------------------------------


def test_json_line_naming_a_key_twice_is_refused(tmp_path: Path, capsys) -> None:
    train = _jsonl(tmp_path, '{"text": "राम्रो छ", "label": "positive", "label": "negative"}')
    _fails_with(tmp_path, capsys, train, "train.jsonl, row 4, field 'label'", "appears twice")


def test_repeated_key_inside_a_nested_object_names_its_field(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"question": "q", "options": {"A": "x", "A": "y", "B": "z"}}\n', encoding="utf-8")
    [(_, problem)] = list(jsonl_rows(path))
    assert isinstance(problem, RowProblem) and problem.field == "options" and "'A' twice" in problem.reason


def test_json_array_row_naming_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "train.json"
    path.write_text('[{"text": "a", "label": 1}, {"text": "b", "text": "c", "label": 0}]', encoding="utf-8")
    with pytest.raises(SourceError, match=r"row 2, field 'text'.*appears twice"):
        list(read_records(path))


def test_csv_header_naming_a_column_twice_is_refused(tmp_path: Path, capsys) -> None:
    train = tmp_path / "train.csv"
    train.write_text("text,label,text\nराम्रो,1,नराम्रो\n", encoding="utf-8")
    _fails_with(tmp_path, capsys, train, "train.csv, field '(header)'", "'text' appears twice (columns 1 and 3)")


def test_spreadsheet_trailing_empty_columns_are_not_a_repeated_name(tmp_path: Path) -> None:
    train = tmp_path / "train.csv"
    train.write_text("text,label,,\nराम्रो,1,,\n", encoding="utf-8")
    assert [record["text"] for _, record in read_records(train)] == ["राम्रो"]


# --- item 11: a lone surrogate ----------------------------------------------------------------


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\udc80"])
def test_lone_surrogate_escape_is_refused_by_row_and_field(tmp_path: Path, capsys, escape: str) -> None:
    train = _jsonl(tmp_path, '{"text": "ok ' + escape + '", "label": 1}')
    _fails_with(tmp_path, capsys, train, "train.jsonl, row 4, field 'text'", "lone surrogate", "at character 3")


def test_surrogate_pair_escape_is_one_character(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, '{"text": "राम्रो \\ud83d\\ude00", "label": 1}')
    texts = [record["text"] for _, record in read_records(path)]
    assert "राम्रो 😀" in texts


# --- item 13: UTF-16 and UTF-32 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "named"),
    [
        ("utf-16-le", "UTF-16 (little-endian, no byte-order mark)"),
        ("utf-16-be", "UTF-16 (big-endian, no byte-order mark)"),
        ("utf-16", "UTF-16 (little-endian), with a byte-order mark"),
        ("utf-32", "UTF-32 (little-endian), with a byte-order mark"),
    ],
)
@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_utf16_source_is_named_as_such(tmp_path: Path, capsys, encoding: str, named: str, suffix: str) -> None:
    text = {
        ".csv": "text,label\nराम्रो,1\nनराम्रो,0\n",
        ".tsv": "text\tlabel\nराम्रो\t1\nनराम्रो\t0\n",
        ".jsonl": '{"text": "राम्रो", "label": 1}\n',
    }[suffix]
    train = tmp_path / f"train{suffix}"
    train.write_bytes(text.encode(encoding))
    err = _fails_with(tmp_path, capsys, train, f"train{suffix}", f"looks like {named} text", "nlue reads UTF-8")
    assert "\x00" not in err and "missing column" not in err


def test_nul_in_a_column_name_is_shown_escaped(tmp_path: Path, capsys) -> None:
    train = tmp_path / "train.csv"
    train.write_bytes(b"te\x00xt,label\n\xe0\xa4\x95,1\n")
    err = _fails_with(tmp_path, capsys, train, "missing column", "te\\x00xt")
    assert "\x00" not in err


# --- items 3 and 7: what normalisation removes, at the builder ----------------------------------


def test_controls_and_bidirectional_marks_are_not_stored(tmp_path: Path, write_jsonl) -> None:
    rows = [
        {"text": "क\x00ख", "label": 1},
        {"text": "राम्रो \u202eछ", "label": 0},
        {"text": "\u200f\u200e", "label": 1},  # bidirectional marks alone: empty, rejected
        {"text": "\u2066\u2069", "label": 0},
        *({"text": f"{SENTENCES[i]} {i}", "label": i % 2} for i in range(6)),
    ]
    train = write_jsonl(tmp_path / "train.jsonl", rows)
    nul = tmp_path / "nul.jsonl"
    nul.write_text('{"text": "ग\\u0000घ", "label": 1}\n', encoding="utf-8")  # NUL as a JSON escape
    for engine in ("rows", "columnar"):
        out = tmp_path / engine
        options = BuildOptions(show_progress=False, engine=engine)
        result = build_repo([TaskSources(TASKS["sa"], {"train": [train], "test": [nul]})], out, options)
        texts = [
            t for f in sorted((out / "nlue" / "sa").glob("*.parquet")) for t in pq.read_table(f)["text"].to_pylist()
        ]
        assert "कख" in texts and "राम्रो छ" in texts and "गघ" in texts, engine
        assert not any(c in text for text in texts for c in "\x00\u202e\u200f\u200e\u2066\u2069"), engine
        rejects = [json.loads(line) for line in result.rejects_path.read_text(encoding="utf-8").splitlines()]
        assert [(r["row"], r["field"], r["reason"]) for r in rejects] == [
            (3, "text", "empty text after normalisation"),
            (4, "text", "empty text after normalisation"),
        ], engine


# --- found by the property tests: a damaged Parquet page ------------------------------------------


def test_damaged_parquet_page_is_named_not_an_os_error(tmp_path: Path) -> None:
    path = tmp_path / "train.parquet"
    pq.write_table(pa.table({"text": [None, None, None], "label": [None, None, None]}), path)
    data = path.read_bytes()
    path.write_bytes(data[:4] + data[5:])  # one byte cut from the first page: the footer still reads
    for read in (lambda: list(read_records(path)), lambda: list(read_batches(path, ["text", "label"]))):
        with pytest.raises(SourceError, match=r"train\.parquet.*not a readable Parquet file after 0 rows"):
            read()


def test_parquet_string_page_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "train.parquet"
    pq.write_table(pa.table({"text": ["कखग" * 40], "label": [1]}), path, compression="none")
    data = path.read_bytes()
    at = data.index("कखग".encode())
    path.write_bytes(data[:at] + b"\xff" + data[at + 1 :])  # one byte of the text's page, no longer UTF-8
    for read in (lambda: list(read_records(path)), lambda: list(read_batches(path, ["text", "label"]))):
        with pytest.raises(SourceError, match=r"train\.parquet, field 'text': not a readable Parquet file"):
            read()


def test_csv_quote_inside_a_multibyte_character_is_bad_utf8_for_both_readers(tmp_path: Path) -> None:
    """Arrow checks each cell after its quotes are gone; ``\\xf3"\\xaf\\x80\\x9b`` is then valid, the file is not."""
    path = tmp_path / "train.csv"
    path.write_bytes(b'text,label\n"ok",1\n"/\xf3"\xaf\x80\x9b"",0\n')
    for read in (lambda: list(read_records(path)), lambda: list(read_batches(path, ["text", "label"]))):
        with pytest.raises(SourceError, match=r"row 2, field 'text': not valid UTF-8 \(byte 0xf3"):
            read()


# --- issue 29, item 13: a label map that cannot be meant -------------------------------------------


def _csv_train(tmp_path: Path) -> Path:
    train = tmp_path / "train.csv"
    rows = [f"{SENTENCES[i]} {i},{1 if i % 2 else -1}" for i in range(8)]
    train.write_text("text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return train


def test_label_map_source_mapped_twice_is_refused(tmp_path: Path, capsys) -> None:
    """issue 29, item 13: ``1=positive,1=negative`` stored every positive item as negative, exit 0."""
    train = _csv_train(tmp_path)
    code = _build(tmp_path, train, "--label-map=1=positive,1=negative,-1=negative")
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--label-map: '1' is mapped twice, to 'positive' and to 'negative'" in err
    assert not (tmp_path / "out" / "nlue").exists()


def test_label_map_repeating_the_same_pair_is_fine(tmp_path: Path) -> None:
    train = _csv_train(tmp_path)
    assert _build(tmp_path, train, "--label-map=1=positive,1=positive,-1=negative") == 0


def test_label_map_target_that_is_no_label_is_refused_before_reading(tmp_path: Path, capsys) -> None:
    """issue 29, item 13: a target that is not a label of the task is refused up front, naming the labels.

    The train file does not exist: the label map is refused before any file is opened.
    """
    code = _build(tmp_path, tmp_path / "missing.csv", "--label-map=1=positive,-1=neutral")
    err = capsys.readouterr().err
    assert code == 2, err
    assert "'neutral' is not a label of task 'sa'; its labels are 0=negative, 1=positive" in err, err
    assert "not found" not in err


@pytest.mark.parametrize(("task", "target"), [("wg", "2"), ("wg", "option1"), ("stsb", "4.5"), ("sa", "1")])
def test_label_map_targets_of_each_form_are_accepted(task: str, target: str) -> None:
    from nlue.data.mapping import FieldMapping
    from nlue.data.rows import check_mapping

    check_mapping(TASKS[task], FieldMapping(labels={"x": target, "y": "drop"}))


def test_label_map_score_out_of_range_is_refused() -> None:
    from nlue.data.mapping import FieldMapping
    from nlue.data.rows import check_mapping
    from nlue.errors import NlueError

    with pytest.raises(NlueError, match=r"'7' is not a label of task 'stsb'; score outside 0-5"):
        check_mapping(TASKS["stsb"], FieldMapping(labels={"high": "7"}))
