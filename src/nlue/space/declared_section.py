"""The leaderboard tab's boards of tasks from task files: one per task, below NLUE's table, never in it.

Each registered task that no shipped benchmark holds (a user's task file, ``nlue space --task-file`` or
``NLUE_TASK_FILES``) gets its legend (what it is, its language, its primary metric as the task file chose
it), its table of runs (:mod:`nlue.boards.tasks`: every metric with its interval, no NLUE score) and a
chart of the primary metric per run. Read once when the page is built, as the exams' and neDIOM's tabs are.
"""

from __future__ import annotations

import gradio as gr

from nlue.boards.charts import runs_chart
from nlue.boards.score_checks import skipped_markdown
from nlue.boards.tasks import DeclaredBoards
from nlue.space.board_table import board_table
from nlue.text.safe import markdown_text

INTRO = (
    "## Your tasks: from task files (no paper)\n\nNo paper printed these tasks: each has a board of its own, "
    "with every run's metrics and intervals and its own primary metric (the one its task file names), read "
    "when the Space starts. Their runs are never in the NLUE table above or its NLUE score, nor in the exams' "
    "or neDIOM's tables."
)


def build_declared_boards(boards: DeclaredBoards) -> None:
    """The components of the boards (:func:`nlue.boards.tasks.declared_boards`): an introduction, then per
    task its legend, table and chart."""
    gr.Markdown(INTRO, elem_id="tasks-intro")
    for runs in boards.tasks:
        name = runs.task.name
        gr.Markdown(f"### {markdown_text(runs.task.title)}\n\n{runs.legend()}", elem_id=f"task-{name}-legend")
        if not runs.board.rows:
            gr.Markdown(f"No run of {name} in this Space's results yet.", elem_id=f"task-{name}-empty")
            continue
        board_table(f"task-{name}-table", runs.board)
        gr.Plot(runs_chart(runs.task, runs.scores), show_label=False, format="png", elem_id=f"task-{name}-chart")
    if boards.skipped:
        gr.Markdown("Skipped:\n\n" + skipped_markdown(boards.skipped, 20), elem_id="tasks-skipped")
