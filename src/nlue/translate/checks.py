"""The checks on translated rows, row by row: the builder's rules, then the script filter; on ``--num-proc``.

Each translated row goes through :func:`check_row` on its own (the builder's row rules with its label
attached, then :func:`nlue.translate.quality.script_problem` on the normalised text), so the rows can be
checked on several processes (:func:`nlue.process_map.map_in_order`); the results come back in the rows'
order, so the files a run writes are the same byte for byte however many processes checked them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nlue.data.rows import RowConverter
from nlue.errors import RowProblem
from nlue.process_map import map_in_order
from nlue.registry.spec import TaskSpec
from nlue.registry.tasks import get_task
from nlue.translate.batches import Translated
from nlue.translate.quality import DEFAULT_MIN_DEVANAGARI, ScriptReport, latin_words, script_problem


@dataclass(frozen=True)
class CheckSettings:
    """What the checks need, as it travels to a worker: the task by name (translation sources are the shipped
    tasks', which every process registers on import) and the script filter's threshold."""

    task: str
    min_devanagari: float = DEFAULT_MIN_DEVANAGARI


@dataclass(frozen=True)
class RowCheck:
    """One row's verdict: kept (its normalised fields, and the Latin words left in them) or rejected at a stage."""

    kept: Translated | None
    latin_words: tuple[str, ...] = ()
    stage: str = ""  # "check" (the builder's rules) or "quality" (the script filter) when rejected
    problem: RowProblem | None = None


@functools.cache
def _converter(task_name: str) -> RowConverter:
    return RowConverter(get_task(task_name))


def check_row(settings: CheckSettings, item: Translated) -> RowCheck | None:
    """The builder's rules on a translated row (label attached; the normalised text is what is kept), then the
    script filter; None for a row the rules drop on purpose."""
    converter = _converter(settings.task)
    task = converter.task
    record: dict[str, Any] = dict(item.fields)
    if task.label_field:
        record[task.label_field] = item.row.label
    converted = converter.convert(item.row.file, item.row.row, record)
    if isinstance(converted, RowProblem):
        problem = RowProblem(item.row.file, item.row.row, converted.field, f"translation: {converted.reason}",
                             converted.value)  # fmt: skip
        return RowCheck(None, stage="check", problem=problem)
    if not isinstance(converted, dict):
        return None
    fields = {name: converted[name] for name in item.fields}
    script = script_problem(fields, settings.min_devanagari)
    if script is not None:
        return RowCheck(None, stage="quality", problem=RowProblem(item.row.file, item.row.row, "(row)", script,
                                                                  item.unit))  # fmt: skip
    return RowCheck(Translated(item.row, fields, item.unit), tuple(latin_words(fields)))


@dataclass
class Checked:
    kept: list[Translated]
    check_problems: list[RowProblem]
    script_problems: list[RowProblem]
    scripts: ScriptReport


def check_rows(
    task: TaskSpec, items: Iterable[Translated], min_devanagari: float = DEFAULT_MIN_DEVANAGARI, num_proc: int = 1
) -> Checked:
    """:func:`check_row` over ``items`` on ``num_proc`` processes; kept rows and problems in the items' order."""
    checked = Checked([], [], [], ScriptReport())
    settings = CheckSettings(task.name, min_devanagari)
    where = lambda item: f"{item.row.file}, row {item.row.row}"  # noqa: E731 - named for the error message
    size = lambda item: sum(len(text) for text in item.fields.values())  # noqa: E731
    for verdict in map_in_order(check_row, settings, items, num_proc=num_proc, where=where, size=size):
        if verdict is None:
            continue
        if verdict.kept is not None:
            checked.kept.append(verdict.kept)
            checked.scripts.add_words(verdict.latin_words)
        elif verdict.stage == "check":
            checked.check_problems.append(verdict.problem)  # type: ignore[arg-type]
        else:
            checked.script_problems.append(verdict.problem)  # type: ignore[arg-type]
    return checked
