"""Validating and normalising a batch of source rows column by column (classification, regression).

What :class:`nlue.data.rows.RowConverter` does to one record, done to a whole batch with
Arrow kernels, for the rows whose outcome a rule on the columns can decide:

* a text made of the characters the task's language profile leaves alone wherever they stand
  (:func:`nlue.text.bulk.bulk_characters`: for ``nepali``, printable ASCII but ``|`` and the
  Devanagari letters, signs and digits whose canonical combining class is 0 and that NFC
  leaves alone; for ``urdu``, printable ASCII and such Arabic-script letters, but the ones it
  folds), with no space at either end and no two spaces in a row, is its own normalised form:
  the profile's normaliser returns it unchanged. One regular expression
  (:attr:`nlue.text.bulk.BulkRules.needs_row_path`) finds every other text;
* of those, a text made of the same characters (and ``|``, for a profile with danda rules)
  whose only untidiness is its spaces and one run of one or two pipes is normalised in bulk
  (:func:`_tidy`: trim, collapse the spaces, two rewrites for the pipe rules);
* the blank rule of a task with a blank (WinoGrande's ``_``), counted with Arrow;
* a label is read once per distinct raw value of the batch (``RowConverter.label_of``,
  the row path's own reading), then spread to the rows by Arrow's dictionary encoding.

Any other row (a text that needs normalising or is missing, empty, not a string; a label
that is missing or unknown) goes through ``RowConverter.convert`` itself, so its
normalised text, or the reject it becomes with its message, is the row path's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nlue.data.arrow_sources import SourceBatch, column_values
from nlue.data.mapping import FieldMapping
from nlue.data.rows import BadLabel, Dropped, RowConverter
from nlue.data.text_keys import hash_array, loose_keys, row_fingerprints
from nlue.errors import RowProblem
from nlue.registry.features import task_features
from nlue.registry.kinds import TaskKind
from nlue.registry.tasks import TaskSpec
from nlue.text.bulk import BulkRules, bulk_rules
from nlue.text.profiles import profile_of

_VALID, _DROPPED, _ROW_PATH = 0, 1, 2


FINGERPRINT_COLUMN = "__nlue_fingerprint"
ROW_PATH_COLUMN = "__nlue_row_path"
LOOSE_COLUMN = "__nlue_loose"


def field_key_names(task: TaskSpec) -> tuple[str, ...]:
    """The fields keyed one by one for the shared-field counts (tasks with two or more inputs)."""
    return task.input_fields if len(task.input_fields) >= 2 else ()


def field_key_column(name: str) -> str:
    return f"__nlue_field_{name}"


def key_fields(task: TaskSpec) -> list[pa.Field]:
    """The columns a converted table carries beside the config's columns, in order.

    Appended when the rows are read: the fingerprint of the row's inputs (repeats and
    leaks) and whether the row went through the row path (its text may hold any
    character). Appended by :func:`with_overlap_keys` where the overlap counts need
    them: the key of the folded inputs (near-duplicates) and, for tasks with two or more
    inputs, each input's key (shared fields).
    """
    names = [FINGERPRINT_COLUMN, ROW_PATH_COLUMN, LOOSE_COLUMN, *map(field_key_column, field_key_names(task))]
    return [pa.field(name, pa.bool_() if name == ROW_PATH_COLUMN else pa.uint64()) for name in names]


def with_overlap_keys(task: TaskSpec, table: pa.Table) -> pa.Table:
    """A converted table with its rows' overlap keys appended (see :func:`key_fields`)."""
    columns = [table.column(name) for name in task.input_fields]
    # Rows normalised in bulk hold ASCII and Devanagari only where the profile's bulk characters are
    # those (nepali, plain); the row path's may hold anything.
    if bulk_rules(profile_of(task)).beyond_byte_fold:
        suspects = None
    else:
        suspects = np.flatnonzero(_flags(table.column(ROW_PATH_COLUMN)))
    table = table.append_column(LOOSE_COLUMN, pa.array(loose_keys(columns, suspects=suspects), type=pa.uint64()))
    for name in field_key_names(task):
        table = table.append_column(field_key_column(name), pa.array(hash_array(table.column(name)), pa.uint64()))
    return table


