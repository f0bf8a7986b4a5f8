"""The NLUE leaderboard's clean columns: a task's primary score on its clean items, where findings exist for it.

``nlue contamination`` findings give each run of a checked task a clean score (:mod:`nlue.boards.contamination`:
recomputed from its per-item predictions, only for a run whose stored scores those give). The leaderboard
shows it beside the scores as ``<TASK> clean (<corpus>)``: one column per task and corpus that has findings,
none for any other task, and a blank for a row none of whose runs has a clean score (the paper's rows, a run
without predictions). The numbers are the contamination board's, never computed again here; its own table
keeps the intervals, the flagged counts and the reasons a run was left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlue.boards import columns as cols
from nlue.boards.leaderboard import LeaderboardRow
from nlue.registry.tasks import TASK_NAMES, TASKS

CORPUS_CHARS = 40
_UNSAFE = re.compile(r"[^\w.\-/]+")  # a corpus name from a file goes into a header: plain characters only


def corpus_label(corpus: str) -> str:
    """A corpus name as a header shows it: letters, digits, ``. _ - /``, at most 40 characters."""
    return _UNSAFE.sub("-", corpus).strip("-")[:CORPUS_CHARS] or "corpus"


def clean_header(task: str, corpus: str) -> str:
    return f"{cols.task_header(TASKS[task])}{cols.CLEAN_MARK}{corpus_label(corpus)})"


def with_clean_columns(frame: pd.DataFrame, rows: Sequence[LeaderboardRow],
                       scores: Sequence[Mapping[str, Any]]) -> pd.DataFrame:  # fmt: skip
    """``frame`` (one line per row of ``rows``) with a clean column per NLUE task and corpus that ``scores`` (the
    contamination board's score rows) hold, each after the task's last column; unchanged without any."""
    by_file: dict[tuple[str, str], dict[str, float | None]] = {}  # (task, corpus) -> results file -> clean %
    for score in scores:
        if score.get("task") in TASK_NAMES:
            by_file.setdefault((score["task"], score["corpus"]), {})[score["results file"]] = score["clean items (%)"]
    if not by_file:
        return frame
    out = frame.copy()
    for task in TASK_NAMES:
        for (name, corpus), clean in sorted(by_file.items()):
            if name != task:
                continue
            values = [next((clean[f] for f in row.files if f in clean), None) for row in rows]
            header = clean_header(task, corpus)
            mark = cols.task_header(TASKS[task])
            own = [i for i, c in enumerate(out.columns) if c == mark or str(c).startswith(f"{mark} ")]
            out.insert(own[-1] + 1 if own else len(out.columns), header, pd.Series(values, dtype=float).values)
    return out
