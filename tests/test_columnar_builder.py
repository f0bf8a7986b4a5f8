"""The columnar builder against the row path: the same files, byte for byte.

The row path (``BuildOptions(engine="rows")``) is the builder as it was before the
columnar one, kept as the reference: every comparison builds the same sources with both
and requires identical Parquet shards, card, report and rejects file (or the same error).
A reference kept in the code rather than checksums of an earlier build: checksums would
pin the pyarrow version that wrote them, and a comparison shows the first file that
differs. Spies check that the columnar parts really ran (Arrow's CSV reader, the
columnar config builder), so that a silent fallback to the row path cannot pass.
"""

from __future__ import annotations

import csv
import json
import math
import random
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nlue.data import arrow_sources, columnar, columnar_builder
from nlue.data.build import build_repo
from nlue.data.discover import task_sources_from_folder
from nlue.data.fingerprints import SEPARATOR
from nlue.data.mapping import FieldMapping
from nlue.data.report import BuildOptions, TaskSources
from nlue.data.sample import sample_data_dir
from nlue.data.sources import read_records
from nlue.data.text_keys import LONG_STRING_BYTES, hash_array, loose_keys
from nlue.errors import SourceError
from nlue.registry.tasks import TASK_NAMES, TASKS, get_task
from nlue.text.normalize import _loose_tables, fold_rule, loose_texts, normalize_text

ENGINES = ("rows", "columnar")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _build_both(tmp_path: Path, sources: list[TaskSources], **options: Any) -> dict[str, Any]:
    """Build ``sources`` with each engine: every output file's bytes, or the error raised."""
    outcomes: dict[str, Any] = {}
    for engine in ENGINES:
        out = tmp_path / engine
        try:
            build_repo(sources, out, BuildOptions(show_progress=False, engine=engine, **options))
        except SourceError as error:
            outcomes[engine] = ("error", str(error))
            continue
        outcomes[engine] = _files(out)
    return outcomes


def _assert_same(outcomes: dict[str, Any]) -> None:
    rows, columnar_out = outcomes["rows"], outcomes["columnar"]
    if isinstance(rows, tuple) or isinstance(columnar_out, tuple):
        assert rows == columnar_out
        return
    assert sorted(rows) == sorted(columnar_out)
    differing = [name for name in rows if rows[name] != columnar_out[name]]
    assert not differing, f"differ between the row path and the columnar builder: {', '.join(differing)}"


