"""One translation run: read the English source, translate class-wise batches, check, write.

Stages, each of which can leave a row out (and says so in the rejects file):

1. ``read`` - the builder's row rules on the English row (:mod:`nlue.translate.readers`);
2. ``translate`` - a row whose batch kept failing until it was asked alone, and then still
   failed (:mod:`nlue.translate.batches`);
3. ``check`` - the builder's row rules again, on the Nepali row with its label attached
   (an empty field, WinoGrande's blank lost in translation), so that everything written is
   accepted by ``nlue build``;
4. ``quality`` - the script filter (:mod:`nlue.translate.quality`): rows left in English,
   code-switched, or holding another script.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.data.translation_layout import RUN_REPORT, output_path, work_dir
from nlue.errors import NlueError, RowProblem
from nlue.registry.spec import TaskSpec
from nlue.translate.batches import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_RETRIES,
    Translator,
    class_name,
    make_batches,
    run_schedule,
)
from nlue.translate.checks import check_rows
from nlue.translate.output import write_rejects, write_report, write_translated
from nlue.translate.prompts import PROMPT_VERSION
from nlue.translate.quality import DEFAULT_MIN_DEVANAGARI
from nlue.translate.readers import SourceRow, read_source, split_from_name
from nlue.translate.review import review_rounds

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPaths:
    output: Path
    work: Path

    @property
    def rejects(self) -> Path:
        return self.work / "rejects.jsonl"

    @property
    def report(self) -> Path:
        return self.work / RUN_REPORT


def resolve_split(source: Path, split: str | None, task: TaskSpec) -> str:
    """The split named, or the one the file's name gives; it must be one of the task's splits."""
    chosen = split or split_from_name(source)
    if chosen is None:
        raise NlueError(f"{source}: cannot tell the split from the file name; give --split "
                        f"({', '.join(task.splits)})")  # fmt: skip
    if chosen not in task.splits:
        raise NlueError(f"split {chosen!r} is not one of {task.name}'s splits ({', '.join(task.splits)})")
    return chosen


def run_paths(out: Path, task: TaskSpec, split: str) -> RunPaths:
    return RunPaths(output_path(out, task, split), work_dir(out, task, split))


def _balance(task: TaskSpec, labels: list[Any]) -> dict[str, int]:
    if not labels:
        return {}
    import numpy as np

    strata = task.kind.strata(task, np.asarray(labels)).tolist()
    return dict(sorted(Counter(class_name(task, int(s)) for s in strata).items()))


def run_translation(
    task: TaskSpec,
    source: Path,
    paths: RunPaths,
    translator: Translator,
    *,
    format_name: str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    retries: int = DEFAULT_RETRIES,
    limit: int | None = None,
    min_devanagari: float = DEFAULT_MIN_DEVANAGARI,
    num_proc: int = 1,
) -> dict[str, Any]:
    """Translate ``source`` into ``paths.output``; write the rejects and the report; return the report.

    The checks run on ``num_proc`` processes; what is written is the same byte for byte however many."""
    read = read_source(task, source, format_name)
    rows: list[SourceRow] = read.rows[:limit] if limit is not None else read.rows
    rounds = review_rounds(paths.work)
    units = make_batches(task, rows, batch_size, rounds)
    translated, failed, stats = run_schedule(task, units, translator, retries)
    checked = check_rows(task, translated, min_devanagari, num_proc)
    kept, check_problems, script_problems, scripts = (
        checked.kept, checked.check_problems, checked.script_problems, checked.scripts,
    )  # fmt: skip
    rejects: list[tuple[str, RowProblem]] = [("read", p) for p in read.rejects]
    rejects += [("translate", RowProblem(f.row.file, f.row.row, "(row)", f.reason, f.unit)) for f in failed]
    rejects += [("check", p) for p in check_problems]
    rejects += [("quality", p) for p in script_problems]
    rejects.sort(key=lambda pair: pair[1].row)
    write_translated(paths.output, task, kept, translator.name, PROMPT_VERSION, rounds)
    write_rejects(paths.rejects, rejects)
    report = {
        "task": task.name,
        "source": str(source),
        "source_format": read.format.name,
        "output": str(paths.output),
        "prompt_version": PROMPT_VERSION,
        "batch_size": batch_size,
        "retries": retries,
        "review_rounds": rounds,
        "rows": {
            "read": read.read,
            "rejected_on_read": len(read.rejects),
            "dropped_on_read": dict(read.dropped),
            "sent": len(rows),
            "rejected_in_translation": len(failed),
            "rejected_in_check": len(check_problems),
            "rejected_by_script_filter": len(script_problems),
            "written": len(kept),
        },
        "reject_reasons": dict(sorted(Counter(f"{stage}: {p.reason.split(' (')[0]}" for stage, p in rejects).items())),
        "script_filter": {"min_devanagari": min_devanagari, **scripts.to_dict()},
        "schedule": stats.to_dict(),
        "class_balance": {
            "before": _balance(task, [row.label for row in rows]),
            "after": _balance(task, [item.row.label for item in kept]),
        },
        "translator": translator.describe(),
    }
    write_report(paths.report, report)
    logger.info("%s: %d of %d rows translated, %d rejected", paths.output, len(kept), len(rows),
                len(failed) + len(check_problems) + len(script_problems))  # fmt: skip
    return report
