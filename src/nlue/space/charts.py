"""The leaderboard's chart: chosen models side by side, one group of bars per task.

Built with matplotlib's object API (no pyplot state), so concurrent requests each draw
their own figure safely.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from nlue.registry.tasks import TASK_NAMES, TASKS
from nlue.space.columns import NLUE_SCORE, task_header
from nlue.space.leaderboard import LeaderboardRow

MAX_CHART_MODELS = 6
_PALETTE = ("#dc2626", "#2563eb", "#16a34a", "#d97706", "#7c3aed", "#0891b2")


def score_chart(rows: Sequence[LeaderboardRow]) -> Figure:
    """Grouped bars of each row's primary score per task (percent), plus its NLUE score."""
    rows = list(rows)[:MAX_CHART_MODELS]
    labels = [task_header(TASKS[t]) for t in TASK_NAMES] + [NLUE_SCORE.name]
    figure = Figure(figsize=(11, 4.2), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    if not rows:
        axes.text(0.5, 0.5, "Pick one or more models to chart", ha="center", va="center", fontsize=12)
        axes.set_axis_off()
        return figure
    width = 0.8 / len(rows)
    for index, row in enumerate(rows):
        values = [row.task_scores.get(t) for t in TASK_NAMES] + [row.nlue.score]
        positions = [i + (index - (len(rows) - 1) / 2) * width for i in range(len(labels))]
        present = [(x, 100 * v) for x, v in zip(positions, values, strict=True) if v is not None]
        axes.bar(
            [x for x, _ in present],
            [v for _, v in present],
            width=width * 0.95,
            label=f"{row.model} ({row.kind})",
            color=_PALETTE[index % len(_PALETTE)],
        )
    axes.set_xticks(range(len(labels)), labels)
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
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=min(3, len(rows)), frameon=False)
    return figure
