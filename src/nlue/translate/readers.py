"""Reading the raw English sources of a task (GLUE TSVs, WinoGrande and WSC JSONL) into registry rows.

What each release looks like is declared in :mod:`nlue.registry.translation_sources`; this
module applies a declaration: it picks the format that fits the file (or the one named),
reads the rows with the quirks the declaration names (no quote processing in TSVs, no
header, a span to substitute), and passes every record through the builder's own row
rules (:class:`nlue.data.rows.RowConverter`), so a row the builder would reject is
rejected here too, with file, row, field and reason, before anything is sent to a model.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.data.mapping import FieldMapping
from nlue.data.rows import Dropped, RowConverter
from nlue.data.sources import jsonl_rows
from nlue.errors import NlueError, RowProblem
from nlue.registry.spec import TaskSpec
from nlue.registry.translation_sources import SourceFormat, source_formats

logger = logging.getLogger(__name__)

_UNDECODABLE = re.compile("[\udc80-\udcff]")
# Words in a file name that say which split it holds (GLUE's dev.tsv, MNLI's dev_matched.tsv, WSC's val.jsonl).
_SPLIT_WORDS = {"train": "train", "dev": "validation", "val": "validation", "valid": "validation",
                "validation": "validation", "test": "test"}  # fmt: skip
_SUFFIX_TYPES = {".tsv": "tsv", ".txt": "tsv", ".jsonl": "jsonl"}

# The csv module's field limit is process-wide: nlue.data.sources (imported above) sets it once, to the
# text sources' line limit, so that a quote left open cannot make a field of gigabytes.


@dataclass(frozen=True)
class SourceRow:
    """One valid English row: where it came from, its text by registry field, and its registry label."""

    source_id: str
    file: str
    row: int
    fields: dict[str, str]
    label: Any


@dataclass
class ReadResult:
    format: SourceFormat
    rows: list[SourceRow] = field(default_factory=list)
    rejects: list[RowProblem] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)  # label value -> rows left out on purpose

    @property
    def read(self) -> int:
        return len(self.rows) + len(self.rejects) + sum(self.dropped.values())


def split_from_name(path: Path) -> str | None:
    """The split a source's file name names (``dev_matched.tsv`` -> validation), or None."""
    words = re.split(r"[^a-z]+", path.name.lower())
    found = {_SPLIT_WORDS[w] for w in words if w in _SPLIT_WORDS}
    return found.pop() if len(found) == 1 else None


