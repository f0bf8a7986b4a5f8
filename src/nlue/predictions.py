"""Per-item predictions: one schema for every evaluator, written beside its results file.

``<results_dir>/<run>/<task>.predictions.jsonl`` holds one JSON line per scored item::

    {"id": ..., "input_sha256": ..., "prediction": ..., <what else the evaluator knows>, "gold": ...}

* ``id``: the item's id in the dataset (``idx``, or ``id`` for the exams and neDIOM);
* ``input_sha256``: a fingerprint of what the model was shown: the SHA-256 of the item's identity
  fields (the task kind's :meth:`~nlue.registry.kinds.TaskKind.identity_fields`, the same fields
  that decide duplicates when a dataset is built), so two runs can be matched item by item and a
  changed item is noticed;
* ``prediction``: the label id, the score (regression) or the word (GMET); ``None`` for an answer that
  could not be read (an invalid LLM output);
* extras where there are: ``score``, ``loglikelihoods``, ``verdict``, ``output``;
* ``gold``: the reference, written last, so that a reader who stops at the prediction has not seen it.

The results file points to the file (``predictions``) and records the split's fingerprint
(``dataset.fingerprint``): the SHA-256 of every item's id, input fingerprint and gold, in order.
Two runs with the same fingerprint were scored on the same items with the same answers;
``nlue compare`` refuses runs whose fingerprints differ. The file is ``.jsonl`` so that results
readers (they read ``*.json``) pass it by.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.atomic_files import write_text_atomic
from nlue.registry.tasks import TaskSpec
from nlue.results_files import BadResultsFile, iter_json_lines
from nlue.strict_json import dumps_lines

SUFFIX = ".predictions.jsonl"
ID_FIELDS = ("id", "idx")  # a stable id where the data has one (the exams, neDIOM), else the row index


def item_id(item: Mapping[str, Any], position: int) -> Any:
    """An item's id: ``id`` (the exams, neDIOM), else ``idx`` (NLUE's configs), else its position."""
    for name in ID_FIELDS:
        value = item.get(name)
        if value is not None and value != "":
            return value
    return position


def input_fingerprint(task: TaskSpec, item: Mapping[str, Any]) -> str:
    """SHA-256 of the item's identity fields, as the kind defines them (what the model is shown)."""
    fields = task.kind.identity_fields(task)
    values = [item.get(name) for name in fields]
    text = json.dumps(values, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars and arrays become Python numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return value.item()
    return value


def prediction_rows(
    task: TaskSpec,
    items: Sequence[Mapping[str, Any]],
    predictions: Sequence[Any],
    golds: Sequence[Any],
    extras: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per item in the schema of the module docstring (gold last)."""
    if not len(items) == len(predictions) == len(golds) or (extras is not None and len(extras) != len(items)):
        raise ValueError(f"{len(items)} items, {len(predictions)} predictions and {len(golds)} golds do not align")
    rows = []
    for position, (item, prediction, gold) in enumerate(zip(items, predictions, golds, strict=True)):
        row: dict[str, Any] = {
            "id": _plain(item_id(item, position)),
            "input_sha256": input_fingerprint(task, item),
            "prediction": _plain(prediction),
        }
        row.update({k: _plain(v) for k, v in (extras[position] if extras is not None else {}).items()})
        row["gold"] = _plain(gold)
        rows.append(row)
    return rows


def split_fingerprint(rows: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 of every row's id, input fingerprint and gold, in order: the items and answers a run was scored on."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps([row["id"], row["input_sha256"], row["gold"]], ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def predictions_path(results_dir: Path, name: str, result: Any) -> Path:
    """Beside the results file of ``result``: ``<results_dir>/<name>/<task>[.human].predictions.jsonl``."""
    return Path(results_dir) / name / result.predictions_name


def write_predictions(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """The rows as JSON lines, written to a temporary file and moved into place (never half a file)."""
    return write_text_atomic(path, dumps_lines(rows, where=str(path)))


def attach(result: Any, rows: Sequence[Mapping[str, Any]], results_dir: Path, name: str) -> Path:
    """Write ``rows`` beside ``result``'s file, point the result to them and record the split's fingerprint."""
    path = write_predictions(predictions_path(results_dir, name, result), rows)
    result.predictions = path.name
    result.dataset = {**result.dataset, "fingerprint": split_fingerprint(rows)}
    return path


def read_predictions(path: Path) -> list[dict[str, Any]]:
    """The rows of a predictions file, streamed under the limits of :mod:`nlue.results_files`; a clear error
    (a :class:`~nlue.results_files.BadResultsFile`) for a file that is not one."""
    rows = []
    for number, row in iter_json_lines(Path(path)):
        if not isinstance(row, dict) or not {"id", "input_sha256", "prediction", "gold"} <= set(row):
            raise BadResultsFile(f"{path}, line {number}: not a predictions row (id, input_sha256, prediction, gold)")
        rows.append(row)
    return rows


def release_fingerprint(task: TaskSpec, items: Sequence[Mapping[str, Any]]) -> str:
    """The fingerprint a complete run on ``items`` (a split as released) records: the same rows, gold as the answer."""
    golds = [task.kind.gold(task, item) for item in items]
    return split_fingerprint(prediction_rows(task, items, golds, golds))
