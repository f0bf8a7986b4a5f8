"""Turning one raw source record into one normalised, validated row of a config.

Every problem is returned as a :class:`~nlue.errors.RowProblem` naming file, row and
field; the builder writes those to the rejects file. Problems that make a whole file
unusable (a missing column) raise :class:`~nlue.errors.SourceError` instead.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.data.normalize import normalize_answer, normalize_text
from nlue.errors import RowProblem, SourceError
from nlue.registry.tasks import GMET_CATEGORY_THEME, GMET_THEMES, MASK_PLACEHOLDER, STSB_SCORE_RANGE, WG_BLANK, TaskSpec

DROP = "drop"
_SHOWN_VALUE_CHARS = 80


@dataclass(frozen=True)
class FieldMapping:
    """How a source in another schema maps onto the registry's schema.

    ``columns`` maps a registry field to the source column that holds it; ``labels``
    maps a raw source label (as text) to a registry label name or id, or to ``drop``;
    ``categories`` (GMET) maps a raw category (as text) to one of the paper's 75
    categories, by English name or by number.
    """

    columns: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    categories: Mapping[str, str] = field(default_factory=dict)

    def source_column(self, name: str) -> str:
        return self.columns.get(name, name)


@dataclass(frozen=True)
class Dropped:
    """A row left out on purpose by the label map (counted, not a rejection)."""

    label: str


@dataclass(frozen=True)
class _BadLabel:
    """Why a raw label value is not a label, and the value as the rejects file shows it."""

    reason: str
    shown: str


_MISSING = object()
_LABEL_MEMO_SIZE = 4096  # distinct raw labels remembered per converter: bounded memory
# The paper's 75 GMET categories in the order of its appendix F.1: category n is GMET_ORDER[n - 1].
GMET_ORDER: tuple[str, ...] = tuple(category for categories in GMET_THEMES.values() for category in categories)
_UNKNOWN_CATEGORY = (
    f"unknown GMET category; expected one of the paper's {len(GMET_ORDER)} categories: its English name "
    f"(`nlue tasks --gmet-categories`), its number 1-{len(GMET_ORDER)} in that list's order, "
    "or a value mapped to one with --category-map"
)
# Commas inside parentheses belong to a name ("Space (sun, moon)"), not between pairs.
_PAIR_SEPARATOR = re.compile(r",(?![^()]*\))")


def parse_pairs(text: str, option: str) -> dict[str, str]:
    """Parse ``a=b,c=d`` as given to ``--column-map`` / ``--label-map``."""
    pairs: dict[str, str] = {}
    for chunk in filter(None, (c.strip() for c in text.split(","))):
        key, sep, value = chunk.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option}: expected KEY=VALUE pairs separated by commas, got {chunk!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_category_map(text: str) -> dict[str, str]:
    """Parse ``--category-map``: ``SOURCE=Category`` pairs, or a CSV/JSON file of pairs.

    Pairs are separated by commas outside parentheses, so a category such as
    ``Space (sun, moon)`` can be written as it is. A ``.json`` file holds one object
    ``{"source": "Category", ...}``; a ``.csv`` file two columns, source then category,
    under a header row.
    """
    option = "--category-map"
    path = Path(text.strip())
    if path.suffix.lower() in (".csv", ".json"):
        if not path.is_file():
            raise ValueError(f"{option}: file {path} not found")
        return _category_pairs_from_file(path, option)
    pairs: dict[str, str] = {}
    for chunk in filter(None, (c.strip() for c in _PAIR_SEPARATOR.split(text))):
        key, sep, value = chunk.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option}: expected SOURCE=CATEGORY pairs separated by commas, got {chunk!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def _category_pairs_from_file(path: Path, option: str) -> dict[str, str]:
    try:
        if path.suffix.lower() == ".json":
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(loaded, dict):
                raise ValueError(f"{option}: {path} must hold one JSON object of source: category pairs")
            return {str(k).strip(): str(v).strip() for k, v in loaded.items()}
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{option}: cannot read {path}: {exc}") from None
    pairs: dict[str, str] = {}
    for number, row in enumerate(rows[1:], start=1):  # the first row is the header
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != 2 or not row[0].strip() or not row[1].strip():
            raise ValueError(f"{option}: {path}, row {number}: expected two columns, source and category, got {row!r}")
        pairs[row[0].strip()] = row[1].strip()
    return pairs


def _shown(value: Any) -> str:
    text = str(value)
    return text if len(text) <= _SHOWN_VALUE_CHARS else text[: _SHOWN_VALUE_CHARS - 1] + "…"


def _label_key(value: Any) -> str:
    """The text form of a raw label, so 1, 1.0 and "1" all map alike."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


