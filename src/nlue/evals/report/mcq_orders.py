"""The report's option-order table: exam runs made with ``nlue llm mcq --option-orders cyclic`` (ours alone).

One row per such run: accuracy under each rotation, their mean and spread, the share of items answered
consistently, and how often each letter was chosen (:mod:`nlue.evals.mcq.order_robustness` says what
each means). A results file is outside input: every cell is read as a number only when it is one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlue.boards.exams import percent
from nlue.boards.table import interval_text
from nlue.evals.mcq.order_intervals import LETTER_INTERVALS
from nlue.evals.mcq.order_robustness import INVALID, SECTION
from nlue.evals.report.runs import ResultFile
from nlue.evals.report.types import OURS, Table
from nlue.registry.kinds.mcq_text import LETTERS

NOTE = (
    "Ours: each test item asked under the cyclic rotations of its options, the key moved with its option. "
    "UrduMMLU names option order as an open question and defines no protocol. Accuracy over all items (invalid "
    "= wrong) per rotation; consistent: the same option chosen under every rotation (an invalid answer counts as "
    "inconsistent); letters chosen: share of every answer. The 95% intervals of the consistent share and of "
    "each letter's share are percentile-bootstrap intervals over items (an item's rotations resampled "
    "together). Under cyclic rotation each letter is the key 25% of the time by construction, so a letter "
    "chosen far more often is a preference for that position."
)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _record(file: ResultFile, section: Mapping[str, Any]) -> dict[str, Any]:
    hyper = file.hyperparameters
    listed = section.get("rotations") if isinstance(section.get("rotations"), list) else []
    rotations = [r for r in listed if isinstance(r, Mapping)]
    spread = percent(section.get("accuracy_spread"))
    chosen = _mapping(section.get("letter_choice_shares"))
    return {
        "run": file.run,
        "exam": file.task,
        "mode": str(hyper.get("mode", "?")),
        **{
            f"rotation {i} (%)": percent(rotations[i].get("accuracy_all_items")) if i < len(rotations) else None
            for i in range(len(LETTERS))
        },
        "mean (%)": percent(section.get("accuracy_mean")),
        "spread (points)": spread,
        "consistent (%)": percent(section.get("consistent_share")),
        "consistent 95% CI": interval_text(
            section.get("consistent_share_ci_low"), section.get("consistent_share_ci_high")
        ),
        "consistent and correct (%)": percent(section.get("consistent_correct_share")),
        **{f"{letter} chosen (%)": percent(chosen.get(letter)) for letter in LETTERS},
        "invalid (%)": percent(chosen.get(INVALID)),
        "chosen 95% CI": " · ".join(
            f"{letter} {interval_text(*pair) if isinstance(pair, list | tuple) and len(pair) == 2 else 'n/a'}"
            for letter, pair in _mapping(section.get(LETTER_INTERVALS)).items()
            if letter in (*LETTERS, INVALID)
        ),
    }


def order_table(
    files: Sequence[ResultFile],
    key: str = "mcq_option_orders",
    title: str = "Our runs · option-order robustness (cyclic rotations)",
) -> Table | None:
    """The table of the exam runs that hold an option-order section; None when none does."""
    records = [_record(f, f.details[SECTION]) for f in files if isinstance(f.details.get(SECTION), Mapping)]
    if not records:
        return None
    return Table(key, title, pd.DataFrame(records), [OURS] * len(records), notes=[NOTE])