def _file_type(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix in _SUFFIX_TYPES:
        return _SUFFIX_TYPES[suffix]
    # XGLUE names its files xglue.qadsm.en.train: no suffix tells the type, the first line does.
    return None


def _first_line(path: Path) -> str:
    with path.open("r", encoding="utf-8-sig", errors="replace", newline="") as handle:
        for line in handle:
            if line.strip():
                return line.rstrip("\r\n")
    return ""


def _fits(fmt: SourceFormat, file_type: str | None, first: str) -> bool:
    looks_json = first.lstrip().startswith("{")
    if (file_type or ("jsonl" if looks_json else "tsv")) != fmt.file_type:
        return False
    if fmt.file_type == "jsonl":
        try:
            keys = set(json.loads(first))
        except (ValueError, TypeError):
            return False
        return set(fmt.needed_columns) <= keys
    cells = first.split("\t")
    if fmt.has_header:
        return set(fmt.needed_columns) <= set(cells)
    return len(cells) == len(fmt.columns) and not set(fmt.needed_columns) & set(cells)


def choose_format(task: TaskSpec, path: Path, name: str | None = None) -> SourceFormat:
    """The declared format of ``task`` named ``name``, or the first whose file type and columns fit ``path``."""
    formats = source_formats(task.name)
    if not formats:
        raise NlueError(f"task {task.name!r} declares no English source to translate from")
    if name is not None:
        for fmt in formats:
            if fmt.name == name:
                return fmt
        raise NlueError(
            f"task {task.name!r} has no source format {name!r}; it has {', '.join(f.name for f in formats)}"
        )
    if not path.is_file():
        raise NlueError(f"{path}: source file not found")
    first = _first_line(path)
    for fmt in formats:
        if _fits(fmt, _file_type(path), first):
            return fmt
    expected = "; ".join(f"{f.name}: {f.description}" for f in formats)
    raise NlueError(f"{path}: does not look like any source of task {task.name!r} (first line {first[:120]!r}); "
                    f"expected one of: {expected} (or name one with --format); GLUE's test files carry no labels, "
                    "so translate its train and dev files")  # fmt: skip


def _tsv_records(path: Path, fmt: SourceFormat, problems: list[RowProblem]):
    """``(row, record)`` of a TSV read without quote processing; rows of the wrong width become problems."""
    with path.open("r", encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = list(fmt.columns) if not fmt.has_header else next(reader, None)
        if header is None:
            return
        row = 0
        for cells in reader:
            if not cells or cells == [""]:
                continue
            row += 1
            if len(cells) != len(header):
                problems.append(RowProblem(str(path), row, "(row)",
                                           f"has {len(cells)} tab-separated cells, expected {len(header)}"))  # fmt: skip
                continue
            yield row, dict(zip(header, cells, strict=True))


def _jsonl_records(path: Path, problems: list[RowProblem]):
    for row, record in jsonl_rows(path):
        if isinstance(record, RowProblem):
            problems.append(record)
        else:
            yield row, record


def _get(record: dict[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _substitute(record: dict[str, Any], fmt: SourceFormat) -> str | RowProblem | None:
    """The text with its span replaced by the candidate (WSC's pronoun), or why that cannot be done."""
    sub = fmt.substitution
    if sub is None:
        return None
    text, index, span, candidate = (_get(record, name) for name in (sub.text, sub.index, sub.span, sub.candidate))
    if not isinstance(text, str) or not isinstance(span, str) or not isinstance(candidate, str):
        return RowProblem("", 0, sub.into, f"needs text in {sub.text}, {sub.span} and {sub.candidate}")
    if not isinstance(index, int) or isinstance(index, bool):
        return RowProblem("", 0, sub.into, f"{sub.index} must be a word index", str(index))
    words, span_words = text.split(" "), span.split(" ")
    found = [w.strip(".,;:!?\"'").lower() for w in words[index : index + len(span_words)]]
    if found != [w.lower() for w in span_words]:
        return RowProblem("", 0, sub.into, f"the words at {sub.index}={index} are not {span!r}", " ".join(found))
    tail = words[index + len(span_words) - 1][len(span_words[-1]) :]  # punctuation after the span stays
    return " ".join([*words[:index], candidate + tail, *words[index + len(span_words) :]])


def _converter(task: TaskSpec, fmt: SourceFormat) -> RowConverter:
    columns = {name: column for name, column in fmt.fields.items()}
    if fmt.substitution is not None:
        columns[fmt.substitution.into] = fmt.substitution.into
    if task.label_field:
        columns[task.label_field] = fmt.label_column
    return RowConverter(task, FieldMapping(columns=columns, labels=dict(fmt.labels)))


def read_source(task: TaskSpec, path: Path, format_name: str | None = None) -> ReadResult:
    """Every row of ``path`` as a :class:`SourceRow`, a rejected :class:`RowProblem`, or a counted drop."""
    fmt = choose_format(task, path, format_name)
    converter = _converter(task, fmt)
    result = ReadResult(format=fmt)
    problems: list[RowProblem] = []
    records = _jsonl_records(path, problems) if fmt.file_type == "jsonl" else _tsv_records(path, fmt, problems)
    if fmt.has_header and fmt.file_type == "tsv":
        header = _first_line(path).split("\t")
        missing = [c for c in fmt.needed_columns if c not in header]
        if missing:
            raise NlueError(f"{path}: the {fmt.name} format needs the columns {', '.join(missing)}")
    for row, record in records:
        flat = {column: _get(record, column) for column in {*fmt.fields.values(), fmt.label_column}}
        bad = next((c for c, v in flat.items() if isinstance(v, str) and _UNDECODABLE.search(v)), None)
        if bad is not None:
            result.rejects.append(RowProblem(str(path), row, bad, "not valid UTF-8; save the file as UTF-8"))
            continue
        if fmt.substitution is not None:
            made = _substitute(record, fmt)
            if isinstance(made, RowProblem):
                result.rejects.append(RowProblem(str(path), row, made.field, made.reason, made.value))
                continue
            flat[fmt.substitution.into] = made
        converted = converter.convert(str(path), row, flat)
        if isinstance(converted, Dropped):
            result.dropped[converted.label] += 1
        elif isinstance(converted, RowProblem):
            result.rejects.append(converted)
        else:
            label = converted.pop(task.label_field) if task.label_field else None
            ids = [str(_get(record, c)) for c in fmt.id_columns]
            source_id = "+".join(ids) if ids and all(i != "None" for i in ids) else f"{path.name}:{row}"
            result.rows.append(SourceRow(source_id, str(path), row, converted, label))
    result.rejects[:0] = problems  # rows that could not even be read come first, as the file has them
    result.rejects.sort(key=lambda p: p.row)
    logger.info("%s (%s): %d rows, %d rejected, %d dropped", path, fmt.name, len(result.rows), len(result.rejects),
                sum(result.dropped.values()))  # fmt: skip
    return result
