"""Scores on clean items: every run with per-item predictions beside the contamination findings of its task.

``nlue contamination`` leaves its findings in the results folder (``<results>/contamination/<dataset>/<corpus>.json``);
the Space mirrors them with the results files. For each findings file and task, the *checked* table says how
many test items a corpus was checked for and how many each measure flagged. For each run of such a task (any
benchmark: fine-tunes, LLM runs, exams, neDIOM, tasks from task files), the *scores* table shows its primary
metric on every item beside the same metric on the clean items alone (:mod:`nlue.evals.contamination.clean_scores`).

Both numbers are recomputed from the run's per-item predictions, and only for a run whose stored scores those
predictions give (:mod:`nlue.boards.score_checks`); a run without predictions, a refused run and findings of
another build of the data are listed apart with the reason, never joined. Where a results folder holds no
findings, both tables are empty and nothing is shown.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nlue.boards.exams import percent
from nlue.boards.score_checks import VERIFIED_CELL, check_results_file, is_refused
from nlue.boards.table import TableBoard, data_label, interval_text
from nlue.errors import NlueError
from nlue.evals.contamination.clean_scores import CleanScore, TaskFindings, clean_score, findings_of
from nlue.predictions import read_predictions
from nlue.registry.tasks import get_task
from nlue.results_folders import FoundResults, ResultsFolder, gather_results

logger = logging.getLogger(__name__)

CHECKED_COLUMNS: tuple[str, ...] = ("dataset", "split", "task", "corpus", "items checked", "flagged", "by word",
                                    "by char", "by source", "not checked", "with source", "file")  # fmt: skip
SCORE_COLUMNS: tuple[str, ...] = ("run", "data", "task", "corpus", "metric", "items", "flagged", "by word",
                                  "by char", "by source", "not checked", "clean", "all items (%)",
                                  "clean items (%)", "95% CI (clean)", "clean − all (points)", "check")  # fmt: skip
LEGEND = (
    "**Scores on clean items (ours).** Where `nlue contamination` checked a task's test items against a corpus, "
    "each run of that task is scored again on the items no measure flagged: not found by word n-grams, by "
    "character n-grams, nor by their English source. Both scores are recomputed from the run's per-item "
    "predictions. Flagged is not proven leaked, and clean means clean of the corpus named only; a clean score on "
    "few items has a wide interval. Items too short to check (*not checked*) are in neither group."
)


@dataclass
class ContaminationBoard:
    checked: TableBoard
    scores: TableBoard
    skipped: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.checked.rows


def _named(folder: ResultsFolder, name: str) -> str:
    return f"{folder.label}/{name}" if folder.label else name


def _checked_row(folder: ResultsFolder, findings: TaskFindings) -> dict[str, object]:
    counts = findings.counts()
    return {
        "dataset": findings.dataset, "split": findings.split, "task": findings.task, "corpus": findings.corpus,
        "items checked": counts["items"], "flagged": counts["flagged"], "by word": counts["by_word"],
        "by char": counts["by_char"], "by source": counts["by_source"], "not checked": counts["not_checked"],
        "with source": counts["with_source"], "file": _named(folder, findings.path.relative_to(folder.path).as_posix()),
    }  # fmt: skip


def _score_row(found: FoundResults, score: CleanScore) -> dict[str, object]:
    interval = score.clean_interval
    difference = score.difference
    return {
        "run": found.run, "data": data_label(found.data.get("dataset") or {}), "task": score.task,
        "corpus": score.corpus, "metric": score.primary, "items": score.items, "flagged": score.flagged_items,
        "by word": score.flagged["word"], "by char": score.flagged["char"], "by source": score.flagged["source"],
        "not checked": score.not_checked, "clean": score.clean, "all items (%)": percent(score.score_all),
        "clean items (%)": percent(score.score_clean),
        "95% CI (clean)": interval_text(*interval) if interval else "",
        "clean − all (points)": None if difference is None else round(100.0 * difference, 2),
        "check": VERIFIED_CELL,
        "results file": str(found.path),  # not a column: what the leaderboard's clean columns join rows by
    }  # fmt: skip


def _scores_of(found: FoundResults, candidates: Sequence[TaskFindings], skip: list[str]) -> list[dict[str, object]]:
    where = f"{found.run}/{found.path.name}"
    check = check_results_file(found.path, found.data)
    if not check.verified:
        why = "left out: " if is_refused(check) else "no clean score: "
        skip.append(f"{where}: {why}{check.reason}")
        return []
    rows_path = found.predictions
    try:
        task = get_task(str(found.data.get("task")))
        rows = read_predictions(rows_path) if rows_path is not None else []
    except NlueError as exc:
        skip.append(f"{where}: {exc}")
        return []
    shown = []
    for findings in candidates:
        try:
            shown.append(_score_row(found, clean_score(task, rows, found.data, findings)))
        except NlueError as exc:  # findings of another build of the data: said, never joined
            logger.warning("no clean score for %s: %s", where, exc)
            skip.append(f"{where}: no clean score: {exc}")
        except (ValueError, TypeError, KeyError) as exc:  # as verify: rows it scored whole but not in part
            logger.warning("no clean score for %s: %s: %s", where, type(exc).__name__, exc)
            skip.append(f"{where}: no clean score: its clean items cannot be scored ({type(exc).__name__}: {exc})")
    return shown


def contamination_board_of(folders: Sequence[ResultsFolder]) -> ContaminationBoard:
    """The checked and scores tables of the folders; a folder's findings apply to the runs of that folder."""
    checked: list[dict[str, object]] = []
    scores: list[dict[str, object]] = []
    skipped: list[str] = []
    for folder in folders:
        findings, refused = findings_of(folder.path)
        skipped += [_named(folder, line) for line in refused]
        if not findings:
            continue
        checked += [_checked_row(folder, f) for f in findings]
        by_task: dict[str, list[TaskFindings]] = {}
        for f in findings:
            by_task.setdefault(f.task, []).append(f)
        for found in gather_results([folder]):
            candidates = by_task.get(str(found.data.get("task")))
            if candidates:
                scores += _scores_of(found, candidates, skipped)
    return ContaminationBoard(TableBoard(CHECKED_COLUMNS, checked), TableBoard(SCORE_COLUMNS, scores), skipped)


def load_contamination_board(results_dir: Path) -> ContaminationBoard:
    """:func:`contamination_board_of` of one results folder."""
    return contamination_board_of([ResultsFolder(Path(results_dir), Path(results_dir))])
