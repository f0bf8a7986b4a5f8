"""neDIOM's leaderboard: one row per model and setting, one column per input variant (8), macro-F1.

`nlue idioms eval` writes one results file per variant and setting
(``<name>__<setting>__v<N>-.../nediom.json``, the cell's coordinates in ``details``);
this table puts them back together in the shape of the paper's Table 3 turned on its side:
the 8 variants as columns, our runs first, then the always-idiomatic and always-literal
floors of the test labels our runs used (a model on a floor answers one class only), then
the paper's seven models as printed (its Table 3; "-" where it has no result). Few-shot
cells are the mean over training seeds with their sd. Every file's scores are recomputed from its
per-item predictions first (:mod:`nlue.boards.score_checks`): a file whose scores disagree or lie
outside their range leaves its cell empty and is reported with the reason; the row's *check* says
which variants were left out or are unverified (no predictions). An unreadable file is skipped and
reported.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlue.boards.score_checks import PAPER_CELL, check_cell, check_results_file, is_refused
from nlue.boards.table import TableBoard, data_label, is_task_of_kind
from nlue.errors import NlueError
from nlue.registry.kinds.idiomaticity import VARIANTS, IdiomaticityKind
from nlue.registry.nediom import TABLE3, TABLE3_SETTINGS
from nlue.results import read_results
from nlue.scoring.ranges import range_problem

logger = logging.getLogger(__name__)

VARIANT_COLUMNS: tuple[str, ...] = tuple(f"v{v.number} {v.name}" for v in VARIANTS)
COLUMNS: tuple[str, ...] = ("model", "data", "check", "kind", "setting", *VARIANT_COLUMNS)
LEGEND = (
    "**neDIOM (idioms).** Macro-F1 of idiomatic vs literal for each of the paper's 8 inputs "
    "(context window, with or without the idiom); one row per model and setting (zero-shot; 5 or 10 "
    "training items per label). Few-shot cells are the mean over training seeds ± their sd. The "
    "`floor` rows answer one class always: a model on a floor has learnt nothing. Rows of kind "
    "`paper` are the neDIOM paper's Table 3 as printed; runs on the embedded sample are marked ⚠ and "
    "say nothing about a model. *check*: ✓ recomputed when every cell is what the run's per-item predictions "
    "give; variants without predictions are named unverified, variants whose scores disagree are left out."
)


def is_idiom_task(task_name: str) -> bool:
    return is_task_of_kind(task_name, IdiomaticityKind)


def _column(variant: Mapping[str, Any]) -> str:
    number = int(variant["number"])
    match = [name for name in VARIANT_COLUMNS if name.startswith(f"v{number} ")]
    if not match:
        raise NlueError(f"variant number {number} is not one of the 8")
    return match[0]


def _cell(metrics: Mapping[str, Any]) -> str:
    value = metrics.get("macro_f1")
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise NlueError("its metrics have no macro_f1")
    sd = metrics.get("macro_f1_sd")
    return f"{value:.2f} ± {sd:.2f}" if isinstance(sd, int | float) and math.isfinite(sd) else f"{value:.2f}"


def paper_rows() -> list[dict[str, Any]]:
    """Table 3 as printed: per model and setting, the 8 variants (None where the paper ran nothing)."""
    models = list(next(iter(TABLE3.values())))
    rows = []
    for model in models:
        for index, setting in enumerate(TABLE3_SETTINGS):
            cells = {}
            for variant, column in zip(VARIANTS, VARIANT_COLUMNS, strict=True):
                value = TABLE3[variant.context][model][2 * index + (0 if variant.with_idiom else 1)]
                cells[column] = "-" if value is None else f"{value:.2f}"
            rows.append({"model": model, "data": "neDIOM test (paper)", "check": PAPER_CELL, "kind": "paper",
                         "setting": setting, **cells})  # fmt: skip
    return rows


def result_rows(results_dir: Path) -> TableBoard:
    """Our neDIOM runs: files grouped by run name and setting, the newest file per variant."""
    root = Path(results_dir)
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    newest: dict[tuple[str, str, str], str] = {}
    floors: dict[str, Mapping[str, float]] = {}
    unverified: dict[tuple[str, str], list[str]] = {}
    left_out: dict[tuple[str, str], list[str]] = {}
    skipped: list[str] = []
    for path, data in read_results(root):  # files that cannot be read at all are listed on NLUE's table
        if not is_idiom_task(str(data.get("task"))):
            continue
        try:
            details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
            params = data.get("hyperparameters") if isinstance(data.get("hyperparameters"), Mapping) else {}
            # a zero-shot run by generation is another number than by log-likelihood: a row of its own, marked
            setting = str(details["setting"]) + (" · generation" if params.get("mode") == "generate" else "")
            column = _column(details["variant"])
            cell = _cell(data.get("metrics") or {})
        except (KeyError, TypeError, ValueError) as exc:
            logger.warning("neDIOM leaderboard: skipping %s: %s", path, exc)
            skipped.append(f"{path.relative_to(root)}: {exc}")
            continue
        # Folders are <name>__<setting>__v<N>-...: the run is the name before the setting.
        folder = path.parent.relative_to(root).as_posix()
        name = folder.split("__", 1)[0] if "__" in folder else str(data.get("model") or folder)
        dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
        row = runs.setdefault(
            (name, setting),
            {
                "model": name,
                "data": data_label(dataset),
                "kind": str(data.get("kind") or "unknown"),
                "setting": setting,
            },
        )
        check = check_results_file(path, data)
        variant = column.split(" ", 1)[0]
        if is_refused(check):
            logger.warning("neDIOM leaderboard: leaving out %s: %s", path, check.reason)
            skipped.append(f"{path.relative_to(root)}: left out: {check.reason}")
            left_out.setdefault((name, setting), []).append(variant)
            continue
        if not check.verified:
            unverified.setdefault((name, setting), []).append(variant)
        created = str(data.get("created") or "")
        if newest.get((name, setting, column), "") <= created:
            newest[(name, setting, column)] = created
            row[column] = cell
        if isinstance(details.get("floors"), Mapping):
            floors[row["data"]] = details["floors"]
    for key, row in runs.items():
        row["check"] = check_cell(sorted(set(unverified.get(key, ()))), sorted(set(left_out.get(key, ()))))
    rows = [runs[key] for key in sorted(runs)]
    for data_name, values in floors.items():
        for label, value in values.items():
            if problem := range_problem("macro_f1", value):  # a floor is a macro-F1, kept in details
                skipped.append(f"the {data_name} floor {label!r}: {problem}")
                continue
            row = {"model": label, "data": data_name, "check": "from the test labels", "kind": "floor", "setting": "-"}
            rows.append(row | dict.fromkeys(VARIANT_COLUMNS, f"{float(value):.2f}"))
    return TableBoard(COLUMNS, rows, skipped)


def load_nediom_board(results_dir: Path) -> TableBoard:
    """Our runs and their floors, then the paper's Table 3."""
    found = result_rows(results_dir)
    return TableBoard(COLUMNS, found.rows + paper_rows(), found.skipped)
