"""Writing a report: one HTML page with its PNG figures beside it, the same in Markdown, one CSV per table.

Everything is written into a staging folder beside ``--out`` and moved into place when complete
(as `nlue build` does), so a report that fails half-way leaves the previous one (or nothing),
never half a folder. A folder that is not a report (no ``index.html`` and ``report.md``) is
never replaced.
"""

from __future__ import annotations

import csv
import html
import io
import logging
import math
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from nlue.data.sample import SAMPLE_DATA_NOTE
from nlue.data.staging import remove_stale_build_folders, write_owner_marker
from nlue.data.swap import swap_into_place
from nlue.errors import NlueError
from nlue.evals.report.style import CSS
from nlue.evals.report.types import INCONSISTENT, ORIGIN_COLUMN, ORIGIN_LABELS, Chart, Report, Section, Table
from nlue.text.safe import csv_row, markdown_text

logger = logging.getLogger(__name__)

PAGE, MARKDOWN = "index.html", "report.md"
MARKERS = {INCONSISTENT: "⚠", "note": "†"}
READING = (
    "Every row says whose numbers it holds (the *numbers* column): **paper, as printed** are a paper's own "
    "figures, unchanged; **ours** come from the results files in the folder above; **ours, from the paper's "
    "numbers** are our arithmetic on a paper's printed figures; **floor (ours)** rows are what answering one "
    "class always scores. ⚠ marks a printed cell that fails a consistency check (kept as printed, the reason "
    "below its table); † marks a cell worth a second look (the reason below its table)."
)


# ------------------------------------------------------------------ cells and inline Markdown
def cell_text(table: Table, column: str, value: Any) -> str:
    """A cell as shown: numbers in the column's format (two decimals by default), blanks for missing values."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return table.formats.get(column, "{:.2f}").format(value)
    return str(value)


# In the report's Markdown, a name from a results file is written with markdown_text: its HTML characters as
# entities and Markdown's punctuation after a backslash. Both stand for the character itself.
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash escapes any ASCII punctuation
_KEPT = re.compile("\x00(\\d+)\x00")


def inline_html(text: str) -> str:
    """The little Markdown the report's sentences use (`code`, **bold**, *italic*) as HTML, the rest escaped.

    ``text`` is the report's Markdown: names from results files in it are escaped (markdown_text), and
    show here as they are, never as markup, links or HTML.
    """
    literals: list[str] = []

    def keep(match: re.Match[str]) -> str:
        literals.append(match.group(1))
        return f"\x00{len(literals) - 1}\x00"

    source = _ESCAPED.sub(keep, html.unescape(text.replace("\x00", "")))
    out = html.escape(source, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"(?<![*\w])\*([^*\n]+)\*(?![*\w])", r"<em>\1</em>", out)
    return _KEPT.sub(lambda m: html.escape(literals[int(m.group(1))], quote=False), out)


def plain_text(text: str) -> str:
    """The report's Markdown as the plain text it shows (an image's alt text, the page's title)."""
    return html.unescape(_ESCAPED.sub(r"\1", text))


def _flag_notes(table: Table) -> list[str]:
    """One line per distinct flag reason, with its marker (several cells may share one)."""
    lines = []
    for flag in table.flags:
        line = f"{MARKERS.get(flag.kind, '†')} {flag.explanation}"
        if line not in lines:
            lines.append(line)
    return lines


# ------------------------------------------------------------------ HTML
# Text that reads as a number ("0.61 ± 0.05", "+0.120 (p=0.034)", "<0.1", "37.33 [11.4, 53.4]") is aligned as one.
_NUMBER_TEXT = re.compile(
    r"[+\-<]?\d*\.?\d+(?: ± \d*\.?\d+)?(?: \(p=<?\d*\.?\d+\))?(?: \[-?\d*\.?\d+,[ \u00a0]-?\d*\.?\d+\])?"
)
LONG_TEXT = 14  # characters: longer text wraps inside its cell, shorter text keeps to one line
TALL_TABLE = 24  # rows: a taller table scrolls inside its box, its header kept in view
WIDE_TABLE = 18  # columns: a wider table may not fit a 1280-pixel window, and says that it scrolls sideways
_BREAK_AFTER = re.compile(r"(/|\+|__)(?=\w)")
FOLDED_REASONS = 3  # more flag reasons than this are folded under their count


def _cell_class(value: Any, shown: str) -> str:
    number = isinstance(value, float | int) and not isinstance(value, bool)
    if number or shown in ("-", "—") or _NUMBER_TEXT.fullmatch(shown):
        return "num ci" if shown.endswith("]") else "num"  # a score and its interval may wrap before the bracket
    return "long" if len(shown) > LONG_TEXT else "text"


