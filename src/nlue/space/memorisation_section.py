"""The leaderboard tab's memorisation table: what `nlue memorisation` measured, beside the contamination tables.

`nlue memorisation` writes one file per model and dataset into the results folder (``memorisation/``); a Hub
results repo mirrored by the Space brings them along. The table is the board's (:mod:`nlue.boards.memorisation`:
every file read by its checked reader, a refused file listed with the reason). Read-only; built hidden when the
results hold no memorisation file, and filled again by the leaderboard's "Re-read results folder" button
(:mod:`nlue.space.trust_sections`).
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from nlue.boards.memorisation import LEGEND, MemorisationBoard
from nlue.boards.score_checks import skipped_markdown
from nlue.space.board_table import board_table

INTRO = "## Memorisation probes (ours)"
SKIPPED_SHOWN = 20


def memorisation_updates(board: MemorisationBoard) -> list[dict[str, Any]]:
    """What each component shows for ``board`` (legend, table, files refused): its value and visibility; all
    hidden when no memorisation file could be read, as the contamination tables are without findings."""
    present = not board.empty
    left_out = "Left out:\n\n" + skipped_markdown(board.skipped, SKIPPED_SHOWN) if board.skipped else ""
    return [
        {"value": f"{INTRO}\n\n{LEGEND}", "visible": present},
        {"value": board.table.frame(), "column_widths": board.table.column_widths(), "visible": present},
        {"value": left_out, "visible": present and bool(board.skipped)},
    ]  # fmt: skip


def build_memorisation_board(board: MemorisationBoard) -> list[Any]:
    """The components, in the order of :func:`memorisation_updates`; hidden without memorisation files."""
    legend, table, skipped = memorisation_updates(board)
    return [
        gr.Markdown(elem_id="memorisation-legend", **legend),
        board_table("memorisation-table", **table),
        gr.Markdown(elem_id="memorisation-skipped", **skipped),
    ]  # fmt: skip
