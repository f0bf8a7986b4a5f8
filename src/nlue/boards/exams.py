"""The exams' leaderboard: LLM runs on the native-language MCQ exams beside the UrduMMLU paper's Table 4.

NLUE's leaderboard has a column per NLUE task; an exam is scored per domain and per
prompt language instead, so exam results get a table of their own: one row per model,
exam, prompt language and shot count. The paper's rows are kept as printed (accuracy in
percent per domain, Inv% as text). Which denominator the paper used is not stated; its
figures read as accuracy over parseable outputs (see ``nlue.registry.mcq.denominator_flags``),
so they sit in the "parseable" column, and our runs show both accuracies side by side:
``accuracy_all_items`` (an invalid output counts as wrong, our primary) and
``accuracy_parseable`` (comparable with the paper). Every run's scores are recomputed from its
per-item predictions first (:mod:`nlue.boards.score_checks`): a file whose stored scores disagree or
lie outside their range is left out and reported with the reason, a file without predictions is
marked unverified and listed after the checked runs. Files of other tasks are left to the NLUE
leaderboard; an exam file that cannot be read is skipped and reported.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlue.boards.score_checks import PAPER_CELL, UNVERIFIED_CELL, VERIFIED_CELL, check_results_file, is_refused
from nlue.boards.table import TableBoard, data_label, is_task_of_kind
from nlue.errors import NlueError
from nlue.registry.kinds.multiple_choice import MultipleChoiceKind
from nlue.registry.mcq import TABLE4_COLUMNS, URDUMMLU_TABLE4, format_invalid_rate
from nlue.results import read_results
from nlue.scoring.ranges import range_problem

logger = logging.getLogger(__name__)

DOMAINS: tuple[str, ...] = TABLE4_COLUMNS[:-1]  # the paper's five domains; "All" is the overall column
PAPER_EXAM = "mcq_ur"  # Table 4 scores the Urdu exam
COLUMNS: tuple[str, ...] = (
    "model",
    "data",  # beside the model: a run on the sample data is flagged where the eye starts
    "check",
    "kind",
    "exam",
    "prompt",
    "shots",
    "mode",
    *DOMAINS,
    "All (parseable)",
    "All (all items)",
    "95% CI (all items)",
    "Inv%",
)
LEGEND = (
    "**Exams (LLMs).** One row per model, exam, prompt language and number of demonstrations. "
    "Domain columns and *All (parseable)* are accuracy (%) over the items whose output parsed, the "
    "denominator the UrduMMLU paper's Table 4 appears to use; *All (all items)* counts an invalid "
    "output as wrong (nlue's primary exam metric, an nlue convention). *Inv%* is the share of "
    "outputs the strict parser rejected. Rows of kind `paper` are Table 4 as printed (Urdu exam; "
    "`native` = Urdu prompts); runs on the embedded sample exams are marked ⚠ and say nothing about a model. "
    "*check*: ✓ recomputed when the scores are what the run's per-item predictions give; unverified runs "
    "(no predictions) come after the checked ones; a run whose scores disagree is left out, with the reason."
)


def is_exam(task_name: str) -> bool:
    """Whether ``task_name`` is scored on the exams' leaderboard (a multiple-choice exam)."""
    return is_task_of_kind(task_name, MultipleChoiceKind)


def paper_rows() -> list[dict[str, Any]]:
    """Table 4 of the UrduMMLU paper: two rows per model (English and Urdu prompts), as printed."""
    rows = []
    for paper in URDUMMLU_TABLE4:
        for prompt, values, invalid in (("en", paper.en, paper.en_invalid), ("native", paper.ur, paper.ur_invalid)):
            cells = dict(zip(TABLE4_COLUMNS, values, strict=True))
            rows.append(
                {
                    "model": paper.model,
                    "data": "UrduMMLU test (paper)",
                    "check": PAPER_CELL,
                    "kind": f"paper ({paper.group})",
                    "exam": PAPER_EXAM,
                    "prompt": prompt,
                    "shots": 0,
                    "mode": "generate",  # the paper generates and parses answers
                    **{domain: cells[domain] for domain in DOMAINS},
                    "All (parseable)": cells["All"],
                    "All (all items)": None,  # the paper gives no accuracy over all items
                    "95% CI (all items)": "",
                    "Inv%": invalid,
                }
            )
    return rows


def percent(value: Any) -> float | None:
    """A 0-1 score in percent with two decimals, as the tables print it; None for anything not a finite number."""
    number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return round(100.0 * float(value), 2) if number else None


