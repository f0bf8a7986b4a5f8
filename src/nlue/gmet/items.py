"""GMET items and per-item predictions: the data every part of :mod:`nlue.gmet` passes around."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nlue.errors import NlueError
from nlue.lm.masked.pieces import ItemPrediction
from nlue.registry.tasks import GMET_CATEGORY_THEME, MASK_PLACEHOLDER, TASKS

__all__ = ["GmetItem", "ItemPrediction", "item_from_record", "items_from_records", "load_items"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GmetItem:
    """One GMET sentence: ``sentence`` holds exactly one ``[MASK]`` placeholder."""

    id: int
    sentence: str
    category: str
    theme: str
    answers: tuple[str, ...]

    @property
    def left(self) -> str:
        """The text before the placeholder."""
        return self.sentence.split(MASK_PLACEHOLDER, 1)[0]

    @property
    def right(self) -> str:
        """The text after the placeholder."""
        return self.sentence.split(MASK_PLACEHOLDER, 1)[1]

    def filled(self, word: str) -> str:
        """The sentence with ``word`` in place of the placeholder."""
        return self.left + word + self.right


def item_from_record(record: Mapping[str, Any], position: int) -> GmetItem:
    """One item from a dataset row; the row's ``idx`` is its id (else its position)."""
    sentence = str(record.get("sentence", ""))
    if sentence.count(MASK_PLACEHOLDER) != 1:
        raise NlueError(
            f"GMET item {record.get('idx', position)}: field 'sentence' must hold exactly one "
            f"{MASK_PLACEHOLDER} placeholder, got {sentence!r}"
        )
    category = str(record.get("category") or "")
    theme = str(record.get("theme") or GMET_CATEGORY_THEME.get(category, ""))
    answers = record.get("answers") or []
    if isinstance(answers, str):
        answers = [answers]
    item_id = record.get("idx", position)
    return GmetItem(
        id=int(item_id if item_id is not None else position),
        sentence=sentence,
        category=category,
        theme=theme,
        answers=tuple(str(a) for a in answers),
    )


def items_from_records(records: Iterable[Mapping[str, Any]]) -> list[GmetItem]:
    """Items from dataset rows, refusing duplicated ids."""
    items = [item_from_record(record, position) for position, record in enumerate(records)]
    seen: set[int] = set()
    for item in items:
        if item.id in seen:
            raise NlueError(f"GMET data holds item id {item.id} twice; ids (the `idx` field) must be unique")
        seen.add(item.id)
    return items


def load_items(dataset: str | None = None, split: str = "test", limit: int | None = None) -> list[GmetItem]:
    """The GMET items of ``dataset`` (Hub id, local path, or None for the embedded sample)."""
    from nlue.data.access import load_task

    data = load_task(dataset, TASKS["gmet"])
    if split not in data:
        raise NlueError(f"dataset has no {split!r} split for gmet; it has {', '.join(data)}")
    rows = data[split]
    if limit is not None:
        rows = rows.select(range(min(limit, len(rows))))
    items = items_from_records(rows)
    if not items:
        raise NlueError(f"the gmet {split!r} split of {dataset or 'the sample data'} is empty")
    return items