def _breakable(escaped: str) -> str:
    """Escaped text that may wrap after ``/``, ``+`` and ``__`` too (run names, neDIOM's inputs), not only at spaces."""
    return _BREAK_AFTER.sub(r"\1<wbr>", escaped)


def _html_table(table: Table) -> str:
    columns = [ORIGIN_COLUMN, *map(str, table.frame.columns)]  # column names are text, not Markdown
    head = "".join(f"<th>{_breakable(html.escape(c))}</th>" for c in columns)
    body = []
    for position, (origin, record) in enumerate(zip(table.origins, table.frame.itertuples(index=False), strict=True)):
        cells = [f'<td class="origin">{html.escape(ORIGIN_LABELS[origin])}</td>']
        for column, value in zip(table.frame.columns, record, strict=True):
            shown = cell_text(table, column, value)
            text = _breakable(html.escape(shown))
            classes = [_cell_class(value, shown)]
            flag = table.flag_at(position, column)
            title = ""
            if flag is not None:
                classes.append("flag" if flag.kind == INCONSISTENT else "mark")
                text = f"{MARKERS.get(flag.kind, '†')} {text}"
                title = f' title="{html.escape(flag.summary)}"'
            if (position, column) in table.styles:
                classes.append(table.styles[(position, column)])
            cells.append(f'<td class="{" ".join(classes)}"{title}>{text}</td>')
        body.append(f'<tr class="{origin}">{"".join(cells)}</tr>')
    notes_html = "".join(f"<li>{inline_html(n)}</li>" for n in table.notes)
    reasons = _flag_notes(table)
    if reasons:  # many flags share one check (STS-B's nine rows): a long list folds away, its count in view
        items = "".join(f"<li>{inline_html(n)}</li>" for n in reasons)
        notes_html += (
            f"<li><details{' open' if len(reasons) <= FOLDED_REASONS else ''}><summary>why the marked cells are "
            f"marked ({len(reasons)})</summary><ul>{items}</ul></details></li>"
        )
    wide = (
        f'<p class="wide">{len(columns)} columns: the table scrolls sideways where the window is narrower.</p>'
        if len(columns) > WIDE_TABLE
        else ""
    )
    grid = (
        f'{wide}<div class="scroll{" tall" if len(table.frame) > TALL_TABLE else ""}"><table id="{table.key}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
        f'</tbody></table></div><ul class="notes">{notes_html}</ul><p class="csv"><a href="{table.key}.csv">'
        f"{table.key}.csv</a></p>"
    )
    title = inline_html(table.title)
    if table.collapsed:
        return f'<details class="table"><summary>{title} ({len(table.frame)} rows)</summary>{grid}</details>'
    return f'<div class="table"><h3>{title}</h3>{grid}</div>'


def _html_chart(chart: Chart) -> str:
    caption = f"<figcaption>{inline_html(chart.caption)}</figcaption>" if chart.caption else ""
    return (
        f'<figure class="chart"><h3>{inline_html(chart.title)}</h3>'
        f'<img src="{chart.key}.png" alt="{html.escape(plain_text(chart.title))}">{caption}</figure>'
    )


def _html_section(section: Section) -> str:
    parts = [f'<section id="{section.key}"><h2>{html.escape(section.title)}</h2>']
    if section.sample:
        parts.append(f'<p class="sample">⚠ {html.escape(SAMPLE_DATA_NOTE)}: our rows in this section.</p>')
    parts += [f"<p>{inline_html(p)}</p>" for p in section.intro]
    if section.empty:
        parts.append(f'<p class="empty">{inline_html(section.empty)}</p>')
    for part in section.parts:
        if isinstance(part, Table):
            parts.append(_html_table(part))
        elif isinstance(part, Chart):
            parts.append(_html_chart(part))
        else:
            parts.append(f"<p>{inline_html(part)}</p>")
    return "".join(parts) + "</section>"


def _sample_banner(report: Report) -> str:
    return (
        f"SAMPLE DATA: {report.sample_files} of the {report.total_files} results files were scored on the "
        "embedded sample data (a few dozen items the nlue developers wrote to try the tools). Their numbers say "
        "nothing about any model; the papers' numbers are on the real test sets."
    )


def render_html(report: Report) -> str:
    toc = "".join(f'<li><a href="#{s.key}">{html.escape(s.title)}</a></li>' for s in report.sections)
    banner = f'<div class="banner">⚠ {html.escape(_sample_banner(report))}</div>' if report.sample else ""
    skipped = (
        "<details><summary>Results files left out</summary><ul>"
        + "".join(f"<li>{html.escape(s)}</li>" for s in report.skipped)
        + "</ul></details>"
        if report.skipped
        else ""
    )
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{html.escape(report.title)}'
        f"</title><style>{CSS}</style></head><body><header><h1>{html.escape(report.title)}</h1>"
        f'<p class="meta">Results folder <code>{html.escape(report.results_dir)}</code> · {report.total_files} '
        f'results files · written {html.escape(report.created)}</p>{banner}<p class="reading">{inline_html(READING)}'
        f"</p>{skipped}<nav><ol>{toc}</ol></nav></header><main>{''.join(map(_html_section, report.sections))}"
        "</main></body></html>\n"
    )


