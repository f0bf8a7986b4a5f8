"""Is a stored score what its own per-item predictions give? Rescoring a results file, for submissions and the board.

A results file says what a model scored; its predictions file (:mod:`nlue.predictions`) says what the
model answered on every item, with the gold answer. ``nlue submit`` and the leaderboards trust a
score only after scoring those answers again with the code the runs use:

* the task kind's scoring problem (:func:`nlue.evals.compare.pairs.scoring_problem`: invalid LLM answers
  count as wrong, a run over several seeds is the mean over its seeds);
* a classification run by generation (``hyperparameters.mode: generate``) with the generation
  protocol's metrics (:func:`nlue.evals.llm.label_generation.generation_problem`);
* GMET judged by people with the judges' verdicts the predictions file keeps.

Every stored metric the rescoring also gives must agree within :data:`TOLERANCE`; the task's primary
metric must be among them. An exam run with option orders (``nlue llm mcq --option-orders cyclic``) must
also have every point number of its ``details.option_order_robustness`` given by its rows' per-rotation
answers (:func:`nlue.evals.mcq.order_robustness.disagreements`), and a run with ``--wordings all`` every
wording's primary and their spread in ``details.prompt_wording_robustness`` given by its rows' per-wording
answers (:func:`nlue.evals.llm.wordings.disagreements`), its paired tests against the main wording included
(recomputed with the stored resamples and seed; a file written before them has none and needs none). Every stored metric must also lie in its range
(:mod:`nlue.scoring.ranges`). Intervals, spreads over seeds and the extra numbers an evaluator keeps
(``acc_norm_*``, invalid counts) are range-checked only: they come from resampling or from data the
predictions file does not hold.

The outcome (:class:`ScoreCheck`) is one of three: ``verified`` (rescored and agreeing), ``unverified``
(nothing to rescore from: no predictions file, or a primary metric the predictions cannot give; the
board shows such a row apart and never ranks it with checked ones; ``nlue submit`` refuses it), or
``refused`` (a disagreement, a score out of range, a predictions file that cannot be read, is outside
the run folder or is not the one the results file records).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nlue.errors import NlueError
from nlue.predictions import read_predictions, split_fingerprint
from nlue.registry.kinds.classification import ClassificationKind
from nlue.registry.kinds.mask_fill import MaskFillKind
from nlue.registry.spec import TaskSpec
from nlue.registry.tasks import get_task
from nlue.results_files import predictions_file
from nlue.scoring.ranges import range_problem

# Stored scores are the same float64 computation written out by json (17 significant digits); a mean over
# seeds may be summed in another order. One millionth is far below the two decimals of a percentage shown.
TOLERANCE = 1e-6
HUMAN = "human"
Status = Literal["verified", "unverified", "refused"]
VERIFIED: Status = "verified"
UNVERIFIED: Status = "unverified"
REFUSED: Status = "refused"


@dataclass(frozen=True)
class ScoreCheck:
    """What rescoring one results file found: its status and, unless verified, why."""

    status: Status
    reasons: tuple[str, ...] = ()
    recomputed: Mapping[str, float] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.status == VERIFIED

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


def judged_by_people(data: Mapping[str, Any]) -> bool:
    """Whether a GMET results file's verdicts are people's (``verdicts: human``; older files say it in details)."""
    if data.get("verdicts") in ("automatic", HUMAN):
        return data.get("verdicts") == HUMAN
    details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
    return str(details.get("verdict_rule") or details.get("verdicts") or "").startswith(HUMAN)


def stored_metrics(data: Mapping[str, Any]) -> Mapping[str, Any]:
    metrics = data.get("metrics")
    return metrics if isinstance(metrics, Mapping) else {}


def _not_computed(value: Any) -> bool:
    """``null``, or NaN as files written before results were strict JSON say it (nothing parsed, say)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def range_problems(metrics: Mapping[str, Any]) -> list[str]:
    """Every stored metric that is not a finite number in its range; one that could not be computed passes.

    A metric stored as not computed (``null``, or an older file's NaN) still has to agree with the
    rescoring wherever the rescoring gives it (:func:`disagreements`).
    """
    return [problem for name, value in metrics.items() if not _not_computed(value) and
            (problem := range_problem(name, value))]  # fmt: skip


