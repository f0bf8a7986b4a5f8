"""Boards: the tables and figures made from results files, shown by both the Space and `nlue report`.

A room of its own below both, so that the report does not import the Gradio app's logic: the NLUE
leaderboard (:mod:`~nlue.boards.leaderboard`), the exams' and neDIOM's tables (:mod:`~nlue.boards.exams`,
:mod:`~nlue.boards.nediom`), the boards of tasks from task files (:mod:`~nlue.boards.tasks`), each
score's check against its predictions (:mod:`~nlue.boards.score_checks`), columns, charts and notes.
"""