class RowConverter:
    """Validates and normalises the records of one source file for one task."""

    def __init__(self, task: TaskSpec, mapping: FieldMapping | None = None) -> None:
        self.task = task
        self.mapping = mapping or FieldMapping()
        known = (*self.required_fields, *self.optional_fields)
        unknown = set(self.mapping.columns) - set(known)
        if unknown:
            raise ValueError(
                f"--column-map names {', '.join(sorted(unknown))}, which task {task.name!r} "
                f"does not have; its fields are {', '.join(known)}"
            )
        # convert() runs once per source row: look the task's properties up once here.
        self._text_columns = tuple((name, self.mapping.source_column(name)) for name in task.text_fields)
        self._label_column = self.mapping.source_column(task.label_field) if task.label_field else ""
        self._label2id = task.label2id
        self._mask_fill = task.problem_type == "mask_fill"
        self._wg = task.name == "wg"
        self._label_memo: dict[str | int, Any] = {}
        self._categories = _category_lookup(self.mapping.categories) if self._mask_fill else {}

    @property
    def required_fields(self) -> tuple[str, ...]:
        if self.task.problem_type == "mask_fill":
            return ("sentence", "category")
        assert self.task.label_field is not None
        return (*self.task.input_fields, self.task.label_field)

    @property
    def optional_fields(self) -> tuple[str, ...]:
        """Columns read when present. GMET: the paper gives only sentences, so a release may
        lack our acceptable answers (scored by human judging) and the derived theme."""
        return ("theme", "answers") if self.task.problem_type == "mask_fill" else ()

    def check_columns(self, path: str, row: int, columns: Iterable[str]) -> None:
        """Raise a SourceError naming the first registry field the source lacks."""
        present = set(columns)
        for name in self.required_fields:
            column = self.mapping.source_column(name)
            if column not in present:
                mapped = f" (mapped from column {column!r})" if column != name else ""
                raise SourceError(
                    RowProblem(
                        path, row, name,
                        f"missing column{mapped}; task {self.task.name!r} needs "
                        f"{', '.join(self.required_fields)}; the file has "
                        f"{', '.join(sorted(present)) or 'no columns'} "
                        "(use --column-map FIELD=COLUMN for another schema)",
                    )
                )  # fmt: skip

    def convert(self, path: str, row: int, record: Mapping[str, Any]) -> dict[str, Any] | RowProblem | Dropped:
        """Return the normalised row, the reason it is rejected, or Dropped."""
        out: dict[str, Any] = {}
        for name, column in self._text_columns:
            value = record.get(column)
            if value is None:
                return RowProblem(path, row, name, "missing value")
            if not isinstance(value, str):
                value = str(value)
            text = normalize_text(value)
            if not text:
                return RowProblem(path, row, name, "empty text after normalisation", _shown(value))
            out[name] = text
        if self._mask_fill:
            return self._convert_gmet(path, row, record, out)
        if self._wg and out["sentence"].count(WG_BLANK) != 1:
            return RowProblem(
                path, row, "sentence",
                f"expected exactly one blank {WG_BLANK!r}, found {out['sentence'].count(WG_BLANK)}",
                _shown(out["sentence"]),
            )  # fmt: skip
        label_field = self.task.label_field
        assert label_field is not None
        raw = record.get(self._label_column)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return RowProblem(path, row, label_field, "missing label")
        label = self._label_of(raw)
        if isinstance(label, Dropped):
            return label
        if isinstance(label, _BadLabel):
            return RowProblem(path, row, label_field, label.reason, label.shown)
        out[label_field] = label
        return out

    def _label_of(self, raw: Any) -> Any:
        """The label of a raw value: its id or score, Dropped, or _BadLabel.

        Remembered for text and int values: a source repeats a handful of label values
        a million times. Floats are not (0.0 and -0.0 are equal keys but distinct scores).
        """
        if type(raw) not in (str, int):
            return self._parse_label(raw)
        label = self._label_memo.get(raw, _MISSING)
        if label is _MISSING:
            label = self._parse_label(raw)
            if len(self._label_memo) < _LABEL_MEMO_SIZE:
                self._label_memo[raw] = label
        return label

    def _parse_label(self, raw: Any) -> Any:
        labels = self.mapping.labels
        if labels:
            key = _label_key(raw)
            if key in labels:
                target = labels[key]
                if target == DROP:
                    return Dropped(key)
                raw = target
        label = self._parse_score(raw) if self.task.problem_type == "regression" else self._parse_class(raw)
        if isinstance(label, str):
            return _BadLabel(label, _shown(raw))
        return label

    def _parse_score(self, raw: Any) -> float | str:
        low, high = STSB_SCORE_RANGE
        try:
            score = float(raw)
        except (TypeError, ValueError):
            return f"expected a number from {low:g} to {high:g}"
        if not math.isfinite(score) or not low <= score <= high:
            return f"score outside {low:g}-{high:g}"
        return score

    def _parse_class(self, raw: Any) -> int | str:
        key = _label_key(raw)
        names = self.task.label_names
        label_id = self._label2id.get(key)
        if label_id is not None:
            return label_id
        try:
            number = int(key)
        except ValueError:
            number = None
        if self.task.name == "wg":
            # Sources (and the paper) give the answer as 1 or 2: the correct option.
            if number in (1, 2):
                return number - 1
            return "expected answer 1 or 2 (the correct option), or option1/option2"
        if number is not None and 0 <= number < len(names):
            return number
        expected = ", ".join(f"{i}={n}" for i, n in enumerate(names))
        return f"unknown label; expected one of {expected} (id or name), or map it with --label-map"

    def _convert_gmet(
        self, path: str, row: int, record: Mapping[str, Any], out: dict[str, Any]
    ) -> dict[str, Any] | RowProblem:
        sentence = out["sentence"]
        masks = sentence.count(MASK_PLACEHOLDER)
        if masks != 1:
            return RowProblem(
                path,
                row,
                "sentence",
                f"expected exactly one {MASK_PLACEHOLDER}, found {masks}",
                _shown(sentence),
            )
        raw_category = record.get(self.mapping.source_column("category"))
        category = self._category_of(raw_category)
        if category is None:
            shown = "" if raw_category is None else _shown(normalize_text(_label_key(raw_category)))
            return RowProblem(path, row, "category", _UNKNOWN_CATEGORY, shown)
        theme = GMET_CATEGORY_THEME[category]
        given_theme = record.get(self.mapping.source_column("theme"))
        if given_theme not in (None, "") and normalize_text(str(given_theme)) != theme:
            return RowProblem(
                path, row, "theme", f"category {category!r} belongs to theme {theme!r}", _shown(given_theme)
            )
        answers = _parse_answers(record.get(self.mapping.source_column("answers")))
        if isinstance(answers, str):
            return RowProblem(path, row, "answers", answers)
        out.update(category=category, theme=theme, answers=answers)
        return out

    def _category_of(self, raw: Any) -> str | None:
        """The paper's category a raw value names (mapped, English name or number), else None."""
        if raw is None:
            return None
        key = normalize_text(_label_key(raw))
        return self._categories.get(key) or _category_by_number(key)


