"""A board as the Space shows it: one read-only table, built the same way on every tab and section.

Wrapped cells, the board's own column widths, and the first column pinned, so that the model or run stays in
sight when a narrow window scrolls a wide table sideways. Sections below a tab's main table (contamination,
memorisation, robustness, tasks from task files) are lower than the tabs' own tables.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

SECTION_HEIGHT_PX = 420  # a section under a tab's main table
TAB_HEIGHT_PX = 900  # a tab's own table (the exams, neDIOM): the paper's rows and a few runs without inner scrolling


def board_table(elem_id: str, board: Any = None, max_height: int = SECTION_HEIGHT_PX, **shown: Any) -> gr.Dataframe:
    """``board``'s table (its ``frame()`` and ``column_widths()``), or, without one, a table whose value and
    visibility ``shown`` gives (a section that a button fills again)."""
    if board is not None:
        shown = {"value": board.frame(), "column_widths": board.column_widths(), **shown}
    return gr.Dataframe(interactive=False, wrap=True, max_height=max_height, pinned_columns=1, elem_id=elem_id,
                        **shown)  # fmt: skip
