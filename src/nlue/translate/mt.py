"""``nlue translate --mt-model``: each text field of each row through a local translation model.

A translation model reads one sentence and writes one, so each text field of each row is
translated on its own (no JSON, no count to check: one output per input by construction). The
model itself (batches, dtype, languages, journal) is :class:`nlue.lm.seq2seq.Seq2SeqLM`, built
by the model layer; this adapter turns the pipeline's units into its texts and back.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from nlue.registry.spec import TaskSpec
from nlue.translate.batches import RowOutcome, Unit, UnitFailed
from nlue.translate.prompts import item_fields

logger = logging.getLogger(__name__)


class MtTranslator:
    """The translation pipeline's view of a :class:`~nlue.lm.seq2seq.Seq2SeqLM`."""

    def __init__(self, model: Any) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return self.model.name

    def describe(self) -> dict[str, Any]:
        return self.model.describe().to_dict()

    def translate_texts(self, texts: Sequence[str]) -> list[str]:
        return self.model.translate_texts(texts)

    def translate(self, task: TaskSpec, units: Sequence[Unit]) -> list[list[RowOutcome] | UnitFailed]:
        fields = item_fields(task)
        if any(unit.review for unit in units):
            logger.warning(
                "review sent batches back, but a translation model answers the same text the same way: "
                "translate them with another model or a server (--endpoint) instead"
            )
        texts = [row.fields[name] for unit in units for row in unit.rows for name in fields]
        outputs = iter(self.translate_texts(texts))
        outcomes: list[list[RowOutcome] | UnitFailed] = []
        for unit in units:
            rows: list[RowOutcome] = []
            for _row in unit.rows:
                values = {name: next(outputs) for name in fields}
                empty = [name for name, value in values.items() if not value]
                rows.append(f"empty translation of {', '.join(empty)}" if empty else values)
            outcomes.append(rows)
        return outcomes
