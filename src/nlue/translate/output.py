"""What a translation run writes, and how: whole files or nothing (where: :mod:`nlue.data.translation_layout`).

``--out DIR`` is a source folder for ``nlue build --source DIR``:

* ``DIR/<config>/<split>.translated.jsonl`` - the translated rows in the registry's schema
  (the builder takes ``<split>.*`` files and reads only the registry's fields), each with
  its provenance: source file, row and id, the English text, the batch and request part,
  the model and the prompt version;
* ``DIR/_translate/<config>-<split>/`` - the run's own files, which the builder skips (a
  leading ``_``): ``rejects.jsonl`` (every row left out, with file, row, field, stage and reason) and
  ``report.json`` (counts of every failure kind, class balance before and after, tokens). Every answer
  is kept in the answer cache (:mod:`nlue.lm.answer_cache`), which makes a run resumable.

Each file is written to a temporary file in its folder and moved into place when complete.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nlue.errors import RowProblem
from nlue.registry.spec import TaskSpec
from nlue.strict_json import dumps
from nlue.translate.batches import Translated


def write_atomic(path: Path, lines: Iterable[str]) -> Path:
    """Write ``lines`` to ``path`` through a temporary file beside it, then replace it in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            for line in lines:
                handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _json_line(record: dict[str, Any]) -> str:
    return dumps(record, separators=(",", ":")) + "\n"


def stored_label(task: TaskSpec, label: Any) -> Any:
    """The label as the builder reads it back: a class by its name (unambiguous for every task), else the score."""
    return task.label_names[int(label)] if task.kind.has_classes else label


def translated_record(
    task: TaskSpec, item: Translated, model: str, prompt_version: str, review_round: int = 0
) -> dict[str, Any]:
    record: dict[str, Any] = dict(item.fields)
    if task.label_field:
        record[task.label_field] = stored_label(task, item.row.label)
    record["provenance"] = {
        "source_file": Path(item.row.file).name,
        "source_row": item.row.row,
        "source_id": item.row.source_id,
        "source_text": item.row.fields,
        "batch": item.unit.split("/")[0],
        "request": item.unit,
        "model": model,
        "prompt_version": prompt_version,
        "review_round": review_round,
    }
    return record


def write_translated(
    path: Path,
    task: TaskSpec,
    items: Iterable[Translated],
    model: str,
    version: str,
    review_rounds: Mapping[str, int] | None = None,
) -> Path:
    rounds = review_rounds or {}
    lines = (
        _json_line(translated_record(task, item, model, version, rounds.get(item.unit.split("/")[0], 0)))
        for item in items
    )
    return write_atomic(path, lines)


def write_rejects(path: Path, rejects: Iterable[tuple[str, RowProblem]]) -> Path:
    """One JSON line per row left out: the stage that left it out, then file, row, field, reason, value."""
    return write_atomic(path, (_json_line({"stage": stage, **problem.to_dict()}) for stage, problem in rejects))


def write_report(path: Path, report: dict[str, Any]) -> Path:
    return write_atomic(path, [dumps(report, where=str(path), indent=2) + "\n"])
