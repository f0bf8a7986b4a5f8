"""What the Space's tables show of results files: names as text, whole headers, the sample flag by the model (issue 29).

The browser's view of the same (no truncated header at 1280 px, no remote image) is in test_space_e2e.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from nlue.boards import columns as cols
from nlue.results import RunResult, write_result
from nlue.text.safe import markdown_text

HOSTILE = "![x](http://e/x.png)<script>alert(1)</script> www.e.com"


def _hostile_results(results: Path) -> None:
    """A run whose model name and a file whose task name hold Markdown, HTML and bare links."""
    write_result(RunResult(task="sa", model=HOSTILE, kind="fine-tune", metrics={"accuracy": 0.5, "macro_f1": 0.5}),
                 results, "named")  # fmt: skip
    data = json.loads((results / "named" / "sa.json").read_text(encoding="utf-8"))
    (results / "bad-task").mkdir()
    (results / "bad-task" / "sa.json").write_text(json.dumps({**data, "task": HOSTILE}), encoding="utf-8")
    exam = RunResult(task="mcq_ne", model=HOSTILE, kind="zero-shot", metrics={"accuracy_all_items": 7.0})
    write_result(exam, results, "![x](x.png)<b>")  # a folder name is text from outside too


def _markup_free(text: str) -> bool:
    return not any(piece in text for piece in ("![", "](", "<script", "http://", "www.e"))


def test_names_from_results_files_are_text_in_the_space_never_markup(tmp_path: Path) -> None:
    """issue 29, item 20: a task or model name holding Markdown or HTML never renders as markup or a remote image."""
    from nlue.boards.exams import load_exam_board
    from nlue.boards.score_checks import skipped_markdown
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    _hostile_results(tmp_path / "results")
    service = SpaceService(SpaceSettings(models=tmp_path / "no-models", results_dir=tmp_path / "results"))
    _, status = service.leaderboard_table()  # a Markdown component: what the visitor reads under the table
    assert "bad\\-task/sa.json: unknown NLUE task" in status and _markup_free(status)
    assert "\\!\\[x\\]\\(http\\://e/x.png\\)&lt;script&gt;" in status  # the same characters, shown literally
    exams = load_exam_board(tmp_path / "results")
    assert exams.skipped and _markup_free(skipped_markdown(exams.skipped))  # the exam and idiom tabs' list


def test_markdown_text_leaves_nothing_a_renderer_would_link() -> None:
    """issue 29, item 20: bare URLs, www. names and e-mail addresses are linked by GitHub-flavoured renderers."""
    shown = markdown_text("see http://e/x.png, HTTPS://e, www.e.com or me@e.com")
    assert "http\\://e/x.png" in shown and "HTTPS\\://e" in shown and "www\\.e.com" in shown and "me\\@e.com" in shown


def test_the_sample_flag_and_the_check_sit_beside_the_model_in_both_views() -> None:
    """issue 29, item 29: the Data column (⚠ sample data) was the 33rd; it follows the model now, with the check."""
    for view in (cols.PAPER_VIEW, cols.PRIMARY_VIEW):
        names = [c.name for c in cols.leaderboard_columns(view=view)]
        assert names[:3] == ["Model", "Data", "Check"] and names.count("Data") == 1


def test_every_column_is_wide_enough_for_its_longest_header_word() -> None:
    """issue 29, item 29: 72 px columns cut "COLA acc" and "STSB Spearman" to "COL..." and "STS..." at 1280 px."""
    for columns in (cols.leaderboard_columns(True, cols.PRIMARY_VIEW, {"sa"}), cols.leaderboard_columns(view="paper")):
        for column, width in zip(columns, cols.column_widths(columns), strict=True):
            longest = max(len(word) for word in column.name.split())
            assert int(width.removesuffix("px")) >= 9 * longest + 28, (column.name, width)
