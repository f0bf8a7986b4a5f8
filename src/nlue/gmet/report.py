"""Per-category tables (CSV and Markdown) and the per-category bar chart of a GMET run."""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.registry.tasks import GMET_THEMES
from nlue.text.safe import csv_row

OTHER_THEME = "Other"


@dataclass(frozen=True)
class CategoryRow:
    theme: str
    category: str
    items: int
    correct: int
    accuracy: float | None  # None when the run has no item of this category


def category_rows(categories: Sequence[str], verdicts: Sequence[int]) -> list[CategoryRow]:
    """All 75 registry categories in theme order (empty ones included), then any unknown category."""
    totals = Counter(categories)
    correct: Counter[str] = Counter()
    for category, verdict in zip(categories, verdicts, strict=True):
        correct[category] += int(verdict)
    rows = []
    known: set[str] = set()
    for theme, names in GMET_THEMES.items():
        for name in names:
            known.add(name)
            n = totals.get(name, 0)
            rows.append(CategoryRow(theme, name, n, correct[name], correct[name] / n if n else None))
    for name in sorted(set(totals) - known):
        rows.append(CategoryRow(OTHER_THEME, name, totals[name], correct[name], correct[name] / totals[name]))
    return rows


def theme_rows(rows: Sequence[CategoryRow]) -> list[tuple[str, int, int, float | None]]:
    """(theme, items, correct, pooled accuracy) per thematic area."""
    out: dict[str, list[int]] = {}
    for row in rows:
        total = out.setdefault(row.theme, [0, 0])
        total[0] += row.items
        total[1] += row.correct
    return [(theme, n, c, c / n if n else None) for theme, (n, c) in out.items()]


def _fmt(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def write_category_csv(path: Path, rows: Sequence[CategoryRow]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["theme", "category", "items", "correct", "accuracy"])
        for row in rows:
            writer.writerow(csv_row([row.theme, row.category, row.items, row.correct, _fmt(row.accuracy)]))
    return path


HEADLINE_LABELS: tuple[tuple[str, str], ...] = (
    ("accuracy", "accuracy A"),
    ("equality", "equality E"),
    ("combined", "combined score C"),
)


def headline(metrics: Mapping[str, Any]) -> str:
    """'accuracy A = 0.1234 [0.10, 0.15] · equality E = ... · combined score C = ...' with CIs when present."""
    parts = []
    for key, label in HEADLINE_LABELS:
        if key not in metrics:
            continue
        text = f"{label} = {metrics[key]:.4f}"
        if f"{key}_ci_low" in metrics:
            text += f" [{metrics[f'{key}_ci_low']:.4f}, {metrics[f'{key}_ci_high']:.4f}]"
        parts.append(text)
    return " · ".join(parts)


def write_category_markdown(
    path: Path, rows: Sequence[CategoryRow], *, title: str, metrics: Mapping[str, Any], notes: Sequence[str] = ()
) -> Path:
    lines = [f"# {title}", "", headline(metrics), ""]
    lines += [f"> {note}" for note in notes]
    if notes:
        lines.append("")
    lines += ["## Thematic areas", "", "| theme | items | correct | accuracy |", "|---|---:|---:|---:|"]
    for theme, n, c, acc in theme_rows(rows):
        lines.append(f"| {theme} | {n} | {c} | {_fmt(acc) or '-'} |")
    lines += ["", "## Categories", "", "| theme | category | items | correct | accuracy |", "|---|---|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row.theme} | {row.category} | {row.items} | {row.correct} | {_fmt(row.accuracy) or '-'} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def chart_title(model: str, metrics: Mapping[str, Any], n_items: int, *, is_sample: bool, verdicts: str) -> str:
    first = f"GMET per-category accuracy: {model} ({verdicts} verdicts, {n_items} items)"
    second = headline({k: v for k, v in metrics.items() if not k.endswith(("_ci_low", "_ci_high"))})
    if is_sample:
        second += "  |  SAMPLE DATA: these scores mean nothing about the model"
    return f"{first}\n{second}"


def plot_categories(path: Path, rows: Sequence[CategoryRow], title: str, accuracy: float | None = None) -> Path:
    """A PNG bar chart of every category, grouped and coloured by thematic area; empty categories marked."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    themes = list(dict.fromkeys(row.theme for row in rows))
    palette = [
        "#4e79a7", "#59a14f", "#f28e2b", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f",
    ]  # fmt: skip
    colour = {theme: palette[i % len(palette)] for i, theme in enumerate(themes)}
    fig = Figure(figsize=(max(12.0, 0.24 * len(rows) + 2), 7.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    xs = range(len(rows))
    scored = [i for i, row in enumerate(rows) if row.accuracy is not None]
    # A faint full-height band marks every category that has items, so 0 % reads as "scored, none right".
    ax.bar(scored, [1.0] * len(scored), color=[colour[rows[i].theme] for i in scored], alpha=0.12, width=0.8)
    heights = [row.accuracy or 0.0 for row in rows]
    ax.bar(xs, heights, color=[colour[row.theme] for row in rows], width=0.8, edgecolor="none")
    empty = [i for i, row in enumerate(rows) if row.accuracy is None]
    if empty:
        ax.scatter(empty, [0.02] * len(empty), marker="x", color="#9a9a9a", s=18, zorder=3)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([row.category for row in rows], rotation=90, fontsize=7)
    for i in empty:
        ax.get_xticklabels()[i].set_color("#9a9a9a")
    # Theme boundaries and names.
    start = 0
    for theme in themes:
        size = sum(1 for row in rows if row.theme == theme)
        if start:
            ax.axvline(start - 0.5, color="#bbbbbb", linewidth=0.8)
        label = theme.replace(" ", "\n", 1) if len(theme) > 4 * size else theme  # narrow groups: two lines
        ax.text(start + size / 2 - 0.5, 1.015, label, ha="center", va="bottom", fontsize=7, color=colour[theme])
        start += size
    if accuracy is not None:
        ax.axhline(accuracy, color="#333333", linestyle="--", linewidth=0.9)
    ax.set_xlim(-0.7, len(rows) - 0.3)
    ax.set_ylim(0, 1.1)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("accuracy")
    handles = [Patch(color=colour[t], label=t) for t in themes]
    handles.append(Line2D([], [], marker="x", color="#9a9a9a", linestyle="none", label="no items in this run"))
    if accuracy is not None:
        handles.append(Line2D([], [], color="#333333", linestyle="--", label="overall accuracy A"))
    ax.legend(
        handles=handles, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(handles), frameon=False
    )
    ax.set_title(title, fontsize=10, pad=24)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path