def supports_columnar(task: TaskSpec) -> bool:
    """Whether a task's row rules are all ones this module applies column-wise.

    Its kind adds no rule beyond the input shape and completes no field from others, its
    texts are its inputs and identify its items, and its label is one id or score column.
    """
    kind = type(task.kind)
    if task.label_field is None or kind.check_row is not TaskKind.check_row:
        return False
    if kind.complete_row is not TaskKind.complete_row:
        return False
    fields = task.input_fields
    if task.kind.text_fields(task) != fields or task.kind.identity_fields(task) != fields:
        return False
    schema = task_features(task).arrow_schema
    if schema.names != [*fields, task.label_field, "idx"]:
        return False
    label_type = schema.field(task.label_field).type
    texts_are_strings = all(schema.field(name).type == pa.string() for name in fields)
    return texts_are_strings and label_type in (pa.int64(), pa.float64())


@dataclass
class ConvertedBatch:
    """The valid rows of a source batch as a table of the config's columns (no ``idx``) and keys, and the rest.

    ``problems`` are the rejected rows, each with the number of valid rows before it (as
    the row path's batches note them); ``dropped`` counts rows the label map leaves out.
    """

    path: str
    table: pa.Table
    row_numbers: np.ndarray
    keys: np.ndarray
    label_codes: np.ndarray | None
    problems: list[tuple[int, RowProblem]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)

    def head(self, rows: int) -> ConvertedBatch:
        """The first ``rows`` valid rows alone."""
        codes = None if self.label_codes is None else self.label_codes[:rows]
        return ConvertedBatch(self.path, self.table.slice(0, rows), self.row_numbers[:rows], self.keys[:rows], codes)