@pytest.fixture
def columnar_spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of what the columnar builder ran: configs built, CSV files Arrow read, batches converted."""
    counts = {"configs": 0, "arrow_csv": 0, "batches": 0}
    build, open_csv, convert = (
        columnar_builder.ColumnarConfigBuilder.build,
        arrow_sources._open_csv,
        columnar.ColumnarConverter.convert,
    )

    def counting_build(self: Any) -> Any:
        counts["configs"] += 1
        return build(self)

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        counts["arrow_csv"] += 1
        return open_csv(*args, **kwargs)

    def counting_convert(self: Any, path: str, batch: Any) -> Any:
        counts["batches"] += 1
        return convert(self, path, batch)

    monkeypatch.setattr(columnar_builder.ColumnarConfigBuilder, "build", counting_build)
    monkeypatch.setattr(arrow_sources, "_open_csv", counting_open)
    monkeypatch.setattr(columnar.ColumnarConverter, "convert", counting_convert)
    return counts


# --- the embedded sample ----------------------------------------------------------------


def test_sample_builds_are_byte_identical(tmp_path: Path, columnar_spy: dict[str, int]) -> None:
    nlue = task_sources_from_folder(sample_data_dir(), list(TASK_NAMES))
    outcomes = _build_both(tmp_path / "nlue", nlue, is_sample=True, license="apache-2.0")
    _assert_same(outcomes)
    assert all(f"nlue/{name}/test-00000-of-00001.parquet" in outcomes["rows"] for name in TASK_NAMES)
    assert columnar_spy["configs"] == sum(columnar.supports_columnar(s.task) for s in nlue) >= 11
    exams = task_sources_from_folder(sample_data_dir(), ["mcq_ne", "mcq_ur"])
    outcomes = _build_both(tmp_path / "mcq", exams, name="mcq", is_sample=True, license="apache-2.0")
    _assert_same(outcomes)
    assert "mcq/mcq_ne/test-00000-of-00001.parquet" in outcomes["rows"]


# --- a generated source with every kind of bad row ---------------------------------------

_CONSONANTS = "कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह"
_SIGNS = ("", "", "ा", "ि", "ी", "ु", "े", "ो", "्")
_INVISIBLE = ("\u200b", "\u2060", "\ufeff", "\u00ad")


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_SIGNS) for _ in range(rng.randint(1, 3)))


def _sentence(rng: random.Random) -> str:
    text = " ".join(_word(rng) for _ in range(rng.randint(2, 9)))
    return text + rng.choice(("।", "", "", "?"))


def _messy_text(rng: random.Random, text: str, typed: bool) -> Any:
    """``text``, most often clean; else untidy in one of the ways the normaliser or the rules see."""
    roll = rng.random()
    if roll < 0.55:
        return text
    kind = rng.randrange(24)
    cut = rng.randrange(len(text) + 1)
    if kind == 0:
        return "  " + text.replace(" ", "   ", 1) + " \t"
    if kind == 1:
        return text + rng.choice((" |", "|", " ||", "||", "| |", " | |", "|||"))
    if kind == 2:
        return rng.choice(("a||", "| " + text, text + " ।|", "Ram | " + text))
    if kind == 3:
        return text[:cut] + rng.choice(_INVISIBLE) + text[cut:]
    if kind == 4:
        return text.replace("क", "क\u200dष", 1) + rng.choice(("\u200c", " \u200d", "\u200d\u200d"))
    if kind == 5:
        return text + rng.choice(("\ufe0f", " \ufe0f", "❤\ufe0f", "1\ufe0f\u20e3", "👩\u200d🌾", "#\ufe0f"))
    if kind == 6:
        return text.replace("न", "न\u093c", 1) + " \u0958"  # NFC composes one and decomposes the other
    if kind == 7:
        return text.replace(" ", "\u00a0", 2).replace(" ", "\n", 1)
    if kind == 8:
        return rng.choice(("", " ", "\u200b", "\t \n"))
    if kind == 9:
        return text.upper() + " Hello, World!" if rng.random() < 0.5 else text + " १२३ 123"
    if kind == 10:
        return text + " ß Straße ﬁ"  # casefolds to more than one character
    if kind == 11:
        return text + " " + rng.choice(("ক", "ไทย", "中文", "ڈ", "\u0900", "\u097f", "\u0951"))
    if kind == 12:
        return text + "\x1f" + text
    if kind == 13:
        return text * rng.randint(40, 80)  # past LONG_STRING_BYTES
    if typed and kind in (14, 15, 16, 17, 18, 19):
        return rng.choice((2080, -7, 2.5, 1e21, math.nan, math.inf, True, False, ["a"], {"k": 1}, [], None))
    if kind == 20:
        return text + "\ufe0e"
    if kind == 21:
        return rng.choice((text + " ", " " + text, text.replace(" ", "  ", 1), " " + text + " |"))
    return text


def _label(rng: random.Random, names: tuple[str, ...], typed: bool) -> Any:
    roll = rng.random()
    if roll < 0.8:
        label = rng.randrange(len(names))
        return label if typed and rng.random() < 0.5 else rng.choice((str(label), names[label], f" {names[label]} "))
    junk: list[Any] = ["", " ", "unknown", "-1", str(len(names)), "1.0", "drop_me"]
    if typed:
        junk += [None, 1.0, True, 0.0, [1], math.nan, 7]
    return rng.choice(junk)


def _score(rng: random.Random, typed: bool) -> Any:
    roll = rng.random()
    if roll < 0.8:
        value = round(rng.uniform(0, 5), rng.choice((0, 1, 2)))
        return value if typed else str(value)
    junk: list[Any] = [-0.0, 0.0, 5.0, 5.1, -0.1, "abc", "", "3.2", " 4 ", "nan"]
    if typed:
        junk += [math.nan, math.inf, None, True, 4, "2"]
    return rng.choice(junk)


def _records(rng: random.Random, task_name: str, count: int, typed: bool, pool: list[dict]) -> list[dict]:
    """Rows of a task: new items, and repeats of ``pool`` (earlier rows) with the same or another label."""
    task = get_task(task_name)
    out: list[dict] = []
    for _ in range(count):
        if pool and rng.random() < 0.06:
            row = dict(rng.choice(pool))
            if rng.random() < 0.4:  # a conflicting repeat, or a near-duplicate of the inputs
                if task.label_field:
                    row[task.label_field] = (
                        _score(rng, typed) if task.score_range else _label(rng, task.label_names, typed)
                    )
                field = rng.choice(task.input_fields)
                if isinstance(row.get(field), str) and rng.random() < 0.5:
                    row[field] = row[field].replace("।", "") + "!"
            out.append(row)
            continue
        row: dict[str, Any] = {}
        for field in task.input_fields:
            text = _sentence(rng)
            if task.input_spec.blank is not None and field == task.input_spec.blank_field:
                text = text.replace(" ", " _ ", rng.choice((1, 1, 1, 1, 2, 0)))
            if pool and len(task.input_fields) >= 2 and rng.random() < 0.1:
                shared = rng.choice(pool).get(field)  # a field shared with another row
                text = shared if isinstance(shared, str) else text
            row[field] = _messy_text(rng, text, typed)
        if task.score_range:
            row[task.label_field] = _score(rng, typed)
        else:
            row[task.label_field] = _label(rng, task.label_names, typed)
        if rng.random() < 0.01:
            del row[rng.choice(list(row))]  # a missing field
        out.append(row)
    pool.extend(out[-200:])
    return out


def _write(path: Path, records: list[dict], columns: list[str]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    elif path.suffix in (".csv", ".tsv"):
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter="," if path.suffix == ".csv" else "\t", lineterminator="\r\n")
            writer.writerow(columns)
            writer.writerows([["" if r.get(c) is None else r.get(c) for c in columns] for r in records])
    else:
        _write_parquet(path, records, columns)
    return path


def _write_parquet(path: Path, records: list[dict], columns: list[str]) -> None:
    """Typed columns: text as dictionary-encoded or large strings; a train split's scores as float64."""
    arrays = []
    for i, name in enumerate(columns):
        values = [r.get(name) for r in records]
        if name == "label" and path.stem == "train":  # NaN, infinities, -0.0 and nulls among the scores
            numbers = [float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None for v in values]
            arrays.append(pa.array(numbers, type=pa.float64()))
            continue
        texts = [None if v is None else v if isinstance(v, str) else json.dumps(v) for v in values]
        array = pa.array(texts, type=pa.large_string())
        arrays.append(array.cast(pa.string()).dictionary_encode() if i % 2 else array)
    pq.write_table(pa.table(arrays, names=columns), path)


