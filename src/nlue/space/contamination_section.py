"""The leaderboard tab's contamination tables: scores on the clean items, below NLUE's table, where findings exist.

`nlue contamination` writes its findings into the results folder (``contamination/``); a Hub results repo
mirrored by the Space brings them along (:mod:`nlue.space.results_source` mirrors every JSON file). The tables
are the board's (:mod:`nlue.boards.contamination`: every score recomputed from per-item predictions, findings
of another build of the data refused). They are built hidden when the results hold no findings, so that the
tab shows nothing more, and the leaderboard's "Re-read results folder" button fills (or hides) them again from
the files as they are then (:func:`contamination_updates`, :mod:`nlue.space.trust_sections`).
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from nlue.boards.contamination import LEGEND, ContaminationBoard
from nlue.boards.score_checks import skipped_markdown
from nlue.space.board_table import board_table

INTRO = "## Contamination: scores on clean items (ours)"
SKIPPED_SHOWN = 20


def contamination_updates(board: ContaminationBoard) -> list[dict[str, Any]]:
    """What each component shows for ``board`` (legend, checked items, clean scores, what was left out): its
    value and whether it is visible; all hidden when the results hold no findings."""
    present = not board.empty
    shown: list[dict[str, Any]] = [{"value": f"{INTRO}\n\n{LEGEND}", "visible": present}]
    for table in (board.checked, board.scores):
        shown.append({"value": table.frame(), "column_widths": table.column_widths(),
                      "visible": present and bool(table.rows)})  # fmt: skip
    left_out = "Left out:\n\n" + skipped_markdown(board.skipped, SKIPPED_SHOWN) if board.skipped else ""
    shown.append({"value": left_out, "visible": present and bool(board.skipped)})
    return shown


def build_contamination_board(board: ContaminationBoard) -> list[Any]:
    """The components, in the order of :func:`contamination_updates`; hidden when the results hold no findings."""
    legend, checked, scores, skipped = contamination_updates(board)
    components: list[Any] = [gr.Markdown(elem_id="contamination-legend", **legend)]
    for shown, elem_id in ((checked, "contamination-checked"), (scores, "contamination-scores")):
        components.append(board_table(elem_id, **shown))
    components.append(gr.Markdown(elem_id="contamination-skipped", **skipped))
    return components