class ColumnarConverter:
    """Validates and normalises batches of one source for one task (see the module docstring)."""

    def __init__(self, task: TaskSpec, mapping: FieldMapping | None = None) -> None:
        if not supports_columnar(task):
            raise ValueError(f"task {task.name!r} has row rules the columnar builder does not apply")
        self.task = task
        self.rows = RowConverter(task, mapping)
        self.fields = task.input_fields
        self.text_columns = tuple((name, self.rows.mapping.source_column(name)) for name in self.fields)
        self.label_field = str(task.label_field)
        self.label_column = self.rows.mapping.source_column(self.label_field)
        self.schema = task_features(task).arrow_schema
        self.schema = self.schema.remove(self.schema.get_field_index("idx"))
        self.label_type = self.schema.field(self.label_field).type
        self.label_values_dtype = np.dtype(np.int64 if self.label_type == pa.int64() else np.float64)
        self.bulk = bulk_rules(self.rows.profile)
        spec = task.input_spec
        self.blank = (spec.blank_field, spec.blank) if spec.blank is not None and spec.blank_field else None

    @property
    def wanted_columns(self) -> list[str]:
        """The source columns a row is made of."""
        return list(dict.fromkeys([column for _, column in self.text_columns] + [self.label_column]))

    def convert(self, path: str, batch: SourceBatch) -> ConvertedBatch:
        count = batch.num_rows
        row_path = np.zeros(count, dtype=bool)
        texts: dict[str, pa.Array | None] = {}
        for name, column in self.text_columns:
            array, not_text = self._text_column(batch, column)
            texts[name] = array
            if array is None:
                row_path[:] = True
                continue
            if not_text is not None:
                row_path |= not_text
            needs_work = _flags(pc.match_substring_regex(array, self.bulk.needs_row_path))
            if needs_work.any():
                array, unfixed = _tidy(array, needs_work, self.bulk)
                texts[name] = array
                row_path |= unfixed
            if self.blank is not None and self.blank[0] == name:
                row_path |= _flags(pc.not_equal(pc.count_substring(array, self.blank[1]), 1))
        status, values, dropped_keys = self._labels(batch)
        row_path |= status == _ROW_PATH
        valid = ~row_path & (status == _VALID)
        dropped: Counter[str] = Counter()
        left_out = np.flatnonzero(~row_path & (status == _DROPPED))
        if len(left_out):
            dropped.update(dropped_keys[i] for i in left_out.tolist())
        problems: list[tuple[int, RowProblem]] = []
        converted: list[int] = []
        replacements: dict[str, list[str]] = {name: [] for name in self.fields}
        positions = np.flatnonzero(row_path)
        if len(positions):
            numbers = batch.row_numbers[positions].tolist()
            for position, number, record in zip(positions.tolist(), numbers, batch.records_at(positions), strict=True):
                result = self.rows.convert(path, number, record)
                if type(result) is dict:
                    converted.append(position)
                    for name in self.fields:
                        replacements[name].append(result[name])
                    values[position] = result[self.label_field]
                elif isinstance(result, Dropped):
                    dropped[result.label] += 1
                else:
                    problems.append((position, result))
            valid[converted] = True
        table = self._table(texts, valid, converted, replacements, values, all_row_path=bool(row_path.all()))
        kept_before = np.cumsum(valid)
        noted = [(int(kept_before[position]), problem) for position, problem in problems]
        codes = self.task.kind.label_codes(self.task, values[valid])
        from_row_path = np.zeros(int(kept_before[-1]) if count else 0, dtype=bool)
        if converted:
            from_row_path[kept_before[converted] - 1] = True
        keys = row_fingerprints([table.column(name) for name in self.fields])
        table = table.append_column(FINGERPRINT_COLUMN, pa.array(keys, type=pa.uint64()))
        table = table.append_column(ROW_PATH_COLUMN, pa.array(from_row_path))
        return ConvertedBatch(path, table, batch.row_numbers[valid], keys, codes, noted, dropped)

    def _table(
        self,
        texts: dict[str, pa.Array | None],
        valid: np.ndarray,
        converted: list[int],
        replacements: dict[str, list[str]],
        values: np.ndarray,
        all_row_path: bool,
    ) -> pa.Table:
        """The valid rows' columns: bulk texts with the row path's texts put in, in source order."""
        columns: list[pa.Array] = []
        mask = None
        if converted and not all_row_path:
            flags = np.zeros(len(valid), dtype=bool)
            flags[converted] = True
            mask = pa.array(flags)
        keep = None if valid.all() else pa.array(valid)
        for name in self.fields:
            given = pa.array(replacements[name], type=pa.string())
            text = texts[name]
            if all_row_path or text is None:
                columns.append(given)  # every valid row came from the row path, in order
                continue
            if mask is not None:
                text = pc.replace_with_mask(text, mask, given)
            columns.append(text if keep is None else text.filter(keep))
        columns.append(pa.array(values[valid], type=self.label_type))
        return pa.Table.from_arrays(columns, schema=self.schema)

    def _text_column(self, batch: SourceBatch, column: str) -> tuple[pa.Array | None, np.ndarray | None]:
        """A text column as strings (placeholders where a row holds no string) and which rows hold none.

        None when no row can be decided in bulk (the column is absent or not of strings).
        """
        if batch.table is not None:
            if column not in batch.table.column_names:
                return None, None
            array = batch.table.column(column).combine_chunks()
            if not _is_text(array.type):
                return None, None
            array = array.cast(pa.string())
            missing = _flags(array.is_null()) if array.null_count else None
            return (pc.fill_null(array, "") if missing is not None else array), missing
        assert batch.records is not None
        given = column_values(batch.records, column)
        not_text = np.fromiter((type(value) is not str for value in given), dtype=bool, count=len(given))
        if not_text.any():
            given = ["" if flag else value for flag, value in zip(not_text.tolist(), given, strict=True)]
            return pa.array(given, type=pa.string()), not_text
        return pa.array(given, type=pa.string()), None

    def _labels(self, batch: SourceBatch) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Per row: whether its label is valid, dropped or for the row path; its value; its drop key."""
        count = batch.num_rows
        encoded = self._encoded_labels(batch)
        if encoded is None:
            return np.full(count, _ROW_PATH, dtype=np.int8), np.zeros(count, self.label_values_dtype), []
        indices, distinct = encoded
        status = np.empty(len(distinct) + 1, dtype=np.int8)
        values = np.zeros(len(distinct) + 1, dtype=self.label_values_dtype)
        keys = [""] * (len(distinct) + 1)
        status[-1] = _ROW_PATH  # a null label: the row path says it is missing
        for i, raw in enumerate(distinct):
            status[i], values[i], keys[i] = self._label_outcome(raw)
        row_values = values[indices]
        row_keys = [keys[i] for i in indices.tolist()] if (status == _DROPPED).any() else []
        return status[indices], row_values, row_keys

    def _label_outcome(self, raw: Any) -> tuple[int, Any, str]:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return _ROW_PATH, 0, ""
        label = self.rows.label_of(raw)
        if isinstance(label, Dropped):
            return _DROPPED, 0, label.label
        if isinstance(label, BadLabel):
            return _ROW_PATH, 0, ""
        return _VALID, label, ""

    def _encoded_labels(self, batch: SourceBatch) -> tuple[np.ndarray, list[Any]] | None:
        """Each row's index into the batch's distinct raw labels (-1: null), and those labels."""
        if batch.table is not None:
            if self.label_column not in batch.table.column_names:
                return None
            array = batch.table.column(self.label_column).combine_chunks()
        else:
            assert batch.records is not None
            array = _typed_array(column_values(batch.records, self.label_column))
            if array is None:
                return self._python_labels(column_values(batch.records, self.label_column))
        kind = array.type
        floats = pa.types.is_floating(kind)
        if floats:
            # By bit pattern: 0.0 and -0.0 are different scores, as the row path stores them.
            array = array.cast(pa.float64()).view(pa.int64())
        elif _is_text(kind):
            array = array.cast(pa.string())
        elif not pa.types.is_integer(kind):
            return None
        encoded = pc.dictionary_encode(array)
        indices = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.intp)
        distinct = encoded.dictionary.to_numpy(zero_copy_only=False)
        if floats:
            return indices, distinct.view(np.float64).tolist()
        return indices, encoded.dictionary.to_pylist()

    def _python_labels(self, given: list[Any]) -> tuple[np.ndarray, list[Any]]:
        """Indices into distinct raw labels of values of mixed types (equal only when of one type)."""
        seen: dict[tuple[type, Any], int] = {}
        distinct: list[Any] = []
        indices = np.empty(len(given), dtype=np.intp)
        for i, raw in enumerate(given):
            if raw is None:
                indices[i] = -1
                continue
            key = (type(raw), raw if type(raw) is not float else raw.hex())
            try:
                index = seen.setdefault(key, len(distinct))
            except TypeError:  # unhashable (a list, an object): its own entry
                index = len(distinct)
            if index == len(distinct):
                distinct.append(raw)
            indices[i] = index
        return indices, distinct


def _tidy(array: pa.Array, needs_work: np.ndarray, rules: BulkRules) -> tuple[pa.Array, np.ndarray]:
    """Normalise in bulk the texts whose only untidiness is spaces and one run of one or two pipes.

    Such a text (one ``rules.not_tidy_in_bulk`` does not match) is normalised by trimming it,
    collapsing its space runs and, for a profile with danda rules, applying them, which for
    one pipe run come down to two rewrites (``rules.pipe_rewrites``). Returns the array with
    those texts replaced, and the rows left for the row path (other texts, and texts that end
    up empty, which the row path rejects).
    """
    positions = np.flatnonzero(needs_work)
    picked = array.take(pa.array(positions, type=pa.int64()))
    bulk = ~_flags(pc.match_substring_regex(picked, rules.not_tidy_in_bulk))
    unfixed = needs_work.copy()
    if not bulk.any():
        return array, unfixed
    text = pc.utf8_trim(picked.filter(pa.array(bulk)), " ")
    text = _rewrite_where(text, "  ", (("  +", " "),))
    if rules.pipe_rewrites:
        text = _rewrite_where(text, "|", rules.pipe_rewrites)
    nonempty = _flags(pc.greater(pc.binary_length(text), 0))
    fixed = positions[bulk][nonempty]
    unfixed[fixed] = False
    mask = np.zeros(len(array), dtype=bool)
    mask[fixed] = True
    return pc.replace_with_mask(array, pa.array(mask), text.filter(pa.array(nonempty))), unfixed


def _rewrite_where(text: pa.Array, marker: str, rewrites: tuple[tuple[str, str], ...]) -> pa.Array:
    """``rewrites`` applied to the texts holding ``marker`` only (a regex pass costs the bytes it reads)."""
    has = _flags(pc.match_substring(text, marker))
    if not has.any():
        return text
    picked = text.filter(pa.array(has))
    for pattern, replacement in rewrites:
        picked = pc.replace_substring_regex(picked, pattern, replacement)
    return pc.replace_with_mask(text, pa.array(has), picked)


def _typed_array(given: list[Any]) -> pa.Array | None:
    """``given`` as an Arrow array when every value is a string, or every value an int (bools are not)."""
    kinds = {type(value) for value in given}
    kinds.discard(type(None))
    if kinds == {str}:
        return pa.array(given, type=pa.string())
    if kinds == {int}:
        try:
            return pa.array(given, type=pa.int64())
        except (OverflowError, pa.ArrowInvalid):
            return None
    return None


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        return _is_text(kind.value_type)
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)


def _flags(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)