def _generated_sources(root: Path, seed: int = 7) -> list[TaskSources]:
    """~50,000 rows over five configs, four formats and all three splits."""
    rng = random.Random(seed)
    layout = {
        # config: (format, rows per split; None: carve validation from train)
        "sa": (".csv", {"train": 17_400, "test": 3_000}),
        "mnli": (".jsonl", {"train": 9_000, "validation": 1_500, "test": 1_500}),
        "stsb": (".parquet", {"train": 8_000, "test": 1_000}),
        "wg": (".tsv", {"train": 4_000, "validation": 800, "test": 800}),
        "qadsm": (".csv", {"train": 2_500, "test": 600}),
    }
    sources = []
    for name, (suffix, splits) in layout.items():
        task = get_task(name)
        columns = [*task.input_fields, str(task.label_field)]
        pool: list[dict] = []
        files: dict[str, list[Path]] = {}
        folder = root / name
        folder.mkdir(parents=True)
        for split, count in splits.items():
            records = _records(rng, name, count, suffix in (".jsonl", ".parquet"), pool)
            files[split] = [_write(folder / f"{split}{suffix}", records, columns)]
        sources.append(TaskSources(task, files))
    return sources


def test_generated_source_is_byte_identical(tmp_path: Path, columnar_spy: dict[str, int]) -> None:
    sources = _generated_sources(tmp_path / "src")
    assert sum(len(read_records_list(p)) for s in sources for ps in s.files.values() for p in ps) >= 50_000
    outcomes = _build_both(tmp_path / "out", sources)
    _assert_same(outcomes)
    built = outcomes["columnar"]
    rejects = built["nlue.rejects.jsonl"].decode().splitlines()
    reasons = {json.loads(line)["reason"].split(";")[0] for line in rejects}
    # Every kind of reject occurred (so the comparison covered them).
    for expected in ("missing value", "empty text after normalisation", "missing label", "unknown label",
                     "score outside 0-5", "expected exactly one blank '_', found 2",
                     "same input as other rows with another label (",
                     "same input as other rows with another label, and no label has a majority"):  # fmt: skip
        assert any(reason.startswith(expected) for reason in reasons), expected
    assert any("found a list" in line for line in rejects) and any("found NaN" in line for line in rejects)
    report = json.loads(built["nlue.report.json"])["configs"]
    assert report["sa"]["splits"]["test"]["overlap_with_train"] > 0
    assert report["sa"]["splits"]["test"]["near_duplicates_of_train"] > 0
    assert report["mnli"]["splits"]["test"]["field_overlap_with_train"]["premise"] > 0
    # Every CSV and TSV file (sa, wg, qadsm) once, and again where its split gave an input several labels
    # (the majority rule reads such a split a second time).
    reread = sum(
        path.suffix in (".csv", ".tsv")
        for source in sources
        for split, paths in source.files.items()
        if "label_conflicts" in report[source.task.name]["splits"].get(split, {})
        for path in paths
    )
    assert reread > 0 and columnar_spy["configs"] == 5 and columnar_spy["arrow_csv"] == 7 + reread


