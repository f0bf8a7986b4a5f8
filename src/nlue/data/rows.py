"""Turning one raw source record into one normalised, validated row of a config.

Every problem is returned as a :class:`~nlue.errors.RowProblem` naming file, row and
field; the builder writes those to the rejects file. Problems that make a whole file
unusable (a missing column) raise :class:`~nlue.errors.SourceError` instead.

The rules themselves are the task kind's (:mod:`nlue.registry.kinds`): which fields a
row needs, how a raw label is read, what else a row must satisfy (a blank to fill, a
mask, a category). This module applies them to a source's records.

Text fields must hold text. CSV/TSV cells always do; in typed sources (JSON, JSONL,
Parquet) an integer or finite float is taken as its text (a query, a model number or a
year given as an option can be a number) and a boolean, NaN, infinity, list, object or
bytes is rejected, naming what was found (:func:`nlue.text.values.source_text` says why).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nlue.data.mapping import DROP, FieldMapping
from nlue.data.text_files import listed, shown
from nlue.errors import NlueError, RowProblem, SourceError
from nlue.registry.kinds import RowRejection, TaskKind
from nlue.registry.kinds.classification import label_key
from nlue.registry.tasks import TaskSpec
from nlue.text.profiles import profile_of
from nlue.text.values import NotText, source_text

_SHOWN_VALUE_CHARS = 80
_MISSING = object()
_LABEL_MEMO_SIZE = 4096  # distinct raw labels remembered per converter: bounded memory


@dataclass(frozen=True)
class Dropped:
    """A row left out on purpose by the label map (counted, not a rejection)."""

    label: str


@dataclass(frozen=True)
class BadLabel:
    """Why a raw label value is not a label, and the value as the rejects file shows it."""

    reason: str
    shown: str


def _shown(value: Any) -> str:
    text = str(value)
    return text if len(text) <= _SHOWN_VALUE_CHARS else text[: _SHOWN_VALUE_CHARS - 1] + "…"


def check_mapping(task: TaskSpec, mapping: FieldMapping) -> None:
    """Refuse a mapping that cannot apply to ``task``, before any row is read (the builder calls this first).

    A column map naming a field the task lacks, a category map for a task without categories,
    and a label map target that is not a label of the task (nor ``drop``): found later, the last
    would reject every row carrying that source value, one by one, as an "unknown label".
    """
    known = (*task.kind.required_fields(task), *task.kind.optional_fields(task))
    unknown = set(mapping.columns) - set(known)
    if unknown:
        raise NlueError(
            f"--column-map names {', '.join(sorted(unknown))}, which task {task.name!r} "
            f"does not have; its fields are {', '.join(known)}"
        )
    if mapping.categories and not task.categories:
        raise NlueError(f"--category-map applies to tasks with categories; {task.name!r} has none")
    if not mapping.labels:
        return
    if task.label_field is None:
        raise NlueError(f"--label-map: task {task.name!r} has no label field to map")
    for key, target in mapping.labels.items():
        if target == DROP or not isinstance(task.kind.parse_label(task, target), str):
            continue
        if task.label_values:  # WinoGrande's 1 or 2, or a name
            expected = f"its labels are {', '.join(task.label_names)} (or {' or '.join(task.label_values)})"
        elif task.label_names:
            ids = ", ".join(f"{i}={name}" for i, name in enumerate(task.label_names))
            expected = f"its labels are {ids} (a name or an id)"
        else:
            expected = str(task.kind.parse_label(task, target))
        raise NlueError(
            f"--label-map: {key}={target}: {target!r} is not a label of task {task.name!r}; {expected}, "
            f"or {DROP!r} to leave such rows out"
        )


class RowConverter:
    """Validates and normalises the records of one source file for one task."""

    def __init__(self, task: TaskSpec, mapping: FieldMapping | None = None) -> None:
        self.task = task
        self.kind = task.kind
        self.mapping = mapping or FieldMapping()
        check_mapping(task, self.mapping)
        # convert() runs once per source row: look the task's properties up once here.
        self._text_columns = tuple((name, self.mapping.source_column(name)) for name in task.text_fields)
        self._label_column = self.mapping.source_column(task.label_field) if task.label_field else ""
        self._label_memo: dict[str | int, Any] = {}
        # The task's language profile decides the text rules (nepali, urdu, plain, or one a user declared).
        self.profile = profile_of(task)
        self._normalize = self.profile.normalizer()
        # Only kinds that complete a row from further fields (GMET's category, theme, answers) pay for it.
        self._completes = type(self.kind).complete_row is not TaskKind.complete_row
        self._context = self.kind.row_context(task, self.mapping.categories)

    @property
    def required_fields(self) -> tuple[str, ...]:
        return self.kind.required_fields(self.task)

    @property
    def optional_fields(self) -> tuple[str, ...]:
        """Columns read when present (GMET: the paper gives only sentences, so no answers is allowed)."""
        return self.kind.optional_fields(self.task)

    def check_columns(self, path: str, row: int, columns: Iterable[str]) -> None:
        """Raise a SourceError naming the first registry field the source lacks."""
        names = list(columns)
        present = set(names)
        for name in self.required_fields:
            column = self.mapping.source_column(name)
            if column not in present:
                mapped = f" (mapped from column {shown(column)!r})" if column != name else ""
                raise SourceError(
                    RowProblem(
                        path, row, name,
                        f"missing column{mapped}; task {self.task.name!r} needs "
                        f"{', '.join(self.required_fields)}; the file has {listed(names) or 'no columns'} "
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
            if type(value) is not str:  # the common case costs one type check per field
                try:
                    value = source_text(value)
                except NotText as exc:
                    return RowProblem(path, row, name, exc.reason, _shown(exc.shown))
            text = self._normalize(value)
            if not text:
                return RowProblem(path, row, name, "empty text after normalisation", _shown(value))
            out[name] = text
        rejection = self.kind.check_row(self.task, out)
        if rejection is not None:
            return self._problem(path, row, rejection)
        if self._completes:
            extra = self.kind.complete_row(
                self.task, lambda field: record.get(self.mapping.source_column(field)), self._context
            )
            if isinstance(extra, RowRejection):
                return self._problem(path, row, extra)
            out.update(extra)
        label_field = self.task.label_field
        if label_field is None:
            return out
        raw = record.get(self._label_column)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return RowProblem(path, row, label_field, "missing label")
        label = self.label_of(raw)
        if isinstance(label, Dropped):
            return label
        if isinstance(label, BadLabel):
            return RowProblem(path, row, label_field, label.reason, label.shown)
        out[label_field] = label
        return out

    @staticmethod
    def _problem(path: str, row: int, rejection: RowRejection) -> RowProblem:
        return RowProblem(
            path, row, rejection.field, rejection.reason, _shown(rejection.value) if rejection.value else ""
        )

    def label_of(self, raw: Any) -> Any:
        """The label of a raw value (not missing): its id or score, Dropped, or BadLabel.

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
            key = label_key(raw)
            if key in labels:
                target = labels[key]
                if target == DROP:
                    return Dropped(key)
                raw = target
        label = self.kind.parse_label(self.task, raw)
        if isinstance(label, str):
            return BadLabel(label, _shown(raw))
        return label
