"""Human judging of GMET predictions: the run's record files, and importing the judges' verdicts.

Record
    ``predictions.csv`` (UTF-8 with a byte-order mark, so spreadsheet programs show
    Devanagari) and ``predictions.jsonl`` hold one row per item: ``id``, ``category``,
    ``theme``, ``sentence`` (with ``[MASK]``), ``filled`` (the sentence with the predicted
    word in place), ``prediction``, ``top_k``, ``answers`` (`` | ``-separated in the CSV,
    lists in the JSONL) and ``automatic`` (the automatic 0/1 verdict). They are the run's
    record, not what judges see: judges get the blind sheet of :mod:`nlue.gmet.sheet`
    (the sentence and the word only). A judge writes 1 when the word fits the sentence
    (grammatical, meaningful, fitting its context) and 0 when it does not.

Import
    Each judge returns a copy of the sheet (CSV, TSV or JSONL) with ``judgment`` filled
    in; its ``key`` column is mapped back to items through ``sheet_key.json``. (Copies of
    an older ``predictions.csv`` keyed by ``id`` are still read.) Other columns are
    ignored. Every file must give exactly one 0/1 judgment for every key (or item). Problems (unreadable file, missing column, unknown, duplicated or missing ids,
    values other than 0 or 1) are all reported at once, each with file, row and field.

The judges' verdicts are combined by :mod:`nlue.gmet.verdicts`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nlue.data.sources import read_sheet_records
from nlue.errors import NlueError, RowProblem, SourceError
from nlue.strict_json import dumps_lines
from nlue.text.safe import csv_row

TieRule = Literal["automatic", "zero", "one"]
TIE_RULES: tuple[str, ...] = ("automatic", "zero", "one")
RECORD_COLUMNS: tuple[str, ...] = (
    "id", "category", "theme", "sentence", "filled", "prediction", "top_k", "answers", "automatic",
)  # fmt: skip
LIST_SEPARATOR = " | "
MAX_PROBLEMS_SHOWN = 30
_INTEGER = re.compile(r"^[+-]?\d+$")


class JudgmentFileError(NlueError):
    """One or more judgment files cannot be used; ``problems`` says where and why."""

    def __init__(self, problems: Sequence[RowProblem]) -> None:
        self.problems = list(problems)
        shown = [f"  - {p.describe()}" for p in self.problems[:MAX_PROBLEMS_SHOWN]]
        if len(self.problems) > MAX_PROBLEMS_SHOWN:
            shown.append(f"  ... and {len(self.problems) - MAX_PROBLEMS_SHOWN} more")
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"bad judgment file(s), {len(self.problems)} {noun}:\n" + "\n".join(shown))


# ---------------------------------------------------------------------------------------- export
def write_record_files(rows: Sequence[Mapping[str, Any]], out: Path, stem: str = "predictions") -> tuple[Path, Path]:
    """Write the run's per-item record as ``<stem>.csv`` and ``<stem>.jsonl`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, jsonl_path = out / f"{stem}.csv", out / f"{stem}.jsonl"
    columns = list(RECORD_COLUMNS)
    with csv_path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(csv_row(columns))
        for row in rows:
            writer.writerow(csv_row(_cell(row.get(c, "")) for c in columns))
    with jsonl_path.open("w", encoding="utf-8") as handle:
        handle.write(dumps_lines([dict(row) for row in rows], where=str(jsonl_path)))
    return csv_path, jsonl_path


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        return LIST_SEPARATOR.join(str(v) for v in value)
    return "" if value is None else str(value)


# ---------------------------------------------------------------------------------------- reading
JUDGMENT_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".jsonl")


