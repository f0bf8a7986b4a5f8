"""The report's contamination section: what `nlue contamination` found, and every run's score on the clean items.

Both tables are the board's (:func:`nlue.boards.contamination.contamination_board_of`), ours alone: no paper
checked its test sets. The section is there only when a results folder holds findings; without them the
report is as before (no empty section, no empty column).
"""

from __future__ import annotations

from collections.abc import Sequence

from nlue.boards.contamination import ContaminationBoard, contamination_board_of
from nlue.boards.table import SAMPLE_DATA_LABEL
from nlue.evals.report.types import OURS, Section, Table
from nlue.results_folders import ResultsFolder

COUNT_FORMAT = "{:.0f}"
CHECKED_NOTE = (
    "Ours: `nlue contamination` cut each test item into word 13-grams and character n-grams of its normalised "
    "text and looked for them in the corpus named. *flagged*: found by any measure (an item found by two counts in "
    "both); *by source*: the English text the item was translated from was found (only where its sources were "
    "given); *not checked*: too short for any n-gram. Flagged is not proven leaked: a quotation or a common "
    "phrase flags an item too."
)
SCORES_NOTE = (
    "Ours: each run's primary metric on every item it scored and on its *clean* items (checked, and found by no "
    "measure), both recomputed from its per-item predictions with the code that checks every score. The "
    "interval is a 95% bootstrap interval (1,000 resamples) of the clean score: few clean items give a wide "
    "one, and a difference inside it says little. Clean means clean of this corpus only. A findings file of "
    "another build of the data is never joined (listed among the files left out)."
)


def contamination_section(folders: Sequence[ResultsFolder]) -> tuple[Section | None, list[str]]:
    """The section (None when no folder holds findings) and the runs and files left out of it, with reasons."""
    board = contamination_board_of(folders)
    if board.empty:
        return None, board.skipped
    return _section(board), board.skipped


def _section(board: ContaminationBoard) -> Section:
    counts = {c: COUNT_FORMAT for c in ("items checked", "items", "flagged", "by word", "by char", "by source",
                                        "not checked", "with source", "clean")}  # fmt: skip
    checked = board.checked.frame()
    scores = board.scores.frame()
    section = Section(
        key="contamination",
        title="Contamination: test items found in a corpus, and scores on the clean items (ours)",
        intro=[
            "No paper behind these benchmarks checked its test sets against pretraining text. These tables are "
            "ours: which test items a corpus holds (`nlue contamination`), and each run's score with those items "
            "left out. A drop on the clean items hints that the model met the flagged ones; an unchanged score "
            "says nothing about text outside the corpus checked."
        ],
        sample=any(row.get("data") == SAMPLE_DATA_LABEL for row in board.scores.rows),
    )
    section.add(Table("contamination_checked", "Ours · test items checked against a corpus", checked,
                      [OURS] * len(checked), notes=[CHECKED_NOTE], formats=counts))  # fmt: skip
    if len(scores):
        section.add(Table("contamination_scores", "Ours · scores on all items and on the clean items", scores,
                          [OURS] * len(scores), notes=[SCORES_NOTE], formats=counts))  # fmt: skip
    else:
        section.add("No run of a checked task has per-item predictions whose scores could be recomputed: no clean "
                    "score to show (the runs left out are listed at the end, with the reason).")  # fmt: skip
    return section