# ------------------------------------------------------------------ Markdown and CSV
def _md_cell(value: Any, shown: str) -> str:
    """A cell as Markdown: a number as we wrote it; text (a name from a results file) literal, never markup."""
    number = isinstance(value, float | int) and not isinstance(value, bool)
    return shown if number else markdown_text(shown)


def _md_table(table: Table) -> list[str]:
    columns = [markdown_text(c) for c in (ORIGIN_COLUMN, *map(str, table.frame.columns))]
    lines = [f"### {table.title}", "", "| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for position, (origin, record) in enumerate(zip(table.origins, table.frame.itertuples(index=False), strict=True)):
        cells = [ORIGIN_LABELS[origin]]
        for column, value in zip(table.frame.columns, record, strict=True):
            flag = table.flag_at(position, column)
            text = _md_cell(value, cell_text(table, column, value))
            cells.append(f"{MARKERS.get(flag.kind, '†')} {text}" if flag is not None else text)
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *(f"- {note}" for note in [*table.notes, *_flag_notes(table)]), "", f"CSV: `{table.key}.csv`", ""]
    return lines


def render_markdown(report: Report) -> str:
    lines = [
        f"# {report.title}",
        "",
        f"Results folder {markdown_text(report.results_dir)} · {report.total_files} results files · written "
        f"{report.created}",
        "",
    ]
    if report.sample:
        lines += [f"> **⚠ {_sample_banner(report)}**", ""]
    lines += [READING, ""]
    for section in report.sections:
        lines += [f"## {section.title}", ""]
        if section.sample:
            lines += [f"> ⚠ {SAMPLE_DATA_NOTE}: our rows in this section.", ""]
        lines += [line for paragraph in section.intro for line in (paragraph, "")]
        if section.empty:
            lines += [f"*{section.empty}*", ""]
        for part in section.parts:
            if isinstance(part, Table):
                lines += _md_table(part)
            elif isinstance(part, Chart):
                lines += [f"### {part.title}", "", f"![{part.title}]({part.key}.png)", "", part.caption, ""]
            else:
                lines += [part, ""]
    if report.skipped:
        lines += ["## Results files left out", "", *(f"- {markdown_text(s)}" for s in report.skipped), ""]
    return "\n".join(lines)


def table_csv(table: Table) -> str:
    """The table's values (numbers unformatted), with whose numbers each row holds and its flagged cells."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(csv_row([ORIGIN_COLUMN, *map(str, table.frame.columns), "flags"]))
    for position, (origin, record) in enumerate(zip(table.origins, table.frame.itertuples(index=False), strict=True)):
        flags = "; ".join(f"{f.column}: {f.summary}" for f in table.flags if f.row == position)
        values = ["" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in record]
        writer.writerow(csv_row([ORIGIN_LABELS[origin], *values, flags]))
    return buffer.getvalue()


# ------------------------------------------------------------------ the folder
def _png(chart: Chart) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    FigureCanvasAgg(chart.figure).print_png(buffer)
    return buffer.getvalue()


def _check_target(out: Path) -> None:
    if out.is_file():
        raise NlueError(f"--out {out} is a file; give a folder for the report")
    if out.is_dir() and any(out.iterdir()) and not ((out / PAGE).is_file() and (out / MARKDOWN).is_file()):
        raise NlueError(f"--out {out} holds files that are not a report: choose an empty or new folder")


def write_report(report: Report, out: Path) -> list[Path]:
    """Write the report into ``out`` (replacing an earlier report there); the paths written, page first.

    Staged and moved into place the way `nlue build` stages a dataset (:mod:`nlue.data.staging`):
    a report killed half-way leaves a marked staging folder that the next report removes.
    """
    out = Path(out)
    _check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_build_folders(out.parent, out.name, ("staging",))
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    try:
        write_owner_marker(staging)
        folder = staging / out.name
        folder.mkdir()
        files: dict[str, bytes] = {}
        for chart in (c for s in report.sections for c in s.charts):
            files[f"{chart.key}.png"] = _png(chart)
        for table in (t for s in report.sections for t in s.tables):
            files[f"{table.key}.csv"] = table_csv(table).encode("utf-8")
        files[MARKDOWN] = render_markdown(report).encode("utf-8")
        files[PAGE] = render_html(report).encode("utf-8")
        for name, content in files.items():
            (folder / name).write_bytes(content)
        swap_into_place(staging, out.parent, out.name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    logger.info("wrote %d files to %s", len(files), out)
    return [out / PAGE, *(out / name for name in files if name != PAGE)]
