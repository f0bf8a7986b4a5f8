"""Scores on the clean items: a run's per-item predictions joined to a contamination file, and rescored.

``nlue contamination`` writes, per dataset and corpus, a verdict for every test item
(:mod:`nlue.evals.contamination.findings_file`). A run's predictions file names every item it scored
by ``id`` and ``input_sha256`` (:mod:`nlue.predictions`), the same two keys the findings file holds.

The join is exact and checked (:func:`join_findings`); a findings file is refused for a run, with the
reason, when it was made on another split, on a split of another size than the run's
(``identity.split_items``), or when any item the run scored is missing from it or was shown to the
model with other text (``input_sha256`` differs): another build of the data, whose verdicts say
nothing of these items. Nothing is joined by position or by id alone.

An item is *flagged* when any measure found it: its word n-grams, its character n-grams
(the verdict ``contaminated``) or its English source (``source_in_corpus``). It is *clean* when the
check ran (verdict ``clean``) and its source, if known, was not found. An item too short for any
n-gram (``not_checked``) is neither: it is left out of the clean score and counted apart.

The clean score is the run's primary metric on the clean items, computed by the scoring code
:mod:`nlue.evals.verify` rescores every run with (never read from a file), with a bootstrap interval:
few clean items give a wide one.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from nlue.errors import NlueError
from nlue.evals.contamination.findings_file import CHAR, SOURCE, WORD, BadFindingsFile, read_findings
from nlue.evals.verify import rescoring_problem
from nlue.registry.spec import TaskSpec
from nlue.results import CONTAMINATION_FOLDER
from nlue.scoring.bootstrap import bootstrap_intervals

logger = logging.getLogger(__name__)

FLAG_MEASURES = (WORD, CHAR, SOURCE)  # every measure that flags an item: the clean score leaves out what any found
INTERVAL_RESAMPLES = 1000
MAX_FILES = 200  # findings files read per results folder; more are named as skipped
NAME_CHARS = 200  # a corpus or dataset name from a file, as far as it is shown


@dataclass(frozen=True)
class TaskFindings:
    """One task's verdicts in one findings file: the file, its corpus and data, and the items by id."""

    path: Path
    corpus: str
    dataset: str
    split: str
    task: str
    records: Mapping[Any, Mapping[str, Any]]  # id -> item record

    @property
    def items(self) -> int:
        return len(self.records)

    def counts(self) -> dict[str, int]:
        """Items checked and flagged, per measure, recounted from the records (never the file's own counts)."""
        flagged = [measures(r) for r in self.records.values()]
        return {
            "items": len(flagged),
            "flagged": sum(bool(m) for m in flagged),
            **{f"by_{m}": sum(m in found for found in flagged) for m in FLAG_MEASURES},
            "not_checked": sum(r["verdict"] == "not_checked" for r in self.records.values()),
            "with_source": sum(r["source_in_corpus"] is not None for r in self.records.values()),
        }


