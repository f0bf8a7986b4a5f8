"""Properties of every reader, normaliser and parser a user's data passes through (issue 22), in one place.

``tests/test_properties.py`` runs each a few hundred times in the suite;
``benchmarks/reliability_properties.py`` runs each 10,000 times (the nightly size) and prints what it
tried and found. A check raises (an ``AssertionError``, or whatever escaped the code under test) when
its property fails. The properties:

* readers (CSV, TSV, JSON Lines, Parquet): a well-formed file of arbitrary text (any character but a
  lone surrogate, which no UTF-8 file holds) reads back exactly, by the row readers
  (:func:`nlue.data.sources.read_records`) and the columnar builder's batch readers alike; a damaged
  one (bytes cut, inserted or swapped, quotes and brackets unbalanced, keys repeated, nesting deep,
  lone surrogate escapes) yields records or a :class:`~nlue.errors.NlueError` and nothing else, the
  two readers agreeing;
* a source record, whatever its values, becomes a row, a rejection or a label-map drop through any
  task's rules (never an exception), and a row's texts are normalised and not empty;
* ``normalize_text`` under every language profile (nepali, urdu, plain), ``normalize_answer`` and the
  exams' ``normalize_mcq_text`` are idempotent and leave no control, bidirectional or zero-width
  character they promise to remove: each profile removes the control characters and its declared
  ``removed`` set; a ZWJ/ZWNJ that nepali or urdu keeps stands alone between two letters of its
  script (or beside the virama; a ZWJ also between two emoji): urdu keeps ZWNJ inside a word,
  where Urdu needs it; plain keeps every joiner as written;
* the idiom span parser, the exam answer parser and the label parser read any text without an exception,
  and read back what their writer (or a model following the format) wrote.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from nlue.data.arrow_sources import read_batches
from nlue.data.rows import Dropped, RowConverter
from nlue.data.sources import read_records
from nlue.errors import NlueError, RowProblem
from nlue.evals.llm.label_generation import parse_label
from nlue.evals.mcq.parse import INVALID_CATEGORIES, parse_lenient, parse_strict
from nlue.registry.kinds.mcq_text import LETTERS, normalize_mcq_text
from nlue.registry.tasks import TASKS
from nlue.text import rules
from nlue.text.idiom_position import Span, mark_position, parse_position
from nlue.text.normalize import _ANSWER_STRIP, normalize_answer, normalize_text
from nlue.text.profiles import get_profile, profile_of


@dataclass(frozen=True)
class Property:
    name: str
    strategy: st.SearchStrategy[Any]
    check: Callable[[Any], None]
    suite_examples: int  # examples per run of the test suite (the nightly run tries 10,000)


# --- what texts are made of ---------------------------------------------------------------------

# Characters that readers and normalisers treat specially, drawn often; the rest of Unicode (but
# lone surrogates) comes from st.characters.
TRICKY = (
    ",;\t\"'\n\r|#_.…[]{}:\\"
    "\x00\x01\x07\x1b\x1c\x1f\x7f\x85\x9b\xa0\xad\u3000"
    "\u200b\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u202a\u202e\u2066\u2069"
    "\ufe0e\ufe0f\u20e3❤👍🏽🏳🌈"
    "कखगर्िाँं़ःऽ।॥०९\u0951\u0952\u093c"
    "کيكهۀھہ\u0640\u064b\u0654\u0660\ufeeb"
    "abcABDe\u0301 "
)
CHARACTERS = st.characters(blacklist_categories=("Cs",)) | st.sampled_from(TRICKY)
TEXT = st.text(CHARACTERS, max_size=24)
NONEMPTY_TEXT = st.text(CHARACTERS, min_size=1, max_size=24)
# JSON values as a source may hold them: nested a few levels, no NaN (it never equals itself).
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
# Removed by every profile: controls (but whitespace); by nepali and urdu also bidirectional formatting,
# zero-width and the like (urdu: and the tatweel). Written out here, not read from the declarations.
_CONTROLS = "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
_REMOVED = {
    "nepali": re.compile(f"[{_CONTROLS}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff\u00ad]"),
    "urdu": re.compile(f"[{_CONTROLS}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff\u00ad\u0640]"),
    "plain": re.compile(f"[{_CONTROLS}]"),
}
PROFILES = tuple(_REMOVED)


def _directory() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="nlue-property-")


def _outcome(read: Callable[[], list[Any]]) -> Any:
    """What a reader gives: its rows, or the message of the project's error (any other exception escapes)."""
    try:
        return read()
    except NlueError as error:
        return f"error: {error}"