_URDU_LETTERS = "ابپتٹثجچحخدڈذرڑزژسشصضطظعغفقکگلمنوہھیےيكهىة"
_URDU_MESS = ("\u200c", "\u0654", "\u064e", "ـ", "١٢", "۳", "\u200f", "\ufeeb", "ۀ", "؟", " |", "\x07")


def _urdu_sentence(rng: random.Random) -> str:
    """Urdu-looking words, Arabic look-alikes and heh in every position among them, now and then a mark."""
    words = ["".join(rng.choice(_URDU_LETTERS) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(2, 7))]
    text = " ".join(words)
    if rng.random() < 0.3:
        cut = rng.randrange(len(text) + 1)
        text = text[:cut] + rng.choice(_URDU_MESS) + text[cut:]
    return text + rng.choice(("۔", "", "؟"))


@pytest.mark.parametrize("profile", ["urdu", "plain"])
def test_every_profile_builds_identically(tmp_path: Path, columnar_spy: dict[str, int], profile: str) -> None:
    """issue 30, item 3: a task normalised by another profile builds byte for byte alike with both engines."""
    from .profiled_tasks import profiled

    rng = random.Random(11)
    sources = []
    for name, suffix, counts in (("sa", ".csv", {"train": 2500, "test": 500}), ("mnli", ".jsonl", {"train": 1500})):
        task = profiled(get_task(name), profile)
        columns = [*task.input_fields, str(task.label_field)]
        folder = tmp_path / "src" / name
        folder.mkdir(parents=True)
        files = {}
        for split, count in counts.items():
            records: list[dict] = []
            for i in range(count):
                if records and i % 50 == 0:  # a repeat now and then: duplicates and conflicts are counted alike
                    records.append(dict(rng.choice(records)))
                    continue
                row = {field: _messy_text(rng, _urdu_sentence(rng), suffix == ".jsonl") for field in task.input_fields}
                row[str(task.label_field)] = _label(rng, task.label_names, suffix == ".jsonl")
                records.append(row)
            files[split] = [_write(folder / f"{split}{suffix}", records, columns)]
        sources.append(TaskSources(task, files))
    outcomes = _build_both(tmp_path / "out", sources)
    _assert_same(outcomes)
    assert columnar_spy["configs"] == 2 and columnar_spy["batches"] >= 2
    built = pq.read_table(tmp_path / "out" / "columnar" / "nlue" / "sa" / "train-00000-of-00001.parquet")
    texts = built.column("text").to_pylist()
    if profile == "urdu":  # the folds happened (the comparison covered them)
        assert not any(c in text for text in texts for c in "يكىة١\u0640") and any("ہ" in text for text in texts)
    else:
        assert any(c in text for text in texts for c in "يكىة١")