def recompute_metrics(
    task: TaskSpec, rows: Sequence[Mapping[str, Any]], data: Mapping[str, Any], golds: Sequence[Any] | None = None
) -> dict[str, float]:
    """The metrics the run's scoring code gives on ``rows`` (with ``golds`` in place of the rows' own, if given)."""
    return rescoring_problem(task, rows, data, golds).point_estimates()


def rescoring_problem(
    task: TaskSpec, rows: Sequence[Mapping[str, Any]], data: Mapping[str, Any], golds: Sequence[Any] | None = None
) -> Any:
    """The scoring problem (:class:`~nlue.scoring.problem.ScoringProblem`) of ``rows`` as the run's own scoring code
    builds it: :func:`recompute_metrics`'s numbers, and a bootstrap's (the clean-item scores resample it)."""
    from nlue.evals.compare.pairs import scoring_problem
    from nlue.evals.llm.label_generation import generation_problem
    from nlue.scores.tasks import build_problem

    if not rows:
        raise NlueError("the predictions file has no rows")
    if golds is not None:
        rows = [{**row, "gold": gold} for row, gold in zip(rows, golds, strict=True)]
    params = data.get("hyperparameters") if isinstance(data.get("hyperparameters"), Mapping) else {}
    predictions = [row["prediction"] for row in rows]
    if isinstance(task.kind, MaskFillKind) and judged_by_people(data):
        verdicts = [row.get("verdict") for row in rows]
        categories = [row.get("category") for row in rows] if task.categories else None
        problem = build_problem(task.name, predictions, verdicts, categories)[0]
    elif params.get("mode") == "generate" and isinstance(task.kind, ClassificationKind) and task.kind.has_classes:
        if any(isinstance(p, list) for p in predictions):
            raise NlueError("a run by generation has one answer per item, not one per seed")
        problem = generation_problem(predictions, [row["gold"] for row in rows], len(task.label_names))
    else:
        problem = scoring_problem(task, rows)
    return problem


def disagreements(
    metrics: Mapping[str, Any], recomputed: Mapping[str, float], tolerance: float = TOLERANCE
) -> list[str]:
    """Each stored metric that differs from its recomputed value by more than ``tolerance``, saying both."""
    found = []
    for name, value in recomputed.items():
        if name not in metrics:
            continue
        stored = metrics[name]
        if isinstance(stored, bool) or not isinstance(stored, int | float | None):
            continue  # not a number at all: range_problems says so
        if _not_computed(stored):
            if not math.isnan(value):
                found.append(f"{name}: stored as not computed, its predictions give {value:.6g}")
        elif math.isnan(value) or not abs(float(stored) - value) <= tolerance:
            found.append(f"{name}: stored {stored:.6g}, its predictions give {value:.6g}")
    return found