def _row_reader(path: Path) -> Any:
    return _outcome(lambda: list(read_records(path)))


def _batch_reader(path: Path, columns: list[str]) -> Any:
    """The columnar builder's reader, as (row number, the wanted columns) pairs, or its error."""

    def read() -> list[Any]:
        got = []
        for batch in read_batches(path, columns):
            rows = batch.records if batch.records is not None else batch.table.to_pylist()
            got += [
                (int(n), {c: r[c] for c in columns if c in r}) for n, r in zip(batch.row_numbers, rows, strict=True)
            ]
        return got

    return _outcome(read)


def _readers_agree(path: Path, columns: list[str]) -> Any:
    rows = _row_reader(path)
    batches = _batch_reader(path, columns)
    if isinstance(rows, str):
        assert batches == rows, (batches, rows)
    else:
        wanted = [(n, {c: r[c] for c in columns if c in r}) for n, r in rows]
        assert repr(batches) == repr(wanted), (batches, wanted)
    return rows


# --- damage to a well-formed file ---------------------------------------------------------------

_DAMAGE_BYTES = [
    b'"',
    b",",
    b"\t",
    b"\n",
    b"\r",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\\",
    b"\\ud800",
    b"\x00",
    b"\xff",
    b"\xe0\xa4",
]
DAMAGE = st.lists(
    st.tuples(st.sampled_from(["cut", "insert", "swap"]), st.integers(0, 10**6), st.integers(1, 8),
              st.sampled_from(_DAMAGE_BYTES)),
    min_size=1, max_size=3,
)  # fmt: skip


def damaged(data: bytes, damage: list[tuple[str, int, int, bytes]]) -> bytes:
    """``data`` with bytes cut, inserted or overwritten at positions taken modulo its length."""
    for what, where, length, extra in damage:
        at = where % (len(data) + 1)
        if what == "cut":
            data = data[:at] + data[at + length :]
        elif what == "insert":
            data = data[:at] + extra * length + data[at:]
        else:
            data = data[:at] + extra + data[at + len(extra) :]
    return data


# --- CSV and TSV --------------------------------------------------------------------------------


@st.composite
def delimited_files(draw: st.DrawFn) -> tuple[str, list[str], list[list[str]], str, Any]:
    """A table of arbitrary text for a CSV or TSV, its line end, and damage to do (or None)."""
    suffix = draw(st.sampled_from([".csv", ".tsv"]))
    # A CSV header with a semicolon and no comma is read as ";"-separated (what spreadsheets in many
    # locales save), and a leading U+FEFF is a byte-order mark: names of either kind mean something else.
    name = st.text(CHARACTERS, max_size=12).filter(lambda n: not n.startswith("\ufeff"))
    names = draw(st.lists(name, min_size=1, max_size=4, unique=True))
    if suffix == ".csv" and not any("," in n for n in names):
        names = [n.replace(";", "") for n in names]
        if len(set(names)) != len(names):
            names = [f"{n}{i}" for i, n in enumerate(names)]
    rows = draw(st.lists(st.lists(TEXT, min_size=len(names), max_size=len(names)), max_size=6))
    return suffix, names, rows, draw(st.sampled_from(["\n", "\r\n"])), draw(st.none() | DAMAGE)