def read_records_list(path: Path) -> list:
    return list(read_records(path))


def test_maps_strictness_and_leak_dropping_are_identical(tmp_path: Path, columnar_spy: dict[str, int]) -> None:
    """A source in another schema (column map, label map with drops), with leaked test items removed."""
    rng = random.Random(3)
    pool: list[dict] = []
    folder = tmp_path / "src"
    folder.mkdir()
    renamed = []
    for split, count in (("train", 3_000), ("test", 800)):
        records = _records(rng, "sa", count, False, pool)
        for r in records:
            if "text" in r:
                r["review"] = r.pop("text")
            if "label" in r:
                r["sentiment"] = {"0": "-1", "1": "1", "negative": "neg"}.get(str(r.pop("label")), "0")
        renamed.append(_write(folder / f"{split}.csv", records, ["review", "sentiment"]))
    mapping = FieldMapping(columns={"text": "review", "label": "sentiment"},
                           labels={"-1": "negative", "1": "positive", "0": "drop", "neg": "0"})  # fmt: skip
    sources = [TaskSources(TASKS["sa"], {"train": [renamed[0]], "test": [renamed[1]]}, mapping)]
    outcomes = _build_both(tmp_path / "loose", sources, drop_leaked_test=True)
    _assert_same(outcomes)
    report = json.loads(outcomes["columnar"]["nlue.report.json"])["configs"]["sa"]["splits"]
    assert report["train"]["dropped_by_label_map"]["0"] > 0 and report["test"]["leaked_from_train"] > 0
    strict = _build_both(tmp_path / "strict", sources, strict=True)
    _assert_same(strict)
    assert strict["rows"][0] == "error"
    keep_first = _build_both(tmp_path / "keep-first", sources, conflicts="keep-first")
    _assert_same(keep_first)
    assert json.loads(keep_first["rows"]["nlue.report.json"])["conflicts"] == "keep-first"
    assert columnar_spy["configs"] == 3


# --- files that end the build, and CSV oddities ----------------------------------------------


def _csv_case(kind: str) -> bytes:
    rows = [f"{_sentence(random.Random(i))},{i % 2}" for i in range(400)]
    if kind == "ragged":
        rows[300] += ",extra"
    elif kind == "bad_utf8":
        rows[250] = rows[250][:3] + "\udcff" + rows[250][3:]
    elif kind == "blank_lines":
        rows[100] += "\n"
        rows[390] += "\r\n\r\n"
    elif kind == "quoted":
        rows[10] = '"कख, गघ\nनयाँ पङ्क्ति ""उद्धरण""",1'
        rows[20] = 'ab"c,0'
        rows[30] = '"ab"c,1'
    elif kind == "trailing_blank_lines":
        return ("text,label\n" + "\n".join(rows) + "\n\n\r\n").encode()
    elif kind == "trailing_empty_cells":
        return ("text,label\n" + "\n".join(rows) + "\n,\n").encode()
    elif kind == "unbalanced":
        rows[50] = '"open,1'
    elif kind == "duplicate_header":
        return ("text,label,text\n" + "\n".join(r + ",x" for r in rows) + "\n").encode()
    elif kind == "semicolon":
        return ("\ufefftext;label\r\n" + "\r\n".join(r.replace(",", ";") for r in rows)).encode()
    elif kind == "quoted_header":
        return ('"text","label"\n' + "\n".join(rows) + "\n").encode()
    elif kind == "nul":
        rows[5] = "a\x00b,1"
    elif kind == "header_only":
        return b"text,label\n"
    elif kind == "missing_column":
        return ("text,lable\n" + "\n".join(rows) + "\n").encode()
    return ("text,label\n" + "\n".join(rows) + "\n").encode("utf-8", errors="surrogateescape")


