"""What an exam run leaves behind for people: raw outputs, tables with intervals, a chart, the prompt-language gap.

* ``raw_outputs.jsonl``: one line per item with its id, groups, the SHA-256 of the prompt
  it was shown, the raw output (or, in log-likelihood mode, each option's log-likelihood),
  the strict parse (key, text, invalid category) and its verdict (correct / wrong /
  invalid), the lenient parse apart, and the gold key: the only file that holds the gold
  next to what the model did, written after scoring.
* Tables per domain, subdomain and level: items, parseable items, ``accuracy_all_items``
  with its 95% percentile-bootstrap interval (the package's one interval method, the same
  seed and resamples as the results file; a group of a few items gets a wide or degenerate
  interval, so its size is always shown), ``accuracy_parseable`` and the invalid rate;
  Markdown (``tables.md``) and one CSV per grouping.
* A PNG chart of ``accuracy_all_items`` per domain with its interval (matplotlib, the
  ``plots`` extra).
* The English vs native gap (:func:`prompt_gap`): two runs' outputs paired item by item.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.evals.mcq.parse import ParseResult
from nlue.evals.mcq.score import GROUPS, score_answers
from nlue.registry.kinds.mcq_text import LETTERS
from nlue.registry.kinds.multiple_choice import INVALID_PREDICTION, key_letter, multiple_choice_problem
from nlue.registry.mcq import format_invalid_rate
from nlue.scoring.significance import mcnemar_exact, paired_test
from nlue.text.safe import csv_cell
from nlue.text_table import text_table

RAW_OUTPUTS = "raw_outputs.jsonl"
TABLES = "tables.md"
CHART = "accuracy_by_domain.png"
GAP_TABLE = "prompt_gap.md"
TABLE_COLUMNS = ("group", "n_items", "parseable_items", "accuracy_all_items", "ci_low", "ci_high",
                 "accuracy_parseable", "invalid_rate")  # fmt: skip


# ------------------------------------------------------------------ atomic writes
def write_atomic(path: Path, write: Callable[[Any], None], binary: bool = False) -> Path:
    """Write ``path`` through ``write(handle)`` into a temporary file beside it, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as out:
            write(out)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    from nlue.strict_json import dumps_lines

    text = dumps_lines(rows, where=str(path))
    return write_atomic(path, lambda out: out.write(text))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise NlueError(
                f"{path}, line {number}: not JSON ({exc}); expected one raw-output record per line"
            ) from exc
    return rows


# ------------------------------------------------------------------ raw outputs
def verdict(parse: ParseResult, gold: str) -> str:
    if not parse.valid:
        return "invalid"
    return "correct" if parse.key == gold else "wrong"


def _parse_fields(parse: ParseResult, gold: str) -> dict[str, Any]:
    return {"key": parse.key, "text": parse.text, "category": parse.category, "verdict": verdict(parse, gold)}


def raw_output_rows(
    items: Sequence[Mapping[str, Any]],
    prompt_hashes: Sequence[str],
    answers: Sequence[Mapping[str, Any]],
    strict: Sequence[ParseResult],
    lenient: Sequence[ParseResult] | None,
) -> list[dict[str, Any]]:
    """One record per item (see the module docstring); ``answers`` hold what the model returned."""
    rows = []
    for position, (item, digest, answer, parse) in enumerate(zip(items, prompt_hashes, answers, strict, strict=True)):
        gold = key_letter(item["correct_key"])
        row = {"id": item.get("id"), **{group: item.get(group) for group in GROUPS}, "prompt_sha256": digest}
        row.update(answer)
        row.update(_parse_fields(parse, gold))
        if lenient is not None:
            row["lenient"] = _parse_fields(lenient[position], gold)
        row["gold_key"] = gold
        rows.append(row)
    return rows


# ------------------------------------------------------------------ tables
def group_rows(
    items: Sequence[Mapping[str, Any]],
    strict: Sequence[ParseResult],
    group: str | None,
    resamples: int | None,
    seed: int,
) -> list[dict[str, Any]]:
    """One row per value of ``group`` (or one ``all`` row), in first-seen order, with the interval of the accuracy."""
    values = ["all"] if group is None else list(dict.fromkeys(str(item.get(group, "")) for item in items))
    rows = []
    for value in values:
        chosen = [i for i, item in enumerate(items) if group is None or str(item.get(group, "")) == value]
        scores = score_answers(
            [items[i] for i in chosen], [strict[i] for i in chosen], bootstrap_resamples=resamples or None,
            seed=seed, groups=(),
        )  # fmt: skip
        rows.append(
            {"group": value, "n_items": scores["n_items"], "parseable_items": scores["parseable_items"],
             "accuracy_all_items": scores["accuracy_all_items"],
             "ci_low": scores.get("accuracy_all_items_ci_low"), "ci_high": scores.get("accuracy_all_items_ci_high"),
             "accuracy_parseable": scores["accuracy_parseable"], "invalid_rate": scores["invalid_rate"]}
        )  # fmt: skip
    return rows