def _category_by_number(key: str) -> str | None:
    """Category ``key`` of the paper's list, counted from 1 (int() also reads Devanagari digits)."""
    try:
        number = int(key)
    except ValueError:
        return None
    return GMET_ORDER[number - 1] if 1 <= number <= len(GMET_ORDER) else None


def _category_lookup(pairs: Mapping[str, str]) -> dict[str, str]:
    """Raw category text -> the paper's category: the English names, then the user's map.

    A mapped value may name its category in English or by number; a map to anything else
    is refused before any row is read, naming the pair.
    """
    lookup = {name: name for name in GMET_ORDER}
    for source, target in pairs.items():
        name = normalize_text(target)
        category = name if name in GMET_CATEGORY_THEME else _category_by_number(name)
        if category is None:
            raise ValueError(
                f"--category-map maps {source!r} to {target!r}, which is not one of the paper's "
                f"{len(GMET_ORDER)} GMET categories; give an English name listed by "
                f"`nlue tasks --gmet-categories` or its number 1-{len(GMET_ORDER)}"
            )
        lookup[normalize_text(source)] = category
    return lookup


def _parse_answers(raw: Any) -> list[str] | str:
    """Answers as a list, a JSON list in text, or text separated by ``|``.

    No answers (null, an empty cell, an empty list) is an empty list: the paper's items
    have none, and such an item is scored by human judging only.
    """
    if raw is None:
        return []
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return []
        if text.startswith("["):
            try:
                raw = json.loads(text)
            except json.JSONDecodeError:
                return "answers look like a JSON list but do not parse"
        else:
            raw = text.split("|")
    if not isinstance(raw, (list, tuple)):
        return "expected a list of acceptable words"
    if not raw:
        return []
    words: list[str] = []
    for item in raw:
        word = normalize_answer(str(item))
        if word and word not in words:
            words.append(word)
    if not words:
        return "answers were given but hold no word after normalisation; leave them empty for an item judged by people"
    return words