# What each case ends in with either engine: built, or the error naming file, row and field.
_CSV_OUTCOMES = {
    "plain": None,
    "ragged": "row 301, field '(row)': has 3 cells",
    "bad_utf8": "row 251, field 'text': not valid UTF-8",
    "blank_lines": None,
    "trailing_blank_lines": None,
    "trailing_empty_cells": None,
    "quoted": None,
    "unbalanced": "row 51, field '(row)': has 1 cells",
    "duplicate_header": "field '(header)': the column 'text' appears twice (columns 1 and 3)",
    "semicolon": None,
    "quoted_header": None,
    "nul": None,
    "header_only": "empty file: no data rows",
    "missing_column": "field 'label': missing column",
}


@pytest.mark.parametrize("kind", list(_CSV_OUTCOMES))
def test_csv_files_build_or_fail_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    # Small blocks: Arrow delivers several batches before a bad row, so the fallback resumes mid-file.
    monkeypatch.setattr(arrow_sources, "CSV_BLOCK_BYTES", 2048)
    monkeypatch.setattr(arrow_sources, "CONVERT_BYTES", 4096)
    path = tmp_path / "train.csv"
    path.write_bytes(_csv_case(kind))
    sources = [TaskSources(TASKS["sa"], {"train": [path], "test": [path]})]
    outcomes = _build_both(tmp_path / "out", sources)
    _assert_same(outcomes)
    expected = _CSV_OUTCOMES[kind]
    if expected is None:
        assert "nlue/sa/train-00000-of-00001.parquet" in outcomes["rows"]
    else:
        assert outcomes["rows"][0] == "error" and expected in outcomes["rows"][1]