def read_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The data rows of a CSV, TSV or JSONL file as (1-based row number, record) pairs.

    Read by the builder's readers (:func:`nlue.data.sources.read_sheet_records`): the same
    encoding checks, semicolon CSVs and messages, and the spreadsheet guard of the cells we
    wrote taken off; a file-level problem becomes a :class:`JudgmentFileError`.
    """
    path = Path(path)
    name = str(path)
    if path.suffix.lower() not in JUDGMENT_SUFFIXES:
        raise JudgmentFileError([RowProblem(name, 0, "file", "expected a .csv, .tsv or .jsonl judgment file")])
    try:
        rows = list(read_sheet_records(path))
    except SourceError as exc:
        raise JudgmentFileError([exc.problem]) from None
    if not rows:
        raise JudgmentFileError([RowProblem(name, 0, "file", "the file has no data rows")])
    return [(number, dict(record)) for number, record in rows]


def parse_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.match(value.strip()):
        return int(value.strip())
    return None


def parse_judgment(value: Any) -> int | None:
    """0 or 1 from an int, a float 0.0/1.0 or the strings "0"/"1"; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def read_judgments(
    path: Path,
    item_ids: Sequence[int],
    problems: list[RowProblem],
    sheet_keys: Mapping[str, Sequence[int]] | None = None,
) -> dict[int, int]:
    """One judge's 0/1 verdict per item id; problems are appended to ``problems``.

    A judge's copy of a blind sheet (:mod:`nlue.gmet.sheet`) has a ``key`` column;
    ``sheet_keys`` maps each key to the item ids it stands for. A copy of an older
    ``predictions.csv`` has an ``id`` column instead.
    """
    name = str(path)
    try:
        rows = read_rows(Path(path))
    except JudgmentFileError as exc:
        problems.extend(exc.problems)
        return {}
    columns = set().union(*(record.keys() for _, record in rows)) if rows else set()
    if "key" in columns and "id" not in columns:
        if sheet_keys is None:
            problems.append(
                RowProblem(name, 0, "key", "a blind sheet needs its sheet_key.json: give --run (or --sheet-key)")
            )
            return {}
        return _read_sheet_judgments(name, rows, sheet_keys, problems)
    for column in ("id", "judgment"):
        if column not in columns:
            problems.append(
                RowProblem(name, 0, column, f"missing column {column!r} (columns found: {sorted(columns)})")
            )
    if not rows or not {"id", "judgment"} <= columns:
        if not rows:
            problems.append(RowProblem(name, 0, "file", "the file has no data rows"))
        return {}
    wanted = set(item_ids)
    verdicts: dict[int, int] = {}
    first_row: dict[int, int] = {}
    for number, record in rows:
        raw_id = record.get("id")
        item_id = parse_id(raw_id)
        if _blank(raw_id):
            problems.append(RowProblem(name, number, "id", "empty; every row needs the item's id"))
            continue
        if item_id is None:
            problems.append(RowProblem(name, number, "id", "not an item id (an integer)", str(raw_id)))
            continue
        if item_id not in wanted:
            problems.append(RowProblem(name, number, "id", "unknown item id (not among the judged items)", str(raw_id)))
            continue
        if item_id in first_row:
            problems.append(
                RowProblem(
                    name, number, "id", f"duplicated id: item {item_id} was judged already in row {first_row[item_id]}"
                )
            )
            continue
        first_row[item_id] = number
        raw = record.get("judgment")
        if _blank(raw):
            problems.append(RowProblem(name, number, "judgment", "empty; write 1 (right) or 0 (wrong)"))
            continue
        verdict = parse_judgment(raw)
        if verdict is None:
            problems.append(RowProblem(name, number, "judgment", "must be 0 (wrong) or 1 (right)", str(raw)))
            continue
        verdicts[item_id] = verdict
    missing = [i for i in item_ids if i not in first_row]
    if missing:
        shown = ", ".join(str(i) for i in missing[:15]) + (", ..." if len(missing) > 15 else "")
        problems.append(RowProblem(name, 0, "id", f"no row for {len(missing)} item(s): ids {shown}"))
    return verdicts


