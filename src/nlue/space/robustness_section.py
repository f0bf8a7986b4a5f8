"""The robustness tables of the leaderboard and Exams tabs: wording spread and option-order consistency (ours).

The rows are the board's (:mod:`nlue.boards.robustness`): only runs whose sections verify recomputed from their
predictions, beside each run's score; a run left out is listed with the reason. Where no run holds either
section nothing is built, so a results folder without such runs shows the tabs as before. Read once when the
page is built, as the exams' and neDIOM's tables are.
"""

from __future__ import annotations

import gradio as gr

from nlue.boards.robustness import LEGEND
from nlue.boards.score_checks import skipped_markdown
from nlue.boards.table import TableBoard
from nlue.space.board_table import board_table

INTRO = "## Robustness: prompt wordings and option orders (ours)"
SKIPPED_SHOWN = 20


def build_robustness_board(board: TableBoard, elem_id: str) -> bool:
    """A legend, the table and what was left out; False, and nothing built, when no run holds a section."""
    if not board.rows and not board.skipped:
        return False
    gr.Markdown(f"{INTRO}\n\n{LEGEND}", elem_id=f"{elem_id}-legend")
    if board.rows:
        board_table(elem_id, board)
    if board.skipped:
        gr.Markdown("Left out:\n\n" + skipped_markdown(board.skipped, SKIPPED_SHOWN), elem_id=f"{elem_id}-skipped")
    return True
