"""The report's look: the page's style sheet, and the colours and frame its figures share.

Noto fonts first (Debian's fonts-noto-core has the Devanagari and Arabic scripts), so names and
sample text render with their conjuncts joined; text longer than a short word wraps inside its
cell, so that a table's every column fits a 1280-pixel window; a table wider than that anyway (every
pair of runs) scrolls sideways inside its box, with a scroll bar always shown and a line above it
saying so, so the page never grows past the window; each row's origin has its own background.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the page's style needs no matplotlib; only the figures' frame names its type
    from matplotlib.axes import Axes

# One colour per run in every figure, in this order.
PALETTE: tuple[str, ...] = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563")


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def tidy(axes: Axes, grid: str = "y", title: str = "") -> None:
    """The figures' one frame: a light grid along ``grid`` (x, y or both), no top or right spine, a small title."""
    axes.grid(axis=grid, alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    if title:
        axes.set_title(title, fontsize=9, loc="left")


CSS = """
:root { --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; }
* { box-sizing: border-box; }
body { font-family: "Noto Sans", "Noto Sans Devanagari", "Noto Naskh Arabic", "DejaVu Sans", sans-serif;
       color: var(--ink); margin: 0 auto; max-width: 1600px; padding: 12px 28px 48px; font-size: 14px;
       line-height: 1.45; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-top: 8px; border-top: 2px solid var(--ink); }
h3 { font-size: 15px; margin: 18px 0 6px; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; background: #f3f4f6; padding: 0 3px; }
.meta { color: var(--muted); margin: 0 0 8px; }
.banner { background: #fee2e2; border: 2px solid #b91c1c; color: #7f1d1d; font-weight: 700; font-size: 16px;
          padding: 10px 14px; margin: 10px 0; }
.sample { background: #fef2f2; border-left: 4px solid #b91c1c; color: #7f1d1d; font-weight: 600;
          padding: 4px 10px; }
.reading { background: #f9fafb; border: 1px solid var(--line); padding: 8px 12px; }
.empty { font-style: italic; color: #92400e; background: #fffbeb; border-left: 4px solid #f59e0b;
         padding: 4px 10px; }
nav ol { columns: 2; margin: 6px 0; }
.scroll { overflow-x: auto; max-width: 100%; width: fit-content; border: 1px solid var(--line);
          scrollbar-color: #9ca3af #f3f4f6; scrollbar-width: auto; }
.scroll::-webkit-scrollbar { height: 12px; width: 12px; background: #f3f4f6; }
.scroll::-webkit-scrollbar-thumb { background: #9ca3af; border-radius: 6px; }
.scroll.tall { max-height: 78vh; overflow-y: auto; }
p.wide { font-size: 12px; color: var(--muted); margin: 2px 0; }
table { border-collapse: collapse; font-size: 12.5px; }
th { background: #111827; color: #fff; font-weight: 600; text-align: left; padding: 4px 6px;
     vertical-align: bottom; white-space: normal; min-width: 40px; max-width: 150px; overflow-wrap: break-word;
     position: sticky; top: 0; z-index: 1; }
td { border-top: 1px solid var(--line); padding: 3px 6px; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { white-space: nowrap; }
td.num.ci { white-space: normal; min-width: 64px; }
td.long { white-space: normal; min-width: 100px; max-width: 280px; overflow-wrap: break-word; }
td.pair { white-space: normal; text-align: center; min-width: 62px; }
td.origin { white-space: normal; font-size: 11px; color: var(--muted); min-width: 100px; max-width: 112px; }
tr.paper td { background: #f3f4f6; }
tr.ours td { background: #eff6ff; }
tr.ours td.origin { color: #1d4ed8; font-weight: 600; }
tr.floor td { background: #fafafa; font-style: italic; }
tr.derived td { background: #f5f3ff; }
td.flag { background: #fde68a !important; font-weight: 600; }
td.mark { color: #6b7280; text-decoration: underline dotted; }
td.better { background: #bbf7d0 !important; font-weight: 600; }
td.worse { background: #fecaca !important; font-weight: 600; }
td.diagonal { color: #9ca3af; text-align: center; }
ul.notes { font-size: 12.5px; color: #374151; margin: 6px 0; padding-left: 20px; }
ul.notes summary { cursor: pointer; }
p.csv { font-size: 11px; margin: 0; }
figure.chart { margin: 16px 0; }
figure.chart img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { font-size: 12.5px; color: #374151; margin-top: 4px; }
details.table summary { cursor: pointer; font-weight: 600; margin: 12px 0 6px; }
"""