def check_delimited(case: tuple[str, list[str], list[list[str]], str, Any]) -> None:
    suffix, names, rows, line_end, damage = case
    buffer = io.StringIO()
    # With "\n" ending lines, Python's csv writer quotes a cell holding "\n" but not one holding a lone
    # "\r", which any reader then takes for a line end: such a file is ambiguous, so quote every cell.
    quoting = csv.QUOTE_ALL if line_end == "\n" else csv.QUOTE_MINIMAL
    writer = csv.writer(buffer, delimiter="," if suffix == ".csv" else "\t", lineterminator=line_end, quoting=quoting)
    writer.writerow(names)
    writer.writerows(rows)
    data = buffer.getvalue().encode("utf-8")
    with _directory() as folder:
        path = Path(folder) / f"train{suffix}"
        path.write_bytes(data if damage is None else damaged(data, damage))
        got = _readers_agree(path, names)
    if damage is None:
        assert got == [(i, dict(zip(names, row, strict=True))) for i, row in enumerate(rows, start=1)], got
    elif not isinstance(got, str):
        assert all(isinstance(r, dict) and all(isinstance(v, str) for v in r.values()) for _, r in got)


# --- JSON Lines -----------------------------------------------------------------------------------

_BAD_LINES = [
    '{"text": "a", "text": "b"}',
    '{"text": ' + "[" * 5000 + "]" * 5000 + "}",
    '{"text": "ok \\ud800"}',
    '{"text": "ok \\udfff x"}',
    '{"text": {"k": 1, "k": 2}}',
    '{"text": "unterminated}',
    "[1, 2]",
]


@st.composite
def jsonl_files(draw: st.DrawFn) -> tuple[list[dict[str, Any]], bool, Any, Any]:
    """Records of arbitrary JSON values, whether escapes are ASCII, a known-bad line to put in, and damage."""
    records = draw(st.lists(st.dictionaries(TEXT, JSON_VALUES, max_size=4), max_size=5))
    bad = draw(st.none() | st.tuples(st.integers(0, 5), st.sampled_from(_BAD_LINES)))
    return records, draw(st.booleans()), bad, draw(st.none() | DAMAGE)


def check_jsonl(case: tuple[list[dict[str, Any]], bool, Any, Any]) -> None:
    records, ascii_only, bad, damage = case
    lines = [json.dumps(record, ensure_ascii=ascii_only) for record in records]
    if bad is not None:
        lines.insert(min(bad[0], len(lines)), bad[1])
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    columns = sorted({key for record in records for key in record})[:3]
    with _directory() as folder:
        path = Path(folder) / "train.jsonl"
        path.write_bytes(data if damage is None else damaged(data, damage))
        got = _readers_agree(path, columns)
    if damage is None and bad is None:
        assert got == list(enumerate(records, start=1)), got
    elif damage is None:
        assert isinstance(got, str) and f"row {min(bad[0], len(records)) + 1}," in got, got


# --- Parquet --------------------------------------------------------------------------------------

_PARQUET_TYPES = {
    "string": (pa.string(), TEXT),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "double": (pa.float64(), st.floats(allow_nan=False)),
    "bool": (pa.bool_(), st.booleans()),
    "list": (pa.list_(pa.string()), st.lists(TEXT, max_size=3)),
}


@st.composite
def parquet_files(draw: st.DrawFn) -> tuple[list[str], list[str], list[list[Any]], Any]:
    names = draw(st.lists(st.text(CHARACTERS, min_size=1, max_size=8), min_size=1, max_size=4, unique=True))
    kinds = draw(st.lists(st.sampled_from(sorted(_PARQUET_TYPES)), min_size=len(names), max_size=len(names)))
    count = draw(st.integers(0, 6))
    columns = [draw(st.lists(st.none() | _PARQUET_TYPES[k][1], min_size=count, max_size=count)) for k in kinds]
    return names, kinds, columns, draw(st.none() | DAMAGE)


def check_parquet(case: tuple[list[str], list[str], list[list[Any]], Any]) -> None:
    names, kinds, columns, damage = case
    table = pa.table({n: pa.array(c, type=_PARQUET_TYPES[k][0]) for n, k, c in zip(names, kinds, columns, strict=True)})
    with _directory() as folder:
        path = Path(folder) / "train.parquet"
        pq.write_table(table, path)
        if damage is not None:
            path.write_bytes(damaged(path.read_bytes(), damage))
        got = _readers_agree(path, names)
    if damage is None:
        assert repr(got) == repr(list(enumerate(table.to_pylist(), start=1))), got


# --- a record through a task's rules ---------------------------------------------------------------

_CONVERTED_TASKS = ("sa", "wg", "stsb", "mnli", "gmet", "mcq_ne", "mcq_ur", "nediom")


