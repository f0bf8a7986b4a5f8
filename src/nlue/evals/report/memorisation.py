"""The report's memorisation section: what `nlue memorisation` measured, per model, dataset and task (ours).

The table is the board's (:func:`nlue.boards.memorisation.memorisation_board_of`): every file read by the
checked reader, a refused file listed with its reason among the files left out. No paper probed its models for
memorisation. The section is there only when a results folder holds memorisation files; without them the
report is as before (no empty section).
"""

from __future__ import annotations

from collections.abc import Sequence

from nlue.boards.memorisation import MemorisationBoard, memorisation_board_of
from nlue.boards.table import SAMPLE_DATA_LABEL
from nlue.evals.report.types import OURS, Section, Table
from nlue.results_folders import ResultsFolder

COUNT_FORMAT = "{:.0f}"
AUC_FORMAT = "{:.3f}"
PERCENT_FORMAT = "{:.1f}"
NOTE = (
    "Ours: each row is one memorisation file's task, as `nlue memorisation` wrote it and as the checked reader "
    "recomputed its point numbers from the items. *compared*: items that got a control; *control texts*: how many "
    "distinct texts the controls were cut from (few make the AUC uncertain in a way its interval does not show); "
    "*controls*: where they came from (`sample`: nlue's own unseen sample texts, `file:…`: a file, `shuffled`: the "
    "items' own words, a floor only). AUC 0.5 and about 5% above the controls' 95th percentile is what an unseen "
    "set gives. The exam columns are empty for a task that is no exam or ran without the completion probe."
)


def memorisation_section(folders: Sequence[ResultsFolder]) -> tuple[Section | None, list[str]]:
    """The section (None when no folder holds a memorisation file that could be read) and the files left out of
    it, with reasons (listed at the end of the report either way)."""
    board = memorisation_board_of(folders)
    if board.empty:
        return None, board.skipped
    return _section(board), board.skipped


def _section(board: MemorisationBoard) -> Section:
    frame = board.table.frame()
    formats = {
        **{c: COUNT_FORMAT for c in ("items", "compared", "control texts")},
        **{c: AUC_FORMAT for c in ("Min-K%++ AUC", "Min-K% AUC", "log p AUC")},
        **{c: PERCENT_FORMAT for c in ("above ctrl p95 (%)", "exam exact (%)", "exact by chance (%)",
                                       "exam overlap (%)", "overlap by chance (%)")},
    }  # fmt: skip
    section = Section(
        key="memorisation",
        title="Memorisation: has a model seen the test items? (ours)",
        intro=[
            "No paper behind these benchmarks asked whether the models it scored had read its test items. These "
            "numbers are ours (`nlue memorisation`): how much more familiar a causal LM finds each test item than "
            "control text of its kind, by Min-K%++ (Zhang et al., arXiv 2404.02936), and for exams how often it "
            "finishes a question from its first half. A high AUC hints that the model met the items; a low one "
            "does not show they are unseen."
        ],
        sample=any(row.get("data") == SAMPLE_DATA_LABEL for row in board.table.rows),
    )
    section.add(Table("memorisation", "Ours · memorisation probes per model and task", frame,
                      [OURS] * len(frame), notes=[NOTE], formats=formats))  # fmt: skip
    return section