@pytest.mark.parametrize("seed", [11, 12])
def test_reader_batches_equal_the_row_readers_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Every format, batch by batch: the rows, numbers and values ``read_records`` gives."""
    monkeypatch.setattr(arrow_sources, "CSV_BLOCK_BYTES", 1024)
    monkeypatch.setattr(arrow_sources, "PARQUET_BATCH_ROWS", 37)
    records = _records(random.Random(seed), "mnli", 700, True, [])
    columns = ["premise", "hypothesis", "label"]
    for suffix in (".csv", ".tsv", ".jsonl", ".parquet"):
        path = _write(tmp_path / f"train{suffix}", records, columns)
        expected = [(n, {c: r.get(c) for c in columns if c in r}) for n, r in read_records(path)]
        got = []
        for batch in arrow_sources.read_batches(path, columns):
            rows = batch.records if batch.records is not None else batch.table.to_pylist()
            got += [
                (int(n), {c: r[c] for c in columns if c in r}) for n, r in zip(batch.row_numbers, rows, strict=True)
            ]
        assert repr(got) == repr(expected), suffix  # repr: NaN equals NaN


_CSV_ALPHABET = st.sampled_from(
    ["a", "b", ",", '"', '""', "\n", "\r", "\r\n", "\n\n", "\r\n\r\n", " ", "क", "|", ";", "\t", "\x00"]
)
_CSV_HEADERS = st.sampled_from(["x,y\n", '"x","y"\r\n', "x;y\n", "\ufeffx,y\n", "x,y,z\n", "x,y", "x\n", "x,x\n"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_CSV_ALPHABET, max_size=60).map("".join), _CSV_HEADERS)
# Two cases a random search found: a quoted "\r\n" split by a block boundary, and line ends
# closing the file inside a quoted cell of a column that is not read.
@example(
    ',"\r\n\r\n\r\n;|\t|\x00| क"";||;\x00\r\n\r\n\n\n\n\n\n""\r\n\r\n\n\r\nक\n\n\n\n\n\n\n\n\na,\r\n\r\n,,\n\na;\na\n|क\n\n'
    "\n\n\n,\r\n\r\n  a",
    "x,y\n",
)
@example(',,"\t,,,\t,\x00\n\n\x00\n\n"",,\tक,\n\n\n\n\n\r\n|\r\n\r\n\x00\r\n\r\n', "x,y,z\n")
def test_csv_reading_matches_python_csv(tmp_path_factory: pytest.TempPathFactory, body: str, header: str) -> None:
    """Arrow's reading (with its hand-overs to Python) gives Python's csv records and errors, on arbitrary text.

    Blocks of 64 bytes put block boundaries everywhere (a random search found pyarrow
    dropping the "\\n" of a quoted "\\r\\n" split by one; arrow_sources hands such cells over).
    """
    path = tmp_path_factory.mktemp("csv") / "train.csv"
    path.write_text(header + body, encoding="utf-8", newline="")

    def outcome(read: Callable[[], list]) -> Any:
        try:
            return read()
        except SourceError as error:
            return str(error)

    def by_batches() -> list:
        rows = []
        for batch in arrow_sources.read_batches(path, ["x", "y"]):
            records = batch.records if batch.records is not None else batch.table.to_pylist()
            rows += [
                (int(n), {k: r.get(k) for k in ("x", "y")}) for n, r in zip(batch.row_numbers, records, strict=True)
            ]
        return rows

    expected = outcome(lambda: [(n, {k: r.get(k) for k in ("x", "y")}) for n, r in read_records(path)])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrow_sources, "CSV_BLOCK_BYTES", 64)
        patch.setattr(arrow_sources, "CONVERT_BYTES", 128)
        assert outcome(by_batches) == expected


# --- the parts: keys, fold, tidy-up, the background reader ------------------------------------


def test_string_keys_are_equal_exactly_when_strings_are() -> None:
    texts = ["", "\x00", "\x00\x00", "a", "a\x00", "ab", "ba", "क", "क्ष", "x" * 7, "x" * 8, "x" * 9]
    texts += ["x" * n for n in range(30, 70)] + ["\x00" * n for n in range(1, 40)]
    texts += [f"{i}" for i in range(20_000)] + ["क" * (LONG_STRING_BYTES // 3 + n) for n in range(-2, 3)]
    texts += [t + "!" for t in texts[-5:]]
    keys = hash_array(pa.array(texts)).tolist()
    assert len(set(keys)) == len(set(texts))
    assert hash_array(pa.array(texts[::-1])).tolist() == keys[::-1]  # a key depends on the text alone
    sliced = pa.array(["pad", *texts]).slice(1)
    assert hash_array(sliced).tolist() == keys


def test_fold_rule_is_the_row_paths_tables() -> None:
    deleted, mapped, expands = _loose_tables()
    for code in range(0x20000):
        folded = fold_rule(code)
        assert folded == (bool(deleted[code]), code if deleted[code] else int(mapped[code]), bool(expands[code]))


_FOLD_TEXT = st.lists(
    st.sampled_from(["क", "ख", "ि", "्", "।", "॥", "॰", "०", "९", "\u0900", "\u097f", "A", "z", "Z", " ", "!", ".",
                     "$", "|", "_", "ß", "ﬁ", "K", "ক", "৯", "😀", "\u200d", "\ufe0f", "É", "1"]),
    max_size=12,
).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_FOLD_TEXT, _FOLD_TEXT), min_size=1, max_size=30), st.booleans())
def test_loose_keys_group_rows_as_the_row_path_folds_them(rows: list[tuple[str, str]], pair: bool) -> None:
    texts = [tuple(normalize_text(t) for t in row) for row in rows]
    columns = [pa.array([t[i] for t in texts]) for i in range(2 if pair else 1)]
    keys = loose_keys(columns).tolist()
    folded = [SEPARATOR.join(parts) for parts in zip(*(loose_texts(c.to_pylist()) for c in columns), strict=True)]
    assert len(set(zip(keys, folded, strict=True))) == len(set(keys)) == len(set(folded))


_TIDY_PIECES = [" ", "  ", "|", "||", "क", "ख", "।", "a", "B", "_", "्", "\u093c", "\u0958", "\t", "१", "\u200c"]
# Per profile, the pieces its bulk path and row path could disagree on: its script's letters, marks and
# look-alikes (Urdu: the folded letters, hamza, heh in every position; Sinhala: the vowel signs that compose).
_PROFILE_PIECES = {
    "nepali": [],
    "urdu": ["ک", "ك", "ه", "ہ", "ھ", "ی", "ي", "ۀ", "ە", "\u0654", "\u064e", "١", "۱", "ـ", "؟", "\ufeeb"],
    "plain": ["ک", "ه", "\u0301", "e", "\u200d", "ශ", "\u0dd9", "\u0dcf", "\u1100", "\u1161"],
    "sinhala_test": ["ශ", "ර", "\u0dca", "\u0dd9", "\u0dcf", "\u0ddc", "\u200d", "ක"],
}


@pytest.mark.parametrize("name", sorted(_PROFILE_PIECES))
def test_bulk_normalisation_equals_normalize_text(name: str) -> None:
    """The bulk tidy-up gives each profile's normalize_text exactly (issue 30, item 3: every profile)."""
    from nlue.text.bulk import bulk_rules
    from nlue.text.profiles import get_profile, register_profile, unregister_profile

    from .profiled_tasks import SINHALA

    register_profile(SINHALA)
    try:
        profile = get_profile(name)
        rules = bulk_rules(profile)
        texts = st.lists(st.sampled_from(_TIDY_PIECES + _PROFILE_PIECES[name]), max_size=10).map("".join)

        @settings(max_examples=300, deadline=None)
        @given(st.lists(texts, min_size=1, max_size=20))
        def check(texts: list[str]) -> None:
            array = pa.array(texts)
            matched = pc.match_substring_regex(array, rules.needs_row_path)
            needs_work = np.asarray(matched.to_numpy(zero_copy_only=False))
            tidied, left = columnar._tidy(array, needs_work, rules) if needs_work.any() else (array, needs_work)
            for text, result, row_path in zip(texts, tidied.to_pylist(), left.tolist(), strict=True):
                if not row_path:
                    assert result == profile.normalize(text) != "", text
            clean = [t for t, flag in zip(texts, needs_work.tolist(), strict=True) if not flag]
            assert all(unicodedata.is_normalized("NFC", t) and profile.normalize(t) == t for t in clean)

        check()
    finally:
        unregister_profile(SINHALA.name)


