"""The leaderboard's chart, a declared task's chart, and what every bar chart of nlue shares: bars that show a zero, legends that fit.

Built with matplotlib's object API (no pyplot state), so concurrent requests each draw
their own figure safely. The report's figures (:mod:`nlue.evals.report.style` and the
section modules) draw their bars and legends with the same two helpers:

* :func:`draw_bars`: a run that scored 0 (or too little to see) gets a mark on the axis in its
  colour and its number above it, so that every legend entry has something to point at;
* :func:`figure_legend`: the legend below the plot, inside the figure (constrained layout makes
  room for it), its labels wrapped and its columns as many as fit the figure's width.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from nlue.boards.columns import NLUE_SCORE, task_header
from nlue.boards.leaderboard import LeaderboardRow
from nlue.boards.tasks import RunScore
from nlue.registry.tasks import TASK_NAMES, TASKS, TaskSpec
from nlue.text.safe import plot_text

MAX_CHART_MODELS = 6
_PALETTE = ("#dc2626", "#2563eb", "#16a34a", "#d97706", "#7c3aed", "#0891b2")
LEGEND_WRAP = 48  # characters per line of a legend label
_BREAKS = re.compile(r"(?<=[/_-])(?=[^/_-])")  # after a run of slashes, underscores or hyphens
CHAR_WIDTH = 0.62  # a character's width in ems, about, in DejaVu Sans (matplotlib's default font)


def draw_bars(
    axes: Axes,
    positions: Sequence[float],
    values: Sequence[float | None],
    width: float,
    colour: str,
    label: str | None = None,
    visible: float = 0.0,
    number: str = "{:.0f}",
    **style: object,
) -> None:
    """Bars at ``positions`` (a None value draws nothing); a value within ``visible`` of 0 is marked and numbered.

    A bar of height 0 is invisible: the run would have a legend entry and nothing on the plot. Such a
    value gets a thick stroke on the axis the bar's width, in the bar's colour, and its number above it.
    """
    shown = [(x, v) for x, v in zip(positions, values, strict=True) if v is not None]
    axes.bar([x for x, _ in shown], [v for _, v in shown], width=width * 0.95, color=colour, label=label, **style)
    for x, value in shown:
        if abs(value) <= visible:
            half = width * 0.45
            axes.plot([x - half, x + half], [0, 0], color=colour, linewidth=3.5, solid_capstyle="butt",
                      clip_on=False, zorder=4)  # fmt: skip
            axes.annotate("0" if value == 0 else number.format(value), (x, 0), xytext=(0, 3), textcoords="offset points", ha="center",
                          va="bottom", fontsize=7, color=colour, zorder=4)  # fmt: skip


def _pieces(word: str, width: int) -> list[str]:
    """A word too long for a line, cut after its slashes, underscores and hyphens (else anywhere)."""
    out = [""]
    for part in _BREAKS.split(word):
        for start in range(0, len(part), width):
            chunk = part[start : start + width]
            if out[-1] and len(out[-1]) + len(chunk) > width:
                out.append("")
            out[-1] += chunk
    return out


def wrap_label(text: str, width: int = LEGEND_WRAP) -> str:
    """A legend label on lines of at most ``width`` characters: broken at spaces, long names after ``/ _ -``."""
    lines: list[str] = []
    for word in text.split():
        for position, piece in enumerate(_pieces(word, width) if len(word) > width else [word]):
            joint = "" if position else " "  # the pieces of one word join without a space
            if lines and len(lines[-1]) + len(joint) + len(piece) <= width:
                lines[-1] += joint + piece
            else:
                lines.append(piece)
    return "\n".join(lines)


def figure_legend(figure: Figure, fontsize: float = 8, max_columns: int = 3, handles=None, labels=None) -> None:
    """The figure's legend below its plots, every label wrapped and as many columns as fit the figure's width."""
    if handles is None:
        handles, labels = [], []
        for axes in figure.axes:
            found, texts = axes.get_legend_handles_labels()
            for handle, text in zip(found, texts, strict=True):
                if text not in labels:
                    handles.append(handle)
                    labels.append(text)
    if not handles:
        return
    wrapped = [wrap_label(plot_text(text)) for text in labels]  # names from results files: never mathtext
    longest = max(len(line) for text in wrapped for line in text.split("\n"))
    entry = (longest + 5) * CHAR_WIDTH * fontsize / 72  # inches: the label and its marker
    columns = max(1, min(max_columns, len(wrapped), int(figure.get_figwidth() * 0.96 // entry)))
    figure.legend(handles, wrapped, loc="outside lower center", ncols=columns, fontsize=fontsize, frameon=False)


def score_chart(rows: Sequence[LeaderboardRow]) -> Figure:
    """Grouped bars of each row's primary score per task (percent), plus its NLUE score."""
    rows = list(rows)[:MAX_CHART_MODELS]
    labels = [task_header(TASKS[t]) for t in TASK_NAMES] + [NLUE_SCORE.name.replace(" ", "\n")]
    figure = Figure(figsize=(11, 4.4 + 0.3 * len(rows)), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    if not rows:
        axes.text(0.5, 0.5, "Pick one or more models to chart", ha="center", va="center", fontsize=12)
        axes.set_axis_off()
        return figure
    width = 0.8 / len(rows)
    for index, row in enumerate(rows):
        values = [row.task_scores.get(t) for t in TASK_NAMES] + [row.nlue.score]
        positions = [i + (index - (len(rows) - 1) / 2) * width for i in range(len(labels))]
        draw_bars(axes, positions, [None if v is None else 100 * v for v in values], width,
                  _PALETTE[index % len(_PALETTE)], f"{row.model} ({row.kind})", visible=0.5)  # fmt: skip
    axes.set_xticks(range(len(labels)), labels, fontsize=9)
    axes.set_xlim(-0.6, len(labels) - 0.4)
    axes.set_ylim(0, 100)
    axes.set_ylabel("primary metric (%)")
    axes.set_title(
        "Primary metric per task (GMET: judged by people only); NLUE score = their mean, an nlue convention",
        fontsize=9,
        loc="left",
    )
    axes.axvline(len(labels) - 1.5, color="#9ca3af", linewidth=0.8, linestyle="--")
    axes.grid(axis="y", alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    figure_legend(figure, fontsize=8.5, max_columns=2)
    return figure


MAX_RUN_BARS = 16  # runs in one task's chart; more are in its table only


def runs_chart(task: TaskSpec, scores: Sequence[RunScore]) -> Figure:
    """One declared task's chart: a bar per run of its primary metric (percent) with the run's 95% interval.

    Checked runs are solid, unverified ones (no predictions to recompute them from) hatched; a run
    without an interval has no whisker. The axis spans the metric's range (0-100 for shares, down to
    -100 for a correlation below 0).
    """
    from nlue.scoring.ranges import CORRELATION, SHARE, metric_range

    shown = list(scores)[:MAX_RUN_BARS]
    figure = Figure(figsize=(max(7.0, 0.9 * len(shown) + 3.0), 4.2), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    if not shown:
        axes.text(0.5, 0.5, f"No run of {plot_text(task.name)} yet", ha="center", va="center", fontsize=12)
        axes.set_axis_off()
        return figure
    positions = list(range(len(shown)))
    for position, score in zip(positions, shown, strict=True):
        colour = _PALETTE[1] if not score.unverified else "#93c5fd"
        value = 100 * score.score
        draw_bars(axes, [position], [value], 0.6, colour, visible=0.5, hatch="//" if score.unverified else None,
                  edgecolor="#1e3a8a" if score.unverified else None)  # fmt: skip
        top = value
        if score.interval is not None:
            low, high = 100 * score.interval[0], 100 * score.interval[1]
            axes.errorbar([position], [value], yerr=[[max(0.0, value - low)], [max(0.0, high - value)]],
                          fmt="none", ecolor="#111827", elinewidth=1.2, capsize=6, zorder=5)  # fmt: skip
            top = max(value, high)
        axes.annotate(f"{value:.1f}", (position, max(top, 0.0)), xytext=(0, 3), textcoords="offset points",
                      ha="center", va="bottom", fontsize=8, color="#111827")  # fmt: skip
    labels = [wrap_label(plot_text(s.run + (" (sample data)" if s.sample else "")), 18) for s in shown]
    axes.set_xticks(positions, labels, fontsize=8)
    axes.set_xlim(-0.6, len(shown) - 0.4)
    lowest = min([100 * s.score for s in shown] + [100 * s.interval[0] for s in shown if s.interval])
    span = metric_range(task.primary_metric)
    if span == SHARE:
        axes.set_ylim(0, 100)
    elif span == CORRELATION:
        axes.set_ylim(-100 if lowest < 0 else 0, 100)
    if lowest < 0:
        axes.axhline(0, color="#374151", linewidth=0.8)
    axes.set_ylabel(f"{plot_text(task.primary_metric)} (%)")
    axes.set_title(f"{plot_text(task.name)}: {plot_text(task.primary_metric)} per run (%)\nthe task file's primary "
                   "metric · whiskers: 95% intervals · hatched: unverified", fontsize=9, loc="left")  # fmt: skip
    axes.grid(axis="y", alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    return figure