def _read_sheet_judgments(
    name: str,
    rows: Sequence[tuple[int, Mapping[str, Any]]],
    sheet_keys: Mapping[str, Sequence[int]],
    problems: list[RowProblem],
) -> dict[int, int]:
    """Verdicts from a judge's copy of a blind sheet, spread over the items each key stands for.

    Keys of other runs (a shared sheet) are skipped; every key of this run must be judged once.
    """
    verdicts: dict[int, int] = {}
    first_row: dict[str, int] = {}
    for number, record in rows:
        key = str(record.get("key") or "").strip()
        if not key:
            problems.append(RowProblem(name, number, "key", "empty; every row needs its sheet key"))
            continue
        if key in first_row:
            problems.append(
                RowProblem(name, number, "key", f"duplicated key: {key} was judged already in row {first_row[key]}")
            )
            continue
        first_row[key] = number
        if key not in sheet_keys:
            continue  # a row of another run on a shared sheet (or a key the run does not have)
        raw = record.get("judgment")
        if _blank(raw):
            problems.append(RowProblem(name, number, "judgment", "empty; write 1 (right) or 0 (wrong)"))
            continue
        verdict = parse_judgment(raw)
        if verdict is None:
            problems.append(RowProblem(name, number, "judgment", "must be 0 (wrong) or 1 (right)", str(raw)))
            continue
        for item_id in sheet_keys[key]:
            verdicts[item_id] = verdict
    missing = [key for key in sheet_keys if key not in first_row]
    if missing:
        shown = ", ".join(missing[:15]) + (", ..." if len(missing) > 15 else "")
        problems.append(RowProblem(name, 0, "key", f"no row for {len(missing)} sheet key(s): {shown}"))
    return verdicts


# ---------------------------------------------------------------------------------------- reference items
@dataclass(frozen=True)
class JudgedItem:
    """What the judging import needs to know of one item."""

    id: int
    category: str
    theme: str
    sentence: str
    prediction: str
    answers: tuple[str, ...]
    automatic: int | None


def _as_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    if isinstance(value, str) and value.strip():
        return tuple(v.strip() for v in value.split(LIST_SEPARATOR.strip()) if v.strip())
    return ()


def reference_items(path: Path, *, need_automatic: bool) -> list[JudgedItem]:
    """The judged items from an exported predictions file (or a judge's full copy of it)."""
    name = str(path)
    rows = read_rows(Path(path))
    problems: list[RowProblem] = []
    items: list[JudgedItem] = []
    seen: dict[int, int] = {}
    required = ["id", "category", "prediction"] + (["automatic"] if need_automatic else [])
    for number, record in rows:
        missing = [c for c in required if c not in record]
        if missing:
            problems.append(
                RowProblem(name, number, missing[0], f"the item list needs columns {required}; missing {missing}")
            )
            break
        item_id = parse_id(record.get("id"))
        if item_id is None:
            problems.append(RowProblem(name, number, "id", "not an item id (an integer)", str(record.get("id"))))
            continue
        if item_id in seen:
            problems.append(
                RowProblem(name, number, "id", f"duplicated id: item {item_id} is listed in row {seen[item_id]}")
            )
            continue
        seen[item_id] = number
        automatic = parse_judgment(record.get("automatic")) if "automatic" in record else None
        if need_automatic and automatic is None:
            problems.append(RowProblem(name, number, "automatic", "must be 0 or 1", str(record.get("automatic"))))
            continue
        category = str(record.get("category") or "").strip()
        if not category:
            problems.append(RowProblem(name, number, "category", "empty; every item needs its category"))
            continue
        items.append(
            JudgedItem(
                id=item_id,
                category=category,
                theme=str(record.get("theme") or ""),
                sentence=str(record.get("sentence") or ""),
                prediction=str(record.get("prediction") or ""),
                answers=_as_list(record.get("answers")),
                automatic=automatic,
            )
        )
    if problems:
        raise JudgmentFileError(problems)
    if not items:
        raise JudgmentFileError([RowProblem(name, 0, "file", "no items listed")])
    return items


def write_table(path: Path, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Path:
    """A CSV (UTF-8 with BOM) of ``rows`` restricted to ``columns``; text cells guarded for spreadsheets.

    :func:`read_rows` takes the guard off again (:mod:`nlue.text.safe`).
    """
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(csv_row(columns))
        for row in rows:
            writer.writerow(csv_row(_cell(row.get(c, "")) for c in columns))
    return path
