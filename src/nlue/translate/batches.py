"""Class-wise batches, and the schedule that retries, splits and finally rejects what fails.

Rows are grouped by class (a regression task by its rounded score band: the kind's
strata), in source order, and cut into batches of at most ``batch_size`` rows: one class
per request, so that a model cannot see, and lean on, a contrast between classes.

The schedule works in rounds, so that a round's requests run concurrently in the engine:
a batch whose answer fails (not the numbered JSON asked for, a count that differs, a
request that kept failing) is asked again, with a retry note that makes it a new request,
up to ``retries`` times; then it is split in halves, each asked afresh; a single row that
still fails is rejected with the reason of its last answer. With deterministic answers
(temperature 0, the journal) the same input always takes the same path, so a resumed run
produces exactly the rows of an uninterrupted one.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from nlue.errors import NlueError
from nlue.registry.spec import TaskSpec
from nlue.translate.readers import SourceRow

logger = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 100  # the paper's ceiling per request
DEFAULT_RETRIES = 1


@dataclass(frozen=True)
class Unit:
    """One request's worth of rows: a batch, or a part of one after splits (``part`` "1.2": the second half
    of the first half)."""

    batch: str
    rows: tuple[SourceRow, ...]
    part: str = ""
    attempt: int = 0
    review: int = 0  # how many times native-speaker review sent this batch back

    @property
    def name(self) -> str:
        return f"{self.batch}/{self.part}" if self.part else self.batch

    def halves(self) -> tuple[Unit, Unit]:
        middle = len(self.rows) // 2
        prefix = f"{self.part}." if self.part else ""
        return (
            Unit(self.batch, self.rows[:middle], f"{prefix}1", review=self.review),
            Unit(self.batch, self.rows[middle:], f"{prefix}2", review=self.review),
        )


@dataclass(frozen=True)
class UnitFailed:
    """A whole answer that cannot be used: ``kind`` for the report's counts, ``reason`` for the rejects."""

    kind: str
    reason: str


# Per row of a unit: its translated fields, or (a str) why this row alone is rejected.
RowOutcome = dict[str, str] | str


class Translator(Protocol):
    """A backend: translates units and says what it is."""

    @property
    def name(self) -> str: ...

    def translate(self, task: TaskSpec, units: Sequence[Unit]) -> list[list[RowOutcome] | UnitFailed]: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Translated:
    row: SourceRow
    fields: dict[str, str]
    unit: str


@dataclass(frozen=True)
class Failed:
    row: SourceRow
    reason: str
    unit: str


@dataclass
class ScheduleStats:
    batches: int = 0
    requests: int = 0
    retries: int = 0
    splits: int = 0
    failed_answers: Counter = field(default_factory=Counter)  # kind -> answers that could not be used

    def to_dict(self) -> dict[str, Any]:
        return {
            "batches": self.batches,
            "requests": self.requests,
            "retries": self.retries,
            "splits": self.splits,
            "failed_answers": dict(sorted(self.failed_answers.items())),
        }


def class_name(task: TaskSpec, stratum: int) -> str:
    """What a batch's class is called: the label's name, or a score band for regression."""
    return task.label_names[stratum] if task.kind.has_classes else f"score-{stratum}"


def make_batches(
    task: TaskSpec,
    rows: Sequence[SourceRow],
    batch_size: int = DEFAULT_BATCH_SIZE,
    review_rounds: Mapping[str, int] | None = None,
) -> list[Unit]:
    """Rows grouped by class in source order, cut into batches of at most ``batch_size``.

    ``review_rounds`` names the batches review sent back (and how often): they are asked afresh.
    """
    if batch_size < 1:
        raise NlueError(f"batch size must be at least 1, got {batch_size}")
    if not rows:
        return []
    strata = task.kind.strata(task, np.asarray([row.label for row in rows]))
    by_class: dict[int, list[SourceRow]] = {}
    for row, stratum in zip(rows, strata.tolist(), strict=True):
        by_class.setdefault(int(stratum), []).append(row)
    units = []
    for stratum in sorted(by_class):
        members = by_class[stratum]
        for number, start in enumerate(range(0, len(members), batch_size), start=1):
            batch = f"{class_name(task, stratum)}-{number:04d}"
            review = (review_rounds or {}).get(batch, 0)
            units.append(Unit(batch, tuple(members[start : start + batch_size]), review=review))
    return units


def run_schedule(
    task: TaskSpec, units: Sequence[Unit], translator: Translator, retries: int = DEFAULT_RETRIES
) -> tuple[list[Translated], list[Failed], ScheduleStats]:
    """Translate every unit: retry, then split, then reject rows; results in source order."""
    stats = ScheduleStats(batches=len(units))
    translated: list[Translated] = []
    failed: list[Failed] = []
    pending = list(units)
    round_number = 0
    while pending:
        round_number += 1
        logger.info("translation round %d: %d requests (%d rows)", round_number, len(pending),
                    sum(len(u.rows) for u in pending))  # fmt: skip
        outcomes = translator.translate(task, pending)
        if len(outcomes) != len(pending):
            raise RuntimeError(f"{translator.name} answered {len(outcomes)} of {len(pending)} units")
        following: list[Unit] = []
        for unit, outcome in zip(pending, outcomes, strict=True):
            stats.requests += 1
            if isinstance(outcome, UnitFailed):
                stats.failed_answers[outcome.kind] += 1
                logger.debug("%s (try %d): %s", unit.name, unit.attempt + 1, outcome.reason)
                if unit.attempt < retries:
                    stats.retries += 1
                    following.append(replace(unit, attempt=unit.attempt + 1))
                elif len(unit.rows) > 1:
                    stats.splits += 1
                    following.extend(unit.halves())
                else:
                    reason = f"{outcome.reason} (translated alone, tried {retries + 1} times)"
                    failed.append(Failed(unit.rows[0], reason, unit.name))
                continue
            for row, result in zip(unit.rows, outcome, strict=True):
                if isinstance(result, str):
                    failed.append(Failed(row, result, unit.name))
                else:
                    translated.append(Translated(row, result, unit.name))
        pending = following
    translated.sort(key=lambda t: t.row.row)
    failed.sort(key=lambda f: f.row.row)
    return translated, failed, stats
