"""neDIOM's Figures 3-5 redrawn from our runs (matplotlib's object API, no pyplot state).

The paper plots its Table 3: F1 with and without the idiom by model and context (its Figure 3),
zero-shot against 5- and 10-shot fine-tuning (Figure 4), and BLOOM's sizes on S2 inputs
(Figure 5). Here the same views are drawn from the cells of our runs (:class:`IdiomCell`), with
our test labels' floors as lines: a bar on a floor is a model answering one class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from nlue.boards.charts import draw_bars, figure_legend
from nlue.evals.report.runs import model_family, model_size
from nlue.evals.report.style import colour, tidy
from nlue.registry.kinds.idiomaticity import CONTEXTS
from nlue.text.safe import plot_text

CONTEXT_NAMES: tuple[str, ...] = tuple(CONTEXTS)  # S2, S1+S2, S2+S3, S1+S2+S3: the paper's order
FLOOR_STYLE = {"always idiomatic": ":", "always literal": "--"}


@dataclass(frozen=True)
class IdiomCell:
    """One of our neDIOM numbers: a run's macro-F1 for one setting, context and idiom choice."""

    model: str
    setting: str
    context: str
    with_idiom: bool
    macro_f1: float


def _floors(axes: Axes, floors: Mapping[str, float]) -> None:
    for name, value in floors.items():
        axes.axhline(value, color="#6b7280", linewidth=0.9, linestyle=FLOOR_STYLE.get(name, ":"))
        axes.annotate(
            plot_text(f"{name} {value:.2f}"),
            (1.0, value),
            xycoords=("axes fraction", "data"),
            xytext=(3, 0),
            textcoords="offset points",
            fontsize=7,
            color="#6b7280",
            va="center",
        )


def _style(axes: Axes, title: str) -> None:
    axes.set_ylim(0, 1)
    axes.set_ylabel("macro-F1")
    tidy(axes, "y", title)


def idiom_figure(cells: Sequence[IdiomCell], settings: Sequence[str], floors: Mapping[str, float]) -> Figure:
    """Figure 3: per setting, bars by context: each model with the idiom (solid) and without it (hatched)."""
    models = list(dict.fromkeys(c.model for c in cells))
    figure = Figure(figsize=(11, 3.3 * len(settings) + 0.6), dpi=100, layout="constrained")
    width = 0.8 / (2 * len(models))
    value = {(c.model, c.setting, c.context, c.with_idiom): c.macro_f1 for c in cells}
    for row, setting in enumerate(settings):
        axes = figure.add_subplot(len(settings), 1, row + 1)
        for index, model in enumerate(models):
            for offset, with_idiom in enumerate((True, False)):
                slot = 2 * index + offset
                points = [
                    (x + (slot - (2 * len(models) - 1) / 2) * width, value.get((model, setting, c, with_idiom)))
                    for x, c in enumerate(CONTEXT_NAMES)
                ]
                draw_bars(
                    axes,
                    [x for x, _ in points],
                    [y for _, y in points],
                    width,
                    colour(index),
                    f"{model}, {'with' if with_idiom else 'without'} idiom" if row == 0 else None,
                    visible=0.005,
                    number="{:.2f}",
                    alpha=1.0 if with_idiom else 0.45,
                    hatch=None if with_idiom else "//",
                    edgecolor="white",
                )
        _floors(axes, floors)
        axes.set_xticks(range(len(CONTEXT_NAMES)), CONTEXT_NAMES)
        axes.set_xlim(-0.5, len(CONTEXT_NAMES) - 0.5)  # every panel the same contexts in the same places
        _style(axes, plot_text(f"{setting}: macro-F1 by context, with and without the idiom in the input"))
    figure_legend(figure, max_columns=4)
    return figure


def shots_figure(cells: Sequence[IdiomCell], settings: Sequence[str], floors: Mapping[str, float]) -> Figure:
    """Figure 4: mean macro-F1 over the contexts run, by setting: solid with the idiom, dashed without."""
    models = list(dict.fromkeys(c.model for c in cells))
    figure = Figure(figsize=(8, 4.2), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    for index, model in enumerate(models):
        for with_idiom in (True, False):
            xs, ys = [], []
            # Each line is nudged sideways a little, so that runs with equal scores do not hide one another.
            nudge = 0.04 * (2 * index + (0 if with_idiom else 1) - (2 * len(models) - 1) / 2)
            for x, setting in enumerate(settings):
                found = [
                    c.macro_f1 for c in cells if (c.model, c.setting, c.with_idiom) == (model, setting, with_idiom)
                ]
                if found:
                    xs.append(x + nudge)
                    ys.append(sum(found) / len(found))
            axes.plot(
                xs,
                ys,
                marker="o",
                color=colour(index),
                markerfacecolor=colour(index) if with_idiom else "white",
                linestyle="-" if with_idiom else "--",
                label=f"{model}, {'with' if with_idiom else 'without'} idiom",
                clip_on=False,  # a point at 0 sits on the axis, whole
                zorder=3,
            )
    _floors(axes, floors)
    axes.set_xticks(range(len(settings)), [plot_text(setting) for setting in settings])
    axes.set_xlim(-0.4, len(settings) - 0.6)
    _style(axes, "Zero-shot vs few-shot: mean macro-F1 over the contexts each run has")
    figure_legend(figure, max_columns=2)
    return figure


def sized_families(cells: Sequence[IdiomCell]) -> dict[str, list[str]]:
    """Model families with two or more sizes among our runs (the size read from each name), smallest first."""
    families: dict[str, set[str]] = {}
    for model in {c.model for c in cells if model_size(c.model) is not None}:
        families.setdefault(model_family(model), set()).add(model)
    return {
        family: sorted(models, key=lambda m: model_size(m) or 0.0)
        for family, models in sorted(families.items())
        if len({model_size(m) for m in models}) > 1
    }


def _size_label(millions: float) -> str:
    return f"{millions / 1000:g}B" if millions >= 1000 else f"{millions:g}M"


def size_figure(cells: Sequence[IdiomCell], families: Mapping[str, Sequence[str]], settings: Sequence[str]) -> Figure:
    """Figure 5: S2 macro-F1 against the model's size, per family, setting and idiom choice (log size axis)."""
    figure = Figure(figsize=(8, 4.2), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    value = {(c.model, c.setting, c.with_idiom): c.macro_f1 for c in cells if c.context == CONTEXT_NAMES[0]}
    line = 0
    for family, models in families.items():
        for setting in settings:
            for with_idiom in (True, False):
                points = [(model_size(m), value.get((m, setting, with_idiom))) for m in models]
                shown = [(x, y) for x, y in points if x is not None and y is not None]
                if len(shown) < 2:
                    continue
                axes.plot(
                    [x for x, _ in shown],
                    [y for _, y in shown],
                    marker="o",
                    color=colour(line),
                    linestyle="-" if with_idiom else "--",
                    label=f"{family}, {setting}, {'with' if with_idiom else 'without'} idiom",
                    clip_on=False,
                    zorder=3,
                )
                line += 1
    axes.set_xscale("log")
    sizes = sorted({size for models in families.values() for m in models if (size := model_size(m)) is not None})
    axes.set_xticks(sizes, [_size_label(size) for size in sizes])
    axes.xaxis.set_minor_formatter(NullFormatter())  # the sizes themselves, not powers of ten
    axes.set_xlabel("parameters (read from the model's name)")
    _style(axes, f"By model size: macro-F1 on {CONTEXT_NAMES[0]} inputs")
    figure_legend(figure, max_columns=2)
    return figure