def domain_scores(details: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """An exam results file's scores per domain: ``details.by.domain``, or the domain rows of ``details.tables``.

    `nlue llm mcq` writes the tables (one row per domain, ``group`` naming it); ``by`` is the shape of
    :func:`nlue.evals.mcq.score.score_answers`, read too for files written in it.
    """
    by = (details.get("by") or {}).get("domain")
    if isinstance(by, Mapping):
        return {str(name): scores for name, scores in by.items() if isinstance(scores, Mapping)}
    rows = (details.get("tables") or {}).get("domain") or []
    return {str(row.get("group")): row for row in rows if isinstance(row, Mapping)}


def _prompt(params: Mapping[str, Any]) -> str:
    """The prompt language as the paper's rows name it: ``en``, or ``native`` with the language (``native (ur)``)."""
    language = str(params.get("prompt_language", "?"))
    return f"native ({language})" if params.get("prompt_language_role") == "native" else language


def _run_row(model: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """One exam results file as a row; ValueError names what is missing."""
    metrics = data.get("metrics")
    if not isinstance(metrics, Mapping) or "accuracy_all_items" not in metrics:
        raise NlueError("its `metrics` has no accuracy_all_items")
    details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
    by_domain = domain_scores(details)
    for domain in DOMAINS:  # per-domain shares come from details, not metrics: checked for their range here
        value = (by_domain.get(domain) or {}).get("accuracy_parseable")
        if value is not None and (problem := range_problem("accuracy_parseable", value)):
            raise NlueError(f"its {domain} score: {problem}")
    params = data.get("hyperparameters") if isinstance(data.get("hyperparameters"), Mapping) else {}
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    low, high = percent(metrics.get("accuracy_all_items_ci_low")), percent(metrics.get("accuracy_all_items_ci_high"))
    invalid = metrics.get("invalid_rate")
    return {
        "model": model,
        "data": data_label(dataset),
        "kind": str(data.get("kind") or "unknown"),
        "exam": str(data["task"]),
        "prompt": _prompt(params),
        "shots": params.get("shots", "?"),
        "mode": str(params.get("mode", "?")),
        **{domain: percent((by_domain.get(domain) or {}).get("accuracy_parseable")) for domain in DOMAINS},
        "All (parseable)": percent(metrics.get("accuracy_parseable")),
        "All (all items)": percent(metrics["accuracy_all_items"]),
        "95% CI (all items)": f"{low:.1f}-{high:.1f}" if low is not None and high is not None else "",
        "Inv%": format_invalid_rate(float(invalid)) if isinstance(invalid, int | float) else "",
    }


def result_rows(results_dir: Path) -> TableBoard:
    """Every exam results file under ``results_dir``, one row each (the newest per model, exam, prompt, shots)."""
    root = Path(results_dir)
    newest: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}
    skipped: list[str] = []
    for path, data in read_results(root):  # files that cannot be read at all are listed on NLUE's table
        if not is_exam(str(data.get("task"))):
            continue
        parent = path.parent.relative_to(root).as_posix()
        model = str(data.get("model") or parent)
        try:
            row = _run_row(model if parent == "." else parent, data)
        except (ValueError, KeyError, TypeError) as exc:
            logger.warning("exam leaderboard: skipping %s: %s", path, exc)
            skipped.append(f"{path.relative_to(root)}: {exc}")
            continue
        check = check_results_file(path, data)
        if is_refused(check):
            logger.warning("exam leaderboard: leaving out %s: %s", path, check.reason)
            skipped.append(f"{path.relative_to(root)}: left out: {check.reason}")
            continue
        row["check"] = VERIFIED_CELL if check.verified else UNVERIFIED_CELL
        key = (row["model"], row["exam"], row["prompt"], row["shots"], row["mode"])
        created = str(data.get("created") or "")
        if key not in newest or newest[key][0] <= created:
            newest[key] = (created, row)
    return TableBoard(COLUMNS, [row for _, row in sorted(newest.values(), key=lambda pair: pair[1]["model"])], skipped)


def load_exam_board(results_dir: Path) -> TableBoard:
    """Our runs first (sorted by overall accuracy over all items, unverified ones after), then the paper's Table 4."""
    found = result_rows(results_dir)
    runs = sorted(found.rows, key=lambda r: (r["check"] != VERIFIED_CELL, -(r["All (all items)"] or 0.0)))
    return TableBoard(COLUMNS, runs + paper_rows(), found.skipped)
