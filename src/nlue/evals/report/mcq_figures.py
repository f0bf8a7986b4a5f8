"""Pictures of the exams' section: the STEM - Humanities gap (the paper's and ours) and accuracy by level (ours)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from nlue.boards.charts import draw_bars, figure_legend
from nlue.evals.report.style import PALETTE, colour, tidy
from nlue.text.safe import plot_text

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
    bars = axes.barh(positions, values, color=colours, height=0.7)
    axes.bar_label(bars, fmt="%+.2f", fontsize=6.5, padding=2, color="#374151")  # a gap near 0 has no bar to see
    axes.set_yticks(positions, [plot_text(label) for label in labels], fontsize=7.5)
    axes.margins(x=0.08)  # room for the numbers at the bars' ends
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
        positions = [x + (index - (len(names) - 1) / 2) * width for x in range(len(levels))]
        draw_bars(axes, positions, [runs[name].get(level) for level in levels], width, colour(index), name, visible=0.5)
    axes.axhline(25, color="#6b7280", linestyle=":", linewidth=0.9, label="chance (1 in 4)")
    axes.set_xticks(range(len(levels)), [plot_text(level) for level in levels])
    axes.set_ylim(0, 100)
    axes.set_ylabel("accuracy, all items (%)")
    tidy(axes, "y", f"{exam}: accuracy by level (invalid outputs count as wrong)")
    figure_legend(figure, fontsize=7.5, max_columns=3)
    return figure
