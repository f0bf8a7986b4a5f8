"""The leaderboard tab's contamination tables: scores on the clean items, below NLUE's table, where findings exist.

`nlue contamination` writes its findings into the results folder (``contamination/``); a Hub results repo
mirrored by the Space brings them along (:mod:`nlue.space.results_source` mirrors every JSON file). The tables
are the board's (:mod:`nlue.boards.contamination`: every score recomputed from per-item predictions, findings
of another build of the data refused); with no findings the tab shows nothing more. Read once when the page is
built, as the exams' and neDIOM's tables are.
"""

from __future__ import annotations

import gradio as gr

from nlue.boards.contamination import LEGEND, ContaminationBoard
from nlue.boards.score_checks import skipped_markdown

INTRO = "## Contamination: scores on clean items (ours)"
BOARD_HEIGHT_PX = 420
SKIPPED_SHOWN = 20


def build_contamination_board(board: ContaminationBoard) -> bool:
    """The components (a legend, the checked items, the clean scores, what was left out); False, and nothing
    built, when the results hold no findings."""
    if board.empty:
        return False
    gr.Markdown(f"{INTRO}\n\n{LEGEND}", elem_id="contamination-legend")
    for table, elem_id in ((board.checked, "contamination-checked"), (board.scores, "contamination-scores")):
        if not table.rows:
            continue
        gr.Dataframe(
            table.frame(),
            interactive=False,
            wrap=True,
            column_widths=table.column_widths(),
            max_height=BOARD_HEIGHT_PX,
            pinned_columns=1,
            elem_id=elem_id,
        )
    if board.skipped:
        gr.Markdown("Left out:\n\n" + skipped_markdown(board.skipped, SKIPPED_SHOWN), elem_id="contamination-skipped")
    return True