@st.composite
def task_records(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    task = TASKS[draw(st.sampled_from(_CONVERTED_TASKS))]
    fields = (*task.kind.required_fields(task), *task.kind.optional_fields(task))
    plausible = st.sampled_from([*task.label_names, "1", 2, 3.5, "B", "(c)", "Grade 8", "social studies", "Food",
                                 "[MASK] घर", "###क###", "_", "क _ ख"])  # fmt: skip
    record = {name: draw(st.none() | plausible | JSON_VALUES) for name in fields if draw(st.integers(0, 9))}
    return task.name, record


def check_task_record(case: tuple[str, dict[str, Any]]) -> None:
    name, record = case
    task = TASKS[name]
    result = RowConverter(task).convert("f.jsonl", 7, record)
    if isinstance(result, RowProblem):
        assert result.file == "f.jsonl" and result.row == 7 and result.field and result.reason
        # The rejects file is written as UTF-8 JSON: a rejection must survive that.
        json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")
        return
    if isinstance(result, Dropped):
        return
    assert isinstance(result, dict)
    for field in task.kind.text_fields(task):
        normalized = profile_of(task).normalize(result[field])
        assert result[field] and result[field] == normalized, (field, result[field])


# --- normalisers ----------------------------------------------------------------------------------


def check_normalize_text(case: tuple[str, str]) -> None:
    text, name = case
    profile = get_profile(name)
    once = normalize_text(text, name)
    assert normalize_text(once, name) == once, (text, once)
    assert once == once.strip() and "  " not in once and unicodedata.is_normalized("NFC", once), once
    assert not _REMOVED[name].search(once) and not any(c.isspace() and c != " " for c in once), once
    if name == "nepali":
        assert normalize_text(text) == once  # the default profile
    if not profile.tidy_joiners:  # plain: every joiner kept as written
        assert [c for c in once if c in "\u200c\u200d"] == [c for c in text if c in "\u200c\u200d"], once
        return
    letters = {c for c in rules.expand(profile.script) if unicodedata.category(c)[0] == "L"}
    signs = rules.expand(profile.joiner_signs)
    for i, char in enumerate(once):
        if char in "\u200c\u200d":  # a joiner kept stands alone between two letters (or a ZWJ between two emoji)
            before, after = once[i - 1 : i], once[i + 1 : i + 2]
            letter_pair = {before, after} <= letters | signs and not {before, after} <= signs
            emoji = char == "\u200d" and re.match(f"[{rules.EMOJI_BASE}\ufe0f]", before) is not None
            assert letter_pair or (emoji and re.match(f"[{rules.EMOJI_BASE}]", after) is not None), once


def check_normalize_answer(text: str) -> None:
    once = normalize_answer(text)
    assert normalize_answer(once) == once, (text, once)
    assert once == once.strip(_ANSWER_STRIP), once


def check_normalize_mcq_text(case: tuple[str, str]) -> None:
    text, language = case
    once = normalize_mcq_text(text, language)
    assert normalize_mcq_text(once, language) == once, (text, once)


# --- parsers --------------------------------------------------------------------------------------

SPAN_TEXT = st.text(st.sampled_from("#### कख ग\u200d\t\n a्") | CHARACTERS, max_size=20)


@st.composite
def span_cases(draw: st.DrawFn) -> tuple[str, str, tuple[int, int] | None]:
    """Any position field and S2; or S2 (normalised, no '#') with a span whose ends are not spaces."""
    if draw(st.booleans()):
        return draw(SPAN_TEXT), draw(SPAN_TEXT), None
    sentence = normalize_text(draw(NONEMPTY_TEXT)).replace("#", "").strip() or "क"
    letters = [i for i, char in enumerate(sentence) if not char.isspace()]
    first = draw(st.integers(0, len(letters) - 1))
    start, end = letters[first], letters[draw(st.integers(first, len(letters) - 1))] + 1
    return mark_position(sentence, start, end), sentence, (start, end)


def check_span(case: tuple[str, str, tuple[int, int] | None]) -> None:
    position, sentence, span = case
    parsed = parse_position(position, sentence)
    assert isinstance(parsed, Span | str)
    if isinstance(parsed, Span):
        assert 0 <= parsed.start < parsed.end <= len(sentence) and parsed.text == sentence[parsed.start : parsed.end]
        assert parsed.text == parsed.text.strip()
    if span is not None:
        assert parsed == Span(*span, sentence[span[0] : span[1]]), (parsed, span)


_OPTION = NONEMPTY_TEXT.filter(lambda t: "think>" not in t.casefold())


@st.composite
def exam_answers(draw: st.DrawFn) -> tuple[str, dict[str, str], str, str | None]:
    """An item's options, and either any output or the two answer lines for one option."""
    language = draw(st.sampled_from(["ne", "ur"]))
    options = {letter: draw(_OPTION) for letter in LETTERS}
    if draw(st.booleans()):
        pieces = st.lists(
            TEXT | st.sampled_from(["Answer key: ", "Answer text: ", "<think>", "</think>", "\n", *LETTERS])
        )
        output = "".join(draw(pieces))
        return output, options, language, None
    normalised = {letter: normalize_mcq_text(text, language) for letter, text in options.items()}
    if len(set(normalised.values())) < len(LETTERS) or not all(normalised.values()):
        return "", options, language, None
    key = draw(st.sampled_from(LETTERS))
    return f"Answer key: {key}\nAnswer text: {normalised[key]}", normalised, language, key


def check_exam_answer(case: tuple[str, dict[str, str], str, str | None]) -> None:
    output, options, language, key = case
    for parse in (parse_strict, parse_lenient):
        result = parse(output, options, language=language)
        assert result.category is None or result.category in INVALID_CATEGORIES
        assert result.valid == (result.prediction != -1)
        if result.valid:
            assert result.key in LETTERS and result.prediction == LETTERS.index(result.key)
    if key is not None:
        assert parse_strict(output, options, language=language).key == key, output
        assert parse_strict(output, options, language=language).valid, output


# Label words as tasks declare them: normalised, and not ending in the full stop, danda or "!" that the
# strict parser drops from an answer's end (a word ending in one could never be read back exactly).
_WORD = NONEMPTY_TEXT.map(normalize_text).filter(lambda w: w != "" and w[-1] not in ".।!")
_LABEL_WORDS = st.lists(st.sampled_from(["positive", "negative", "entailment", "not_entailment", "सही", "गलत"])
                        | _WORD, min_size=2, max_size=4)  # fmt: skip


@st.composite
def label_answers(draw: st.DrawFn) -> tuple[str | None, list[str], int | None]:
    words = draw(_LABEL_WORDS)
    if draw(st.booleans()):
        return draw(st.none() | TEXT), words, None
    folded = [unicodedata.normalize("NFC", w).casefold().strip() for w in words]
    if len(set(folded)) < len(folded) or not all(folded):
        return None, words, None
    label = draw(st.integers(0, len(words) - 1))
    return words[label], words, label


def check_label_answer(case: tuple[str | None, list[str], int | None]) -> None:
    output, words, label = case
    for lenient in (False, True):
        parsed = parse_label(output, words, lenient=lenient)
        assert (parsed.label is None) != (parsed.category is None), parsed
        assert parsed.label is None or 0 <= parsed.label < len(words)
    if label is not None:
        assert parse_label(output, words).label == label, (output, words)


PROPERTIES: tuple[Property, ...] = (
    Property("csv/tsv reader", delimited_files(), check_delimited, 150),
    Property("jsonl reader", jsonl_files(), check_jsonl, 150),
    Property("parquet reader", parquet_files(), check_parquet, 80),
    Property("record through a task's rules", task_records(), check_task_record, 300),
    Property("normalize_text", st.tuples(TEXT, st.sampled_from(PROFILES)), check_normalize_text, 400),
    Property("normalize_answer", TEXT, check_normalize_answer, 400),
    Property("normalize_mcq_text", st.tuples(TEXT, st.sampled_from(["ne", "ur"])), check_normalize_mcq_text, 300),
    Property("idiom span parser", span_cases(), check_span, 300),
    Property("exam answer parser", exam_answers(), check_exam_answer, 300),
    Property("label parser", label_answers(), check_label_answer, 300),
)
