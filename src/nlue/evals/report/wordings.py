"""The report's prompt-wording tables: runs made with ``nlue llm nlue|mcq --wordings all`` (ours alone).

One row per run and task: the primary metric under the main wording (the run's score), the spread over
the wordings (highest minus lowest) and their standard deviation beside it, their mean, every
wording's score by name, and each other wording's paired test against the main one (n/a for a file
written before the test) (:mod:`nlue.evals.llm.wordings` says what each means). A results file is outside
input: every number is read as one only when it is one, and the wording names are shown as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlue.boards.exams import percent
from nlue.evals.llm.wordings import MAIN, SECTION, VS_MAIN_HEADER, vs_main_text
from nlue.evals.report.runs import ResultFile
from nlue.evals.report.types import OURS, Table

NOTE = (
    "Ours: each test item asked in every wording of its prompt language (the task file's main prompt and the "
    "wordings it lists, ours for the shipped tasks), with the same demonstration items and the same label words, "
    "so only the wording changes; the papers ask with one prompt. The score is the main wording's; spread: the "
    "highest minus the lowest wording's score, std: their sample standard deviation, in points. Two or three "
    "wordings are a small sample: a small spread says these wordings agree, not that no wording would move the score. "
    "vs main: each wording's score minus the main wording's, in points, with its paired-bootstrap 95% interval and "
    "p over the same items (Holm's p across a task's wordings when more than one is tested); runs written before "
    "the test say n/a."
)


def _record(file: ResultFile, section: Mapping[str, Any]) -> dict[str, Any]:
    listed = section.get("wordings") if isinstance(section.get("wordings"), list) else []
    wordings = [w for w in listed if isinstance(w, Mapping)]
    main = next((w for w in wordings if w.get("name") == MAIN), {})
    shown = [(w.get("name"), percent(w.get("primary"))) for w in wordings]
    scores = [f"{name} {'n/a' if value is None else value}" for name, value in shown]
    adjusted = sum(isinstance(w.get("vs_main"), Mapping) for w in wordings) > 1
    tests = [f"{w.get('name')} {vs_main_text(w, adjusted)}" for w in wordings if w.get("name") != MAIN]
    return {
        "run": file.run,
        "task": file.task,
        "mode": str(file.hyperparameters.get("mode", "?")),
        "prompt language": str(section.get("prompt_language", "?")),
        "metric": str(section.get("primary_metric", "?")),
        "score, main wording (%)": percent(main.get("primary")),
        "spread (points)": percent(section.get("spread")),
        "std (points)": percent(section.get("std")),
        "mean (%)": percent(section.get("mean")),
        "wordings (%)": " · ".join(scores),
        VS_MAIN_HEADER: " · ".join(tests) if any("vs_main" in w for w in wordings) else "n/a (not tested)",
    }


def wording_table(files: Sequence[ResultFile], key: str, title: str) -> Table | None:
    """The table of ``files`` that hold a prompt-wording section; None when none does."""
    records = [_record(f, f.details[SECTION]) for f in files if isinstance(f.details.get(SECTION), Mapping)]
    if not records:
        return None
    return Table(key, title, pd.DataFrame(records), [OURS] * len(records), notes=[NOTE])
