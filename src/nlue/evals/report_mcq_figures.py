"""Pictures of the exams' section: the STEM - Humanities gap (the paper's and ours) and accuracy by level (ours)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from nlue.evals.report_style import PALETTE, colour, tidy

PAPER_COLOUR, OURS_COLOUR = "#9ca3af", "#2563eb"
MAX_LEVEL_RUNS = len(PALETTE)  # one colour each


def gap_figure(paper: Sequence[tuple[str, float]], ours: Sequence[tuple[str, float]]) -> Figure:
    """Horizontal bars of STEM minus Humanities accuracy (points): the paper's models (native prompt), then ours."""
    labels = [name for name, _ in paper] + [name for name, _ in ours]
    values = [value for _, value in paper] + [value for _, value in ours]
    colours = [PAPER_COLOUR] * len(paper) + [OURS_COLOUR] * len(ours)
    figure = Figure(figsize=(9, 0.22 * len(labels) + 1.4), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    positions = list(range(len(labels)))[::-1]  # first row on top, as in the table
    axes.barh(positions, values, color=colours, height=0.7)
    axes.set_yticks(positions, labels, fontsize=7.5)
    axes.axvline(0, color="#374151", linewidth=0.8)
    axes.set_xlabel("STEM − Humanities accuracy (points)")
    tidy(axes, "x", "Grey: the paper's Table 4, native-prompt columns (its Table 15, our arithmetic); blue: our runs")
    return figure


def level_figure(exam: str, levels: Sequence[str], runs: Mapping[str, Mapping[str, float]]) -> Figure:
    """Grouped bars: accuracy over all items (%) per level, one bar per run (at most MAX_LEVEL_RUNS)."""
    names = list(runs)[:MAX_LEVEL_RUNS]
    figure = Figure(figsize=(max(6.0, 1.6 * len(levels) + 3), 4.0), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(names))
    for index, name in enumerate(names):
        points = [(x + (index - (len(names) - 1) / 2) * width, runs[name].get(level)) for x, level in enumerate(levels)]
        shown = [(x, y) for x, y in points if y is not None]
        axes.bar(
            [x for x, _ in shown],
            [y for _, y in shown],
            width=width * 0.95,
            label=name,
            color=colour(index),
        )
    axes.axhline(25, color="#6b7280", linestyle=":", linewidth=0.9, label="chance (1 in 4)")
    axes.set_xticks(range(len(levels)), levels)
    axes.set_ylim(0, 100)
    axes.set_ylabel("accuracy, all items (%)")
    tidy(axes, "y", f"{exam}: accuracy by level (invalid outputs count as wrong)")
    figure.legend(fontsize=7.5, frameon=False, loc="outside lower center", ncols=2)
    return figure