def compare_with_predictions(
    task: TaskSpec, rows: Sequence[Mapping[str, Any]], data: Mapping[str, Any], golds: Sequence[Any] | None = None
) -> ScoreCheck:
    """Rescore ``rows`` and hold the stored metrics against the result (ranges included)."""
    metrics = stored_metrics(data)
    reasons = range_problems(metrics)
    try:
        recomputed = recompute_metrics(task, rows, data, golds)
    except (NlueError, ValueError, TypeError, KeyError) as exc:
        return ScoreCheck(REFUSED, (*reasons, f"its predictions cannot be scored ({exc})"))
    reasons += disagreements(metrics, recomputed)
    if reasons:
        return ScoreCheck(REFUSED, tuple(reasons), recomputed)
    primary = task.primary_metric
    numbers = {k: float(v) for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    try:
        stored_primary = task.kind.primary_from(task, numbers)  # stsb's mean is derived where a file lacks it
    except NlueError:
        stored_primary = None
    if stored_primary is None and _not_computed(metrics.get(primary)) and math.isnan(recomputed.get(primary, 0.0)):
        return ScoreCheck(VERIFIED, (), recomputed)  # undefined (null, with its reason), as its predictions give it
    if primary not in recomputed or stored_primary is None:
        return ScoreCheck(UNVERIFIED, (f"its primary metric {primary} cannot be recomputed from its predictions",),
                          recomputed)  # fmt: skip
    if not abs(stored_primary - recomputed[primary]) <= TOLERANCE:
        return ScoreCheck(REFUSED, (f"{primary}: stored {stored_primary:.6g}, its predictions give "
                                    f"{recomputed[primary]:.6g}",), recomputed)  # fmt: skip
    return ScoreCheck(VERIFIED, (), recomputed)


def check_file(path: Path, data: Mapping[str, Any]) -> ScoreCheck:
    """Everything the board checks of one results file: ranges, its predictions file, and the rescoring.

    The predictions file must lie in the results file's folder and hold the items the results file
    records (its ``dataset.fingerprint`` and ``dataset.items``).
    """
    metrics = stored_metrics(data)
    in_range = range_problems(metrics)
    try:
        task = get_task(str(data.get("task")))
        rows_path = predictions_file(Path(path), data)
        if rows_path is None:
            status = REFUSED if in_range else UNVERIFIED
            return ScoreCheck(status, (*in_range, "no per-item predictions to recompute its scores from"))
        rows = read_predictions(rows_path)
    except NlueError as exc:  # an unknown task, a predictions file outside the folder, unreadable or too big
        return ScoreCheck(REFUSED, (*in_range, str(exc)))
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    recorded = dataset.get("fingerprint")
    if recorded is not None and recorded != split_fingerprint(rows):
        return ScoreCheck(REFUSED, (*in_range, f"{rows_path.name} holds other items or answers than its results "
                                    "file records (dataset fingerprint differs)"))  # fmt: skip
    if dataset.get("items") not in (None, len(rows)):
        return ScoreCheck(REFUSED, (*in_range, f"{rows_path.name} has {len(rows)} rows, the results file "
                                    f"says {dataset['items']} items"))  # fmt: skip
    return with_prompt_wordings(with_option_orders(compare_with_predictions(task, rows, data), data, rows), task, data,
                                rows)  # fmt: skip


def with_option_orders(check: ScoreCheck, data: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> ScoreCheck:
    """``check``, refused where an exam run's option-order section (``--option-orders``) disagrees with its rows."""
    from nlue.evals.mcq.order_robustness import SECTION, disagreements

    details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
    section = details.get(SECTION)
    if section is None:
        return check
    problems = disagreements(section, rows) if isinstance(section, Mapping) else [f"{SECTION} is not an object"]
    if not problems:
        return check
    return ScoreCheck(REFUSED, (*check.reasons, *problems), check.recomputed)


def with_prompt_wordings(
    check: ScoreCheck, task: TaskSpec, data: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> ScoreCheck:
    """``check``, refused where a run's prompt-wording section (``--wordings all``) disagrees with its rows: each
    wording's primary is rescored from its per-item answers as the run's own score is."""
    from nlue.evals.llm.wordings import SECTION, disagreements

    details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
    section = details.get(SECTION)
    if section is None:
        return check

    def primary_of(worded: list[dict[str, Any]]) -> float:
        recomputed = recompute_metrics(task, worded, data)
        return (
            recomputed[task.primary_metric]
            if task.primary_metric in recomputed
            else task.kind.primary_from(task, recomputed)
        )

    def problem_of(worded: list[dict[str, Any]]) -> Any:
        return rescoring_problem(task, worded, data)

    problems = (
        disagreements(section, rows, primary_of, problem_of)
        if isinstance(section, Mapping)
        else [f"{SECTION} is not an object"]
    )
    if not problems:
        return check
    return ScoreCheck(REFUSED, (*check.reasons, *problems), check.recomputed)


def add_wording_tests(
    result: Any, task: TaskSpec, rows: Sequence[Mapping[str, Any]], resamples: int | None, seed: int
) -> None:
    """Put each wording's paired test against the main one into ``result``'s prompt-wording section, if it has one,
    scoring the predictions ``rows`` as :func:`with_prompt_wordings` rescores them (so verify gets the same numbers)."""
    from nlue.evals.llm.wordings import SECTION, add_paired_tests

    section = result.details.get(SECTION)
    if section is None:
        return
    data = {"hyperparameters": result.hyperparameters}
    add_paired_tests(section, rows, lambda worded: rescoring_problem(task, worded, data), resamples, seed)
