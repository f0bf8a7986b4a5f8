"""What a reader of `nlue report` sees: names shown as they are, every bar and legend entry visible, every column in view.

Issue 29, items 20 and 28. The report is written from a small results folder of hand-made results
files (no model is run); report.md is rendered with Python-Markdown and the page opened in headless
Chromium at 1280 pixels, its screenshot kept in test-artifacts/report/ (gitignored).
"""

from __future__ import annotations

import itertools
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sklearn.metrics import f1_score

from nlue.cli import main
from nlue.predictions import attach, prediction_rows
from nlue.registry.tasks import TASKS
from nlue.results import RunResult, write_result
from tests.browser import ARTIFACTS as TEST_ARTIFACTS
from tests.browser import chromium_page

pytest.importorskip("matplotlib")
ARTIFACTS = TEST_ARTIFACTS / "report"
SCRIPT, IMAGE, REMOTE = "<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "![x](http://e/x.png)"
GOLDS = [0, 1] * 6


def _sa(results: Path, run: str, model: str, answers: list[int]) -> None:
    items = [{"idx": i, "text": f"वाक्य {i}"} for i in range(len(GOLDS))]
    f1 = float(f1_score(GOLDS, answers, average="macro", zero_division=0))
    result = RunResult(task="sa", model=model, kind="zero-shot", metrics={"macro_f1": f1, "accuracy": f1},
                       dataset={"id": "test"}, hyperparameters={"mode": "generate", "shots": 0})  # fmt: skip
    attach(result, prediction_rows(TASKS["sa"], items, answers, GOLDS), results, run)
    write_result(result, results, run)


def _exam(results: Path, run: str, model: str) -> None:
    result = RunResult(task="mcq_ur", model=model, kind="zero-shot",
                       metrics={"accuracy_all_items": 0.0, "accuracy_parseable": 0.0, "invalid_rate": 1.0},
                       dataset={"id": "test"}, hyperparameters={"mode": "generate", "shots": 0, "prompt_language": "ur"},
                       details={"tables": {"level": [{"group": "Grade 8", "accuracy_all_items": 0.0, "n_items": 4}]}})  # fmt: skip
    write_result(result, results, run)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs named to break a page: HTML and Markdown in model, run and task names, and runs that scored 0."""
    root = tmp_path_factory.mktemp("looks")
    results = root / "results"
    _sa(results, IMAGE, SCRIPT, [1 - g for g in GOLDS])  # every answer wrong: macro-F1 0
    _sa(results, "cost $5 or $\\frac", "org/dollars", GOLDS)  # dollars: mathtext to matplotlib
    _sa(results, "a-long-run-name-from-a-sweep__ne-0shot-generate-with-a-very-long-suffix", "org/model", GOLDS[::-1])
    _exam(results, IMAGE, SCRIPT)
    _exam(results, ".", REMOTE)  # a file at the top of the folder is named by its model
    stray = json.loads((results / IMAGE / "sa.json").read_text(encoding="utf-8"))
    (results / "bad").mkdir()
    (results / "bad" / "x.json").write_text(json.dumps({**stray, "task": SCRIPT}), encoding="utf-8")
    out = root / "site"
    assert main(["report", str(results), "--out", str(out), "--resamples", "100", "-q"]) == 0
    return out


class _Page(HTMLParser):
    """The elements and the visible text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parsed(html_text: str) -> _Page:
    page = _Page()
    page.feed(html_text)
    return page


def test_names_from_results_files_are_shown_as_they_are(report: Path) -> None:
    """Issue 29, item 20: a model, run or task name holding HTML or Markdown appears literally in report.md and the page."""
    # A CommonMark renderer with GitHub's tables, as the Hub and GitHub show report.md.
    markdown_it = pytest.importorskip("markdown_it")
    commonmark = markdown_it.MarkdownIt("commonmark").enable("table")
    source = (report / "report.md").read_text(encoding="utf-8")
    for raw in (SCRIPT, IMAGE, REMOTE):
        assert raw not in source  # escaped wherever it is written
    for page in (_parsed(commonmark.render(source)),
                 _parsed((report / "index.html").read_text(encoding="utf-8"))):  # fmt: skip
        assert not [t for t, _ in page.tags if t == "script"]  # the page has no script of its own either
        images = [a.get("src") for t, a in page.tags if t == "img"]
        assert all(src and src.endswith(".png") and "/" not in src for src in images), images
        shown = "".join(page.text)
        for raw in (SCRIPT, IMAGE, REMOTE):
            assert raw in shown, raw  # the name itself, character for character


def _drawn(figure):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def test_a_zero_is_drawn_and_labels_and_legends_fit(report: Path) -> None:
    """Issue 29, item 28: a run that scored 0 has a mark; task labels never overlap; the legend is whole."""
    from matplotlib.figure import Figure

    from nlue.boards.charts import score_chart
    from nlue.boards.leaderboard import LeaderboardRow, paper_rows
    from nlue.evals.report.mcq_figures import level_figure

    long = "sweep-one/a-very-long-run-name-of-a-causal-lm__ne-0shot-generate"
    rows = [LeaderboardRow(model=f"{long}-{i}", kinds=("zero-shot",), data="x", task_scores={"sa": 0.0, "rte": 0.0})
            for i in range(4)] + [paper_rows()[-1]]  # fmt: skip
    for figure in (score_chart(rows), level_figure("mcq_ur", ["Grade 8", "Grade 10"], {"run": {"Grade 8": 0.0}})):
        renderer = _drawn(figure)
        box = figure.bbox
        (legend,) = figure.legends
        extent = legend.get_window_extent(renderer)
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1 and box.y0 <= extent.y0, (extent, box)
        axes = figure.axes[0]
        labels = [t.get_window_extent(renderer) for t in axes.get_xticklabels() if t.get_text()]
        assert all(a.x1 <= b.x0 for a, b in itertools.pairwise(labels)), "task labels overlap"
        zeros = [t for t in axes.texts if t.get_text() == "0"]
        assert zeros, "a score of 0 has no mark"
    chart = score_chart(rows)
    axes = chart.axes[0]
    # Each of the four runs scored 0 on SA, RTE and so its NLUE score: three marks each, in its colour.
    marks = [line for line in axes.get_lines() if list(line.get_ydata()) == [0, 0]]
    assert len(marks) == 4 * 3 and len({line.get_color() for line in marks}) == 4
    assert isinstance(chart, Figure)
    for name in ("nlue_scores_1.png", "mcq_ur_by_level.png"):  # the report drew them whole, dollars and all
        assert (report / name).stat().st_size > 10_000


def test_every_column_of_every_table_is_in_view_at_1280_pixels(report: Path) -> None:
    """Issue 29, item 28: at 1280 px every table shows every column (Data and Inv% included) or scrolls, saying so."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(1280, 900, "the report's browser test") as page:
        page.goto(report.joinpath("index.html").as_uri())
        page.wait_for_load_state("load")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        boxes = page.evaluate(
            """Array.from(document.querySelectorAll('div.scroll'), box => ({
                table: box.querySelector('table').id, fits: box.scrollWidth <= box.clientWidth + 1,
                says: (box.previousElementSibling || {}).className === 'wide',
                right: box.getBoundingClientRect().right}))"""
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        assert {"mcq_table4", "nediom_table3", "nlue_table4_inference"} <= {b["table"] for b in boxes}
        for box in boxes:
            assert box["right"] <= 1280 and (box["fits"] or box["says"]), box
        assert all(b["fits"] for b in boxes if b["table"].startswith(("mcq", "nediom", "nlue", "models")))
        page.screenshot(path=str(ARTIFACTS / "looks-1280.png"), full_page=True)