def test_nepali_bulk_patterns_are_the_ones_written_before_profiles() -> None:
    """issue 30, item 3: the patterns derived from the nepali profile accept exactly what the hand-written ones did."""
    from nlue.text.bulk import bulk_rules
    from nlue.text.profiles import NEPALI

    before_row_path = "[^ -{}~\\x{0900}-\\x{093B}\\x{093D}-\\x{0950}\\x{0955}-\\x{0957}\\x{0960}-\\x{097F}]|^ | $|  |^$"
    before_tidy = (
        "[^ -~\\x{0900}-\\x{093B}\\x{093D}-\\x{0950}\\x{0955}-\\x{0957}\\x{0960}-\\x{097F}]|\\|\\|\\||\\|[^|]+\\|"
    )
    rules = bulk_rules(NEPALI)
    every = pa.array([chr(c) for c in range(0x3000)] + ["", " a", "a ", "a  b", "a|b|", "a|||", "क ||"])
    for before, now in ((before_row_path, rules.needs_row_path), (before_tidy, rules.not_tidy_in_bulk)):
        assert pc.match_substring_regex(every, before).equals(pc.match_substring_regex(every, now))
    assert rules.pipe_rewrites == (
        ("([\\x{0900}-\\x{097F}]) ?\\|\\|", "\\1॥"),
        ("([\\x{0900}-\\x{097F}]) ?\\|", "\\1।"),
    )
    assert not rules.beyond_byte_fold


def test_background_reader_stops_when_the_build_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A conflicting duplicate under --strict ends the build while the reader still has rows to give."""
    monkeypatch.setattr(arrow_sources, "CSV_BLOCK_BYTES", 4096)
    monkeypatch.setattr(arrow_sources, "CONVERT_BYTES", 4096)
    lines = ["text,label"] + [f"{_sentence(random.Random(i))},{i % 2}" for i in range(30_000)]
    lines.insert(50, lines[10].rsplit(",", 1)[0] + "," + str(1 - int(lines[10].rsplit(",", 1)[1])))
    path = tmp_path / "train.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = threading.active_count()
    outcomes = _build_both(tmp_path / "out", [TaskSources(TASKS["sa"], {"train": [path]})], strict=True)
    _assert_same(outcomes)
    assert outcomes["rows"][0] == "error" and "row 50" in outcomes["rows"][1]
    assert threading.active_count() == before


def test_unknown_engine_is_refused(tmp_path: Path) -> None:
    from nlue.errors import NlueError

    with pytest.raises(NlueError, match="unknown build engine"):
        build_repo([TaskSources(TASKS["sa"], {})], tmp_path, BuildOptions(engine="fast"))