def measures(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The measures that found an item: ``word``, ``char`` (its verdict) and ``source`` (its English original)."""
    found = tuple(m for m in (WORD, CHAR) if m in record["found_by"])
    return (*found, SOURCE) if record["source_in_corpus"] is True else found


def is_clean(record: Mapping[str, Any]) -> bool:
    """Checked and found by no measure (an item too short to check is not clean: it was not looked at)."""
    return record["verdict"] == "clean" and not measures(record)


def _text(value: Any) -> str:
    return str(value)[:NAME_CHARS]


def _source_name(value: Any) -> str:
    """A corpus or dataset as the file names it; an absolute local path by its own name (no machine's folder layout shown)."""
    text = _text(value)
    return PurePath(text).name if PurePath(text).is_absolute() else text


def findings_of(results_dir: Path) -> tuple[list[TaskFindings], list[str]]:
    """Every task of every findings file under ``<results_dir>/contamination/``, and the files refused, each with
    its reason (a findings file is outside input: :func:`~nlue.evals.contamination.findings_file.read_findings`)."""
    folder = Path(results_dir) / CONTAMINATION_FOLDER
    paths = sorted(p for p in folder.rglob("*.json") if p.is_file() and not p.is_symlink()) if folder.is_dir() else []
    found: list[TaskFindings] = []
    skipped = [
        f"{p.relative_to(results_dir)}: not read (more than {MAX_FILES} findings files)" for p in paths[MAX_FILES:]
    ]
    for path in paths[:MAX_FILES]:
        try:
            data = read_findings(path)
            found += _tasks_of(path, data)
        except BadFindingsFile as exc:
            logger.warning("contamination file left out: %s", exc)
            skipped.append(f"{path.relative_to(results_dir)}: {str(exc).removeprefix(f'{path}: ')}")
    return found, skipped


def _tasks_of(path: Path, data: Mapping[str, Any]) -> list[TaskFindings]:
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    corpus = data.get("corpus") if isinstance(data.get("corpus"), Mapping) else {}
    split = dataset.get("split")
    if not isinstance(split, str):
        raise BadFindingsFile(f"{path}: dataset.split: expected the split checked, as text")
    tasks = []
    for task, entry in data["tasks"].items():
        records: dict[Any, Mapping[str, Any]] = {}
        for number, record in enumerate(entry["items"]):
            if record["id"] in records:
                raise BadFindingsFile(f"{path}: tasks.{task}.items[{number}].id: {record['id']!r:.60} twice")
            records[record["id"]] = record
        tasks.append(TaskFindings(path, _source_name(corpus.get("id", "?")), _source_name(dataset.get("id", "?")),
                                  split, _text(task), records))  # fmt: skip
    return tasks


def _run_split(data: Mapping[str, Any]) -> tuple[str | None, int | None]:
    identity = data.get("identity") if isinstance(data.get("identity"), Mapping) else {}
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    split = identity.get("split") or dataset.get("split")
    size = identity.get("split_items")
    return (split if isinstance(split, str) else None), (size if isinstance(size, int) else None)


def join_findings(findings: TaskFindings, rows: Sequence[Mapping[str, Any]], data: Mapping[str, Any]) -> list[Mapping]:
    """Each row's item record, in the rows' order; an :class:`~nlue.errors.NlueError` says why the findings are not
    these items' (module docstring)."""
    split, size = _run_split(data)
    where = f"{findings.path.name} ({findings.corpus})"
    if split is not None and split != findings.split:
        raise NlueError(f"{where} checked the {findings.split!r} split; the run scored {split!r}")
    if size is not None and size != findings.items:
        raise NlueError(f"{where} checked {findings.items} {findings.task} items; the run's split has {size}: "
                        "another build of the data")  # fmt: skip
    joined, missing, changed = [], [], []
    for row in rows:
        item = row["id"]  # from a predictions file: only a string or an integer names an item
        record = findings.records.get(item) if isinstance(item, str | int) and not isinstance(item, bool) else None
        if record is None:
            missing.append(row["id"])
        elif record["input_sha256"] != row["input_sha256"]:
            changed.append(row["id"])
        else:
            joined.append(record)
    if missing or changed:
        first = (missing or changed)[0]
        raise NlueError(f"{where} is of another build of the data: of the run's {len(rows)} items, {len(missing)} "
                        f"are not in it and {len(changed)} were checked with other text (first: id {first!r:.40})")  # fmt: skip
    return joined


@dataclass(frozen=True)
class CleanScore:
    """A run's primary metric on all the items it scored and on the clean ones alone (module docstring)."""

    task: str
    corpus: str
    findings: Path
    primary: str
    items: int  # the run's items
    flagged: Mapping[str, int]  # per measure (an item found by two counts in both)
    flagged_items: int
    not_checked: int
    clean: int
    score_all: float | None
    score_clean: float | None
    clean_interval: tuple[float, float] | None

    @property
    def difference(self) -> float | None:
        """Clean minus all: negative when the run did better on the items the corpus holds."""
        if self.score_all is None or self.score_clean is None:
            return None
        return self.score_clean - self.score_all


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def clean_score(task: TaskSpec, rows: Sequence[Mapping[str, Any]], data: Mapping[str, Any],
                findings: TaskFindings, seed: int = 0) -> CleanScore:  # fmt: skip
    """The run's primary metric on every row and on the clean rows, by its own scoring code; the findings are
    joined first (:func:`join_findings`, which refuses another build's)."""
    records = join_findings(findings, rows, data)
    primary = task.primary_metric
    clean_rows = [row for row, record in zip(rows, records, strict=True) if is_clean(record)]
    score_all = _number(rescoring_problem(task, rows, data).point_estimates()[primary])
    score_clean, interval = None, None
    if clean_rows:
        problem = rescoring_problem(task, clean_rows, data)
        score_clean = _number(problem.point_estimates()[primary])
        if score_clean is not None and len(clean_rows) > 1:
            low, high = bootstrap_intervals(problem, INTERVAL_RESAMPLES, seed=seed)[primary]
            interval = (low, high) if math.isfinite(low) and math.isfinite(high) else None
    found = [measures(record) for record in records]
    return CleanScore(
        task=task.name,
        corpus=findings.corpus,
        findings=findings.path,
        primary=primary,
        items=len(rows),
        flagged={m: sum(m in f for f in found) for m in FLAG_MEASURES},
        flagged_items=sum(bool(f) for f in found),
        not_checked=sum(r["verdict"] == "not_checked" and not measures(r) for r in records),
        clean=len(clean_rows),
        score_all=score_all,
        score_clean=score_clean,
        clean_interval=interval,
    )