def all_tables(
    items: Sequence[Mapping[str, Any]], strict: Sequence[ParseResult], resamples: int | None, seed: int
) -> dict[str, list[dict[str, Any]]]:
    """``{"overall": [...], "domain": [...], "subdomain": [...], "level": [...]}``."""
    tables = {"overall": group_rows(items, strict, None, resamples, seed)}
    tables.update({group: group_rows(items, strict, group, resamples, seed) for group in GROUPS})
    return tables


def _percent(value: float | None) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def _cells(row: Mapping[str, Any]) -> list[str]:
    interval = "" if row["ci_low"] is None else f" [{_percent(row['ci_low'])}, {_percent(row['ci_high'])}]"
    return [row["group"], str(row["n_items"]), str(row["parseable_items"]),
            f"{_percent(row['accuracy_all_items'])}{interval}", _percent(row["accuracy_parseable"]),
            format_invalid_rate(row["invalid_rate"])]  # fmt: skip


def _heading(name: str) -> str:
    return name if name == "overall" else f"by {name}"


HEADER = ["group", "items", "parseable", "accuracy, all items % [95% CI]", "accuracy, parseable %", "invalid %"]


def text_tables(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """The tables for a terminal, one block per grouping."""
    return "\n\n".join(
        f"{_heading(name)}:\n" + text_table([HEADER, *map(_cells, rows)]) for name, rows in tables.items()
    )


def markdown_tables(tables: Mapping[str, Sequence[Mapping[str, Any]]], title: str) -> str:
    lines = [f"# {title}", ""]
    for name, rows in tables.items():
        lines += [f"## {_heading(name).capitalize()}", "", "| " + " | ".join(HEADER) + " |", "|---" * len(HEADER) + "|"]
        lines += ["| " + " | ".join(_cells(row)) + " |" for row in rows]
        lines.append("")
    lines.append(
        "Accuracy over all items counts an invalid output as wrong (the primary, an nlue convention); accuracy "
        "over parseable items leaves invalid outputs out (what UrduMMLU's Table 4 appears to report). Intervals: "
        "95% percentile bootstrap over the group's items; with few items they are wide or collapse to a point."
    )
    return "\n".join(lines) + "\n"


def write_tables(folder: Path, tables: Mapping[str, Sequence[Mapping[str, Any]]], title: str) -> dict[str, Path]:
    """``tables.md`` and ``by_<group>.csv`` for each grouping; their paths by name."""
    paths = {"tables": write_atomic(folder / TABLES, lambda out: out.write(markdown_tables(tables, title)))}
    for name, rows in tables.items():

        def write(out: Any, rows: Sequence[Mapping[str, Any]] = rows) -> None:
            writer = csv.DictWriter(out, fieldnames=TABLE_COLUMNS)
            writer.writeheader()
            writer.writerows({name: csv_cell(value) for name, value in row.items()} for row in rows)

        paths[f"by_{name}"] = write_atomic(folder / f"by_{name}.csv", write)
    return paths


# ------------------------------------------------------------------ chart
def plot_domains(path: Path, rows: Sequence[Mapping[str, Any]], overall: float, title: str) -> Path:
    """A PNG bar chart of accuracy over all items per domain, with the 95% interval as an error bar."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise NlueError(
            "the chart needs matplotlib: pip install 'nlue[plots]' (or run without a chart: --no-chart)"
        ) from exc
    fig = Figure(figsize=(max(6.0, 1.3 * len(rows) + 2), 4.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    xs = np.arange(len(rows))
    heights = [0.0 if math.isnan(r["accuracy_all_items"]) else r["accuracy_all_items"] for r in rows]
    ax.bar(xs, heights, color="#4e79a7", width=0.6)
    with_ci = [i for i, r in enumerate(rows) if r["ci_low"] is not None and not math.isnan(r["ci_low"])]
    if with_ci:
        low = [heights[i] - rows[i]["ci_low"] for i in with_ci]
        high = [rows[i]["ci_high"] - heights[i] for i in with_ci]
        ax.errorbar(with_ci, [heights[i] for i in with_ci], yerr=[low, high], fmt="none", ecolor="#333333", capsize=4)
    ax.axhline(overall, color="#e15759", linestyle="--", linewidth=1, label=f"overall {100 * overall:.1f}%")
    ax.axhline(0.25, color="#9a9a9a", linestyle=":", linewidth=1, label="chance (1 in 4)")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r['group']}\n(n={r['n_items']})" for r in rows], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy, all items (invalid = wrong)")
    ax.legend(fontsize=8, loc="upper right", frameon=False)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return write_atomic(path, lambda out: out.write(buffer.getvalue()), binary=True)


# ------------------------------------------------------------------ English vs native
def _prediction(row: Mapping[str, Any]) -> int:
    return LETTERS.index(row["key"]) if row.get("verdict") in ("correct", "wrong") else INVALID_PREDICTION


def prompt_gap(
    english: Sequence[Mapping[str, Any]],
    native: Sequence[Mapping[str, Any]],
    resamples: int | None,
    seed: int,
    confidence_level: float = 0.95,
) -> dict[str, Any] | None:
    """Native minus English ``accuracy_all_items`` on the items both runs answered (raw-output records).

    The paired bootstrap of :func:`nlue.scoring.significance.paired_test` gives the interval
    and a p-value; the exact McNemar test counts the items only one prompt got right.
    None when the runs share no item.
    """
    by_id = {row["id"]: row for row in english}
    pairs = [(by_id[row["id"]], row) for row in native if row["id"] in by_id]
    if not pairs:
        return None
    conflicting = [en["id"] for en, nat in pairs if en["gold_key"] != nat["gold_key"]]
    if conflicting:
        raise NlueError(f"the two runs disagree on the gold key of item {conflicting[0]!r}: not the same exam")
    gold = [LETTERS.index(en["gold_key"]) for en, _ in pairs]
    problem_en = multiple_choice_problem([_prediction(en) for en, _ in pairs], gold, "the English-prompt run")
    problem_native = multiple_choice_problem([_prediction(nat) for _, nat in pairs], gold, "the native-prompt run")
    native_only = sum(nat["verdict"] == "correct" and en["verdict"] != "correct" for en, nat in pairs)
    english_only = sum(en["verdict"] == "correct" and nat["verdict"] != "correct" for en, nat in pairs)
    points_en, points_native = problem_en.point_estimates(), problem_native.point_estimates()
    gap: dict[str, Any] = {
        "metric": "accuracy_all_items",
        "n_paired": len(pairs),
        "accuracy_en": points_en["accuracy_all_items"],
        "accuracy_native": points_native["accuracy_all_items"],
        "difference": points_native["accuracy_all_items"] - points_en["accuracy_all_items"],
        "mcnemar": {"native_only_correct": native_only, "english_only_correct": english_only,
                    "p_value": mcnemar_exact(native_only, english_only)},
    }  # fmt: skip
    if resamples:
        test = paired_test(problem_native, problem_en, "accuracy_all_items", method="bootstrap",
                           resamples=resamples, seed=seed, confidence_level=confidence_level)  # fmt: skip
        gap.update(ci_low=test.ci_low, ci_high=test.ci_high, confidence_level=confidence_level,
                   p_value_bootstrap=test.p_value, resamples=resamples)  # fmt: skip
    return gap


def gap_text(gap: Mapping[str, Any]) -> str:
    """One paragraph for the terminal and ``prompt_gap.md``."""
    interval = (
        f", 95% CI [{100 * gap['ci_low']:+.1f}, {100 * gap['ci_high']:+.1f}] points, paired bootstrap "
        f"p = {gap['p_value_bootstrap']:.3g}"
        if "ci_low" in gap
        else ""
    )
    mcnemar = gap["mcnemar"]
    return (
        f"native - English prompt, accuracy over all items, on {gap['n_paired']} paired items: "
        f"{100 * gap['accuracy_native']:.1f}% - {100 * gap['accuracy_en']:.1f}% = "
        f"{100 * gap['difference']:+.1f} points{interval}; exact McNemar p = {mcnemar['p_value']:.3g} "
        f"({mcnemar['native_only_correct']} items right only with the native prompt, "
        f"{mcnemar['english_only_correct']} only with the English one)"
    )


def write_gap(folder: Path, gap: Mapping[str, Any], runs: Mapping[str, str]) -> Path:
    lines = ["# English vs native prompt", "", gap_text(gap), "", "Runs compared: "
             + ", ".join(f"{language}: `{name}`" for language, name in runs.items()) + "."]  # fmt: skip
    return write_atomic(folder / GAP_TABLE, lambda out: out.write("\n".join(lines) + "\n"))
