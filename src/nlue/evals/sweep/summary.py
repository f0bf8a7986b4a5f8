"""The summary a sweep ends with: one table per benchmark, a row per model and setting, a column per task.

The scores are read back from the results files each cell wrote (the primary score of each, as
the registry names it), never from the commands' console output. A results folder is
``<name>[__<setting>[__<variant>]]``: the part after the model's name says the setting
(``en-0shot``, ``zero-shot-en-generate``) and, for neDIOM, the input variant, which becomes the
column; a folder with no such part takes the cell's own setting (``preset I, 2 seeds``). A partial
run's folder (a roster's ``limit``) ends in ``-limit<N>``, which the setting keeps.
Written beside the results as ``summary.md`` and ``summary.csv`` (one line per score).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.atomic_files import write_text_atomic
from nlue.evals.sweep.run import DONE, ELSEWHERE, FAILED, NOT_RUN, RAN, SweepOutcome
from nlue.results import read_results
from nlue.text.safe import csv_row
from nlue.text_table import text_table

CSV_COLUMNS = ("model", "benchmark", "command", "setting", "column", "task", "primary_metric", "score", "sd",
               "ci_low", "ci_high", "sample_data", "results_file")  # fmt: skip


@dataclass(frozen=True)
class Score:
    model: str
    benchmark: str
    command: str
    setting: str
    column: str
    task: str
    primary_metric: str
    score: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    sample_data: bool
    results_file: str

    @property
    def row(self) -> str:
        return f"{self.model} · {self.command} {self.setting}"


def _split_folder(folder: str, name: str) -> list[str]:
    suffix = folder[len(name) :] if folder.startswith(name) else folder
    return [part for part in suffix.split("__") if part]


def collect_scores(outcome: SweepOutcome, results_dir: Path) -> list[Score]:
    """One Score per results file the finished cells wrote, in grid order."""
    from nlue.registry.tasks import get_task

    # Read as every results reader reads them (bounded, logged when unreadable); a cell's list names which.
    found = {path.relative_to(results_dir).as_posix(): data for path, data in read_results(results_dir)}
    scores = []
    for cell_outcome in outcome.outcomes:
        if cell_outcome.status not in (DONE, RAN):
            continue
        cell = cell_outcome.cell
        for relative in cell_outcome.results:
            data = found.get(Path(relative).as_posix())
            try:
                task = get_task(str(data["task"])) if data is not None else None
            except (KeyError, ValueError, TypeError):
                task = None
            if data is None or task is None:
                continue  # not a results file (a run.json, a table): nothing to summarise
            parts = _split_folder(Path(relative).parent.name, cell.results_name)
            # A folder named <results name>-limit<N> (a partial run of a command whose folder is its results name
            # alone: train, gmet) keeps the cell's own setting, with the limit said.
            marker = parts.pop(0).lstrip("-") if parts and parts[0].startswith("-") else None
            setting = parts[0] if parts else cell.row
            setting += f", {marker}" if marker else ""
            metric = data.get("primary_metric") or task.primary_metric
            metrics: dict[str, Any] = data.get("metrics") or {}
            scores.append(Score(
                model=cell.model, benchmark=task.benchmark, command=cell.command,
                setting=setting, column=parts[1] if len(parts) > 1 else task.name,
                task=task.name, primary_metric=metric, score=data.get("primary_score"),
                sd=metrics.get(f"{metric}_sd"), ci_low=metrics.get(f"{metric}_ci_low"),
                ci_high=metrics.get(f"{metric}_ci_high"), sample_data=bool((data.get("dataset") or {}).get("is_sample")),
                results_file=relative,
            ))  # fmt: skip
    return scores


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def tables(scores: Sequence[Score]) -> dict[str, list[list[str]]]:
    """Per benchmark, rows (header first): model and setting, then one column per task or variant."""
    out: dict[str, list[list[str]]] = {}
    for benchmark in dict.fromkeys(s.benchmark for s in scores):
        mine = [s for s in scores if s.benchmark == benchmark]
        columns = list(dict.fromkeys(s.column for s in mine))
        rows = list(dict.fromkeys(s.row for s in mine))
        cells = {(s.row, s.column): s for s in mine}
        body = [[row, *(_number(cells[(row, c)].score) if (row, c) in cells else "" for c in columns)] for row in rows]
        out[benchmark] = [["model · setting", *columns], *body]
    return out


def _title(benchmark: str) -> str:
    from nlue.registry.tasks import BENCHMARKS

    return BENCHMARKS[benchmark].title if benchmark in BENCHMARKS else benchmark


def _problems(outcome: SweepOutcome) -> list[str]:
    lines = []
    for o in outcome.outcomes:
        if o.status == FAILED:
            lines.append(f"FAILED (exit {o.exit_code}) {o.cell.label}: {o.message}")
        elif o.status == NOT_RUN:
            lines.append(f"not run {o.cell.label}")
        elif o.status == ELSEWHERE:
            lines.append(f"running elsewhere {o.cell.label} ({o.message})")
    return lines


def _counts(outcome: SweepOutcome) -> str:
    elsewhere = f", {outcome.count(ELSEWHERE)} running elsewhere" if outcome.count(ELSEWHERE) else ""
    return (f"{len(outcome.outcomes)} cells: {outcome.count(RAN)} ran, {outcome.count(DONE)} skipped (done before), "
            f"{outcome.count(FAILED)} failed, {outcome.count(NOT_RUN)} not run{elsewhere}; "
            f"{outcome.seconds:.1f} s")  # fmt: skip


def _state(outcome: SweepOutcome) -> str:
    """The grid's state, the same however many runs it took (summary.md must not differ after a resume)."""
    done = outcome.count(RAN) + outcome.count(DONE)
    not_run = outcome.count(NOT_RUN) + outcome.count(ELSEWHERE)
    return f"{len(outcome.outcomes)} cells: {done} done, {outcome.count(FAILED)} failed, {not_run} not run"


