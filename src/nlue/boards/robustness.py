"""Robustness beside the score: the prompt-wording spread and the option-order consistency of each checked run.

A run made with ``--wordings all`` holds ``details.prompt_wording_robustness`` (:mod:`nlue.evals.llm.wordings`),
an exam run made with ``--option-orders cyclic`` ``details.option_order_robustness``
(:mod:`nlue.evals.mcq.order_robustness`). Both are ours, not a paper's. :mod:`nlue.evals.verify` recomputes
every point number of either section from the run's per-item predictions, so this board shows a run's
row only where that check passed (:func:`nlue.boards.score_checks.check_results_file`): a refused run is left
out with the reason, and a run with no predictions (nothing to recompute from) is listed as not shown.

The columns of a section no shown run holds are dropped, so an exams table without option orders has no
empty consistency columns; where no run holds either section the board has no rows and nothing is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlue.boards.exams import is_exam, percent
from nlue.boards.score_checks import VERIFIED_CELL, check_results_file, is_refused
from nlue.boards.table import TableBoard, data_label, interval_text
from nlue.evals.llm.wordings import SECTION as WORDINGS
from nlue.evals.mcq.order_robustness import SECTION as ORDERS
from nlue.registry.tasks import TASKS
from nlue.results_folders import FoundResults, ResultsFolder, gather_results

RUN_COLUMNS: tuple[str, ...] = ("run", "data", "task", "mode", "metric", "score (%)")
WORDING_COLUMNS: tuple[str, ...] = ("wording spread (points)", "wording std (points)", "wordings (%)")
ORDER_COLUMNS: tuple[str, ...] = ("consistent (%)", "95% CI (consistent)", "order spread (points)")
LEGEND = (
    "**Robustness beside the score (ours; no paper measures it).** *Wording spread*: the run's primary metric "
    "under each wording of its prompt (`--wordings all`), highest minus lowest, in points; *std*: their sample "
    "standard deviation. *Consistent*: the share of exam items whose answer was the same option under every "
    "cyclic rotation of the options (`--option-orders cyclic`), with its 95% bootstrap interval over items; "
    "*order spread*: accuracy under the best rotation minus the worst. Every number is recomputed from the run's "
    "per-item predictions before it is shown; two or three wordings are a small sample of the ways to ask."
)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _row(found: FoundResults) -> dict[str, Any]:
    data, details = found.data, _mapping(found.data.get("details"))
    task = TASKS.get(str(data.get("task")))
    primary = task.primary_metric if task is not None else None
    row: dict[str, Any] = {
        "run": found.run, "data": data_label(_mapping(data.get("dataset"))), "task": str(data.get("task")),
        "mode": str(_mapping(data.get("hyperparameters")).get("mode", "")), "metric": primary or "",
        "score (%)": percent(_mapping(data.get("metrics")).get(primary)) if primary else None, "check": VERIFIED_CELL,
    }  # fmt: skip
    worded = _mapping(details.get(WORDINGS))
    if worded:
        listed = [w for w in worded.get("wordings") or [] if isinstance(w, Mapping)]
        scores = [(str(w.get("name")), percent(w.get("primary"))) for w in listed]
        row |= {
            "wording spread (points)": percent(worded.get("spread")),
            "wording std (points)": percent(worded.get("std")),
            "wordings (%)": " · ".join(f"{n} {'n/a' if v is None else v}" for n, v in scores),
        }
    orders = _mapping(details.get(ORDERS))
    if orders:
        row |= {"consistent (%)": percent(orders.get("consistent_share")),
                "95% CI (consistent)": interval_text(orders.get("consistent_share_ci_low"),
                                                     orders.get("consistent_share_ci_high")),
                "order spread (points)": percent(orders.get("accuracy_spread"))}  # fmt: skip
    return row


def robustness_board_of(folders: Sequence[ResultsFolder], exams: bool) -> TableBoard:
    """The runs of the folders that hold either section, each checked first: the exams' (on the Exams tab,
    :func:`nlue.boards.exams.is_exam`) or every other task's (on the leaderboard's)."""
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for found in gather_results(folders):
        details = _mapping(found.data.get("details"))
        if not (isinstance(details.get(WORDINGS), Mapping) or isinstance(details.get(ORDERS), Mapping)):
            continue
        if is_exam(str(found.data.get("task"))) != exams:
            continue
        where = f"{found.run}/{found.path.name}"
        check = check_results_file(found.path, found.data)
        if is_refused(check):
            skipped.append(f"{where}: left out: {check.reason}")
        elif not check.verified:
            skipped.append(f"{where}: not shown, its robustness numbers cannot be recomputed: {check.reason}")
        else:
            rows.append(_row(found))
    held = [c for c in (*WORDING_COLUMNS, *ORDER_COLUMNS) if any(c in row for row in rows)]
    return TableBoard((*RUN_COLUMNS, *held, "check"), rows, skipped)
