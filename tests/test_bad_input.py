"""Issues 22 and 29: source files a reader must refuse by name, and texts the builder must not store as given.

Each case ends with exit code 2 and a message naming file, row and field (never a traceback, a
codec message or raw control bytes on the terminal), or builds without the character at fault.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nlue.cli import main
from nlue.data import columnar_builder
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


# --- issue 29, item 14: source files that are not files, change while read, or never end a line ---


@pytest.mark.parametrize("engine", ["rows", "columnar"])
def test_source_truncated_at_a_line_end_while_read_is_refused(tmp_path: Path, monkeypatch, engine: str) -> None:
    """issue 29, item 14: a file cut short while it was read built with exit 0, rows lost, and the
    report gave the SHA-256 of the untruncated file. Now the change is found and the build refused."""
    from nlue.data import config_builder

    train = tmp_path / "train.csv"
    lines = [f"{SENTENCES[i % len(SENTENCES)]} {i} {'क' * 200},{i % 2}" for i in range(12_000)]
    train.write_text("text,label\n" + "\n".join(lines) + "\n", encoding="utf-8")
    cut = len(("text,label\n" + "\n".join(lines[:9_000]) + "\n").encode())  # a line end past the first batch
    decide = {"rows": config_builder.ConfigBuilder, "columnar": columnar_builder.ColumnarConfigBuilder}[engine]
    original = decide._decide

    def truncating_decide(self, *args, **kwargs):
        if train.stat().st_size > cut:
            os.truncate(train, cut)  # another program cuts the file while the build reads it
        return original(self, *args, **kwargs)

    monkeypatch.setattr(decide, "_decide", truncating_decide)
    options = BuildOptions(show_progress=False, engine=engine)
    with pytest.raises(SourceError, match=r"train\.csv, field '\(file\)': changed while being read \("):
        build_repo([TaskSources(TASKS["sa"], {"train": [train]})], tmp_path / "out", options)
    assert not (tmp_path / "out" / "nlue").exists()


def test_report_sha256_is_of_the_bytes_read(tmp_path: Path) -> None:
    train = tmp_path / "train.csv"
    train.write_text("text,label\n" + "\n".join(f"{SENTENCES[i]} {i},{i % 2}" for i in range(8)) + "\n")
    test = _jsonl(tmp_path, json.dumps({"text": "अर्को वाक्य", "label": 1}), name="test.jsonl")
    for engine in ("rows", "columnar"):
        options = BuildOptions(show_progress=False, engine=engine)
        result = build_repo([TaskSources(TASKS["sa"], {"train": [train], "test": [test]})], tmp_path / engine, options)
        report = json.loads(result.report_path.read_text(encoding="utf-8"))
        assert report["configs"]["sa"]["sources"] == [
            {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()} for path in (train, test)
        ]


def test_watched_source_refuses_a_file_that_changed_under_its_reader(tmp_path: Path) -> None:
    from nlue.data.source_file import WatchedSource

    path = tmp_path / "train.jsonl"
    path.write_text('{"text": "राम्रो छ", "label": 1}\n' * 200, encoding="utf-8")
    source = WatchedSource(path)
    with source.hashing() as handle:
        handle.read(100)
        with path.open("r+b") as writer:  # rewritten in place, same size
            writer.write(b" " * 10)
        handle.read()
    os.utime(path, ns=(source.before.mtime_ns, source.before.mtime_ns))  # even with the old time put back
    with pytest.raises(SourceError, match="changed while being read"):
        source.finish()


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_fifo_as_a_split_file_is_refused_not_waited_on(tmp_path: Path, capsys, suffix: str) -> None:
    """issue 29, item 14: a named pipe as a split file hung the build without a word."""
    fifo = tmp_path / f"train{suffix}"
    os.mkfifo(fifo)
    outcome: list[int] = []
    worker = threading.Thread(target=lambda: outcome.append(_build(tmp_path, fifo)), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # the old behaviour: blocked in open(); let it go before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the build waited on the named pipe")
    err = capsys.readouterr().err
    assert outcome == [2], err
    assert f"train{suffix}, field '(file)': is a named pipe (FIFO), not a regular file" in err
    with pytest.raises(SourceError, match="named pipe"):
        list(read_records(fifo))
    with pytest.raises(SourceError, match="named pipe"):
        list(read_batches(fifo, ["text", "label"]))


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_a_sparse_file_of_gigabytes_is_refused_after_its_first_line_limit(tmp_path: Path, capsys, suffix: str) -> None:
    """issue 29, item 14: a sparse 10 GB CSV took 21 GB of memory and ended in an internal MemoryError.

    A 2 GB file of NUL bytes (sparse: no disk used) is one line with no end; it is refused after the
    first 64 MiB are read, quickly and with memory bounded by the reader's chunks.
    """
    sparse = tmp_path / f"train{suffix}"
    with sparse.open("wb") as handle:
        handle.truncate(2 << 30)
    tracemalloc.start()
    started = time.monotonic()
    try:
        code = _build(tmp_path, sparse)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"train{suffix}, field '(file)': line 1 is longer than 64 MiB" in err, err
    assert "internal error" not in err and "MemoryError" not in err
    assert elapsed < 10 and peak < 64 << 20, (elapsed, peak)
    for read in (lambda: list(read_records(sparse)), lambda: list(read_batches(sparse, ["text", "label"]))):
        with pytest.raises(SourceError, match="line 1 is longer than 64 MiB"):
            read()


def test_a_large_json_array_is_refused_by_its_size(tmp_path: Path) -> None:
    sparse = tmp_path / "train.json"
    with sparse.open("wb") as handle:
        handle.truncate(1 << 30)
    with pytest.raises(SourceError, match=r"a \.json source is parsed whole.*save it as JSON Lines"):
        list(read_records(sparse))


def test_a_field_past_the_csv_limit_is_named_not_an_internal_error(tmp_path: Path, monkeypatch) -> None:
    import csv

    path = tmp_path / "train.csv"
    path.write_text('text,label\nठीक,1\n"' + "लामो\n" * 400 + '",0\n', encoding="utf-8")
    limit = csv.field_size_limit()
    csv.field_size_limit(1000)  # the module-wide limit, lowered for this file
    try:
        with pytest.raises(SourceError, match=r"row 2, field '\(row\)': not readable as CSV: field larger than"):
            list(read_records(path))
    finally:
        csv.field_size_limit(limit)


def test_a_header_of_100000_columns_gives_a_short_message(tmp_path: Path, capsys) -> None:
    """issue 29, item 14: a header of 100,000 columns gave a 789 KB error line."""
    train = tmp_path / "train.csv"
    names = [f"column_{i}" for i in range(100_000)]
    train.write_text(",".join(names) + "\n" + ",".join("x" * len(names)) + "\n", encoding="utf-8")
    err = _fails_with(tmp_path, capsys, train, "missing column", "the file has column_0, column_1, column_2")
    assert "… and 99,988 more (100,000 columns)" in err
    assert len(err) < 2000, len(err)


@pytest.mark.parametrize("dataset", ["./missing", "build/not/there", "~/no-such-nlue-folder"])
@pytest.mark.parametrize("command", [["gmet", "--model", "bert-tiny"], ["baseline", "--tasks", "sa"]])
def test_a_dataset_path_that_does_not_exist_is_bad_input_not_an_unreachable_hub(
    dataset: str, command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """`--dataset ./missing` was looked for on the Hub and reported as a Hub that could not be reached (exit 1):
    a Hub id is `name` or `owner/name`, so it can only be a folder, and a missing folder is bad input."""
    monkeypatch.chdir(tmp_path)
    assert main([*command, "--dataset", dataset, "--results-dir", str(tmp_path / "r")]) == 2
    assert f"--dataset {dataset}: no such folder" in capsys.readouterr().err