def _metrics_note(scores: Sequence[Score]) -> str:
    metrics = dict.fromkeys(f"{s.task} {s.primary_metric}" for s in scores)
    note = "primary scores (" + ", ".join(metrics) + ")"
    if any(s.sample_data for s in scores):
        note += "; SAMPLE DATA: scores on the embedded sample mean nothing about a model"
    return note


def console_summary(name: str, outcome: SweepOutcome, scores: Sequence[Score]) -> str:
    parts = [f"sweep {name}: {_counts(outcome)}"]
    for benchmark, rows in tables(scores).items():
        parts.append(f"\n{_title(benchmark)}\n{text_table(rows)}")
    if scores:
        parts.append("\n" + _metrics_note(scores))
    parts.extend(_problems(outcome))
    return "\n".join(parts)


def markdown_summary(name: str, outcome: SweepOutcome, scores: Sequence[Score]) -> str:
    lines = [f"# Sweep `{name}`", "", _state(outcome), ""]
    for benchmark, rows in tables(scores).items():
        lines += [f"## {_title(benchmark)}", "", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
        lines.append("")
    if scores:
        note = _metrics_note(scores)
        lines += [note[:1].upper() + note[1:] + ".", ""]
    problems = _problems(outcome)
    if problems:
        lines += ["## Cells without results", "", *(f"- {p}" for p in problems), ""]
    return "\n".join(lines)


def csv_summary(scores: Sequence[Score]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for s in scores:
        writer.writerow(csv_row("" if getattr(s, c) is None else getattr(s, c) for c in CSV_COLUMNS))
    return buffer.getvalue()


def write_summary(results_dir: Path, name: str, outcome: SweepOutcome, scores: Sequence[Score]) -> list[Path]:
    """summary.md and summary.csv in ``results_dir``, each written whole or not at all."""
    return [write_text_atomic(results_dir / "summary.md", markdown_summary(name, outcome, scores), newline=""),
            write_text_atomic(results_dir / "summary.csv", csv_summary(scores), newline="")]  # fmt: skip
