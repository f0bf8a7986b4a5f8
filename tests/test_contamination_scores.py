"""Scores on clean items: contamination findings joined to runs' per-item predictions, in the report and the boards.

A real baseline run on the sample (sa, stsb) and an exam run written from its rows (mcq_ur), a corpus that holds
a few of their test items, and `nlue contamination` writing the findings beside the runs: the clean score must be
the metric sklearn/scipy give on the items no measure flagged, and findings of another build must be refused.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score

from nlue.boards.contamination import load_contamination_board
from nlue.cli import main
from nlue.errors import NlueError
from nlue.evals.contamination.clean_scores import findings_of, is_clean, join_findings
from nlue.evals.report.build import ReportOptions, build_report
from nlue.evals.verify import recompute_metrics
from nlue.predictions import prediction_rows, read_predictions, split_fingerprint, write_predictions
from nlue.registry.tasks import get_task
from nlue.results import SCHEMA_VERSION
from nlue.text.safe import csv_cell_read

PLANTED = {"sa": (0, 3, 5), "stsb": (1, 4), "mcq_ur": (0, 2, 7)}  # test items copied into the corpus, by position
HOSTILE = '=HYPERLINK("http://x")<script>alert(1)</script>|*corpus*'


def _test_rows(repo: Path, task: str) -> list[dict]:
    from nlue.data.access import load_task

    return list(load_task(str(repo), get_task(task))["test"])


def _exam_run(results: Path, repo: Path) -> None:
    """An exam run as `nlue llm mcq` writes one: its rows by nlue.predictions, its metrics the rows' own."""
    task = get_task("mcq_ur")
    items = _test_rows(repo, "mcq_ur")
    golds = [task.kind.gold(task, item) for item in items]
    answers = [("A", "B", "C", "D")[(i * 7) % 4] if i % 5 else None for i in range(len(items))]  # None: invalid
    rows = prediction_rows(task, items, answers, golds)
    folder = results / "exam-run"
    folder.mkdir(parents=True)
    write_predictions(folder / "mcq_ur.predictions.jsonl", rows)
    data = {"schema_version": SCHEMA_VERSION, "task": "mcq_ur", "model": "exam-run", "kind": "zero-shot",
            "predictions": "mcq_ur.predictions.jsonl", "hyperparameters": {"mode": "loglik"},
            "dataset": {"id": str(repo), "split": "test", "is_sample": True, "fingerprint": split_fingerprint(rows)},
            "identity": {"split": "test", "split_items": len(items)}}  # fmt: skip
    data["metrics"] = recompute_metrics(task, rows, data)
    (folder / "mcq_ur.json").write_text(json.dumps(data), encoding="utf-8")


def _corpus(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(f"यो लेखमा उद्धृत: {t} (अन्त्य)\n" for t in texts) + "अरू कुनै पाठ\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def results(sample_build, exam_build, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("clean-scores")
    out = root / "results"
    nlue, exams = Path(sample_build.repo_dir), Path(exam_build.repo_dir)
    assert main(["baseline", "--tasks", "sa,stsb", "--dataset", str(nlue), "--bootstrap", "0", "--name", "tfidf",
                 "--results-dir", str(out), "-q"]) == 0  # fmt: skip
    _exam_run(out, exams)
    for repo, tasks in ((nlue, ("sa", "stsb")), (exams, ("mcq_ur",))):
        texts = []
        for name in tasks:
            task = get_task(name)
            rows = _test_rows(repo, name)
            fields = task.kind.identity_fields(task)
            texts += [" ".join(str(rows[i][f]) for f in fields) for i in PLANTED[name]]
        corpus = _corpus(root / f"{repo.name}.txt", texts)
        assert main(["contamination", "--dataset", str(repo), "--tasks", ",".join(tasks), "--corpus", str(corpus),
                     "--results-dir", str(out), "-q"]) == 0  # fmt: skip
    return out


def _clean_rows(results: Path, run: str, task: str) -> tuple[list[dict], list[dict]]:
    (findings,) = [f for f in findings_of(results)[0] if f.task == task]
    rows = read_predictions(results / run / f"{task}.predictions.jsonl")
    return rows, [r for r in rows if is_clean(findings.records[r["id"]])]


def test_the_clean_score_is_the_metric_on_the_items_no_measure_flagged(results: Path) -> None:
    """issue 32, item 1: per run and task, the flagged items are the planted ones, and the clean score is what
    sklearn/scipy give on the other items (the all-items score, what the run stored)."""
    board = load_contamination_board(results)
    shown = {row["task"]: row for row in board.scores.rows}
    assert set(shown) == {"sa", "stsb", "mcq_ur"} and board.skipped == []
    sa_rows, sa_clean = _clean_rows(results, "tfidf", "sa")
    assert {r["id"] for r in sa_rows} - {r["id"] for r in sa_clean} == {sa_rows[i]["id"] for i in PLANTED["sa"]}
    expected = f1_score([r["gold"] for r in sa_clean], [r["prediction"] for r in sa_clean], average="macro")
    assert shown["sa"]["clean items (%)"] == round(100 * expected, 2)
    stored = json.loads((results / "tfidf" / "sa.json").read_text(encoding="utf-8"))["metrics"]["macro_f1"]
    assert shown["sa"]["all items (%)"] == round(100 * stored, 2)
    assert (shown["sa"]["items"], shown["sa"]["flagged"], shown["sa"]["clean"]) == (10, 3, 7)
    assert shown["sa"]["clean − all (points)"] == pytest.approx(100 * (expected - stored), abs=0.011)
    low, high = (float(x) for x in shown["sa"]["95% CI (clean)"].split("–"))
    assert low <= 100 * expected <= high

    _, stsb_clean = _clean_rows(results, "tfidf", "stsb")
    golds, predicted = [r["gold"] for r in stsb_clean], [r["prediction"] for r in stsb_clean]
    expected = (pearsonr(predicted, golds)[0] + spearmanr(predicted, golds)[0]) / 2
    assert (shown["stsb"]["clean"], shown["stsb"]["clean items (%)"]) == (8, round(100 * expected, 2))

    mcq_rows, mcq_clean = _clean_rows(results, "exam-run", "mcq_ur")
    assert len(mcq_rows) - len(mcq_clean) == shown["mcq_ur"]["flagged"] == 3
    expected = accuracy_score([r["gold"] for r in mcq_clean], [r["prediction"] or "invalid" for r in mcq_clean])
    assert shown["mcq_ur"]["clean items (%)"] == round(100 * expected, 2)
    checked = {row["task"]: row for row in board.checked.rows}
    assert {t: (r["items checked"], r["flagged"], r["by char"]) for t, r in checked.items()} == {
        "sa": (10, 3, 3), "stsb": (10, 2, 2), "mcq_ur": (len(mcq_rows), 3, 3)}  # fmt: skip


def _edited_copy(results: Path, tmp_path: Path, edit) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    (path,) = [p for p in (copy / "contamination").rglob("*.json") if "sa" in json.loads(p.read_text())["tasks"]]
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return copy


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["tasks"]["sa"]["items"][4].update(input_sha256="0" * 64), "1 were checked with other text"),
        (lambda d: d["tasks"]["sa"]["items"].pop(), "checked 9 sa items; the run's split has 10"),
        (lambda d: d["dataset"].update(split="validation"), "checked the 'validation' split; the run scored 'test'"),
    ],
)
def test_findings_of_another_build_of_the_data_are_refused(results: Path, tmp_path: Path, edit, expected) -> None:
    """issue 32, item 1: an item shown with other text, a split of another size, another split: no clean score,
    the reason listed; never joined by id alone."""
    copy = _edited_copy(results, tmp_path, edit)
    board = load_contamination_board(copy)
    assert "sa" not in {row["task"] for row in board.scores.rows} and "mcq_ur" in {r["task"] for r in board.scores.rows}
    (reason,) = [line for line in board.skipped if line.startswith("tfidf/sa.json")]
    assert expected in reason and "no clean score" in reason
    (findings,) = [f for f in findings_of(copy)[0] if f.task == "sa"]
    data = json.loads((copy / "tfidf" / "sa.json").read_text(encoding="utf-8"))
    with pytest.raises(NlueError, match=r"split|build"):
        join_findings(findings, read_predictions(copy / "tfidf" / "sa.predictions.jsonl"), data)


def _sa_item(position: int, **changes):
    return lambda d: d["tasks"]["sa"]["items"][position].update(changes)


@pytest.mark.parametrize(
    ("edit", "flagged", "by_source", "not_checked", "clean"),
    [
        (_sa_item(1, source_in_corpus=True, source=0.4), 4, 1, 0, 6),  # its English original found: flagged
        (_sa_item(1, source_in_corpus=False, source=0.0), 3, 0, 0, 7),  # its original looked for, not found
        (_sa_item(1, verdict="not_checked", word=None, char=None), 3, 0, 1, 6),  # too short: neither group
    ],
)
def test_the_source_measure_flags_and_an_unchecked_item_is_not_clean(
    results: Path, tmp_path: Path, edit, flagged: int, by_source: int, not_checked: int, clean: int
) -> None:
    """issue 32, item 1: an item whose English source the corpus holds is left out of the clean score like one
    found by n-grams; an item no n-gram could check is in neither group, and counted."""
    copy = _edited_copy(results, tmp_path, edit)
    (row,) = [r for r in load_contamination_board(copy).scores.rows if r["task"] == "sa"]
    assert (row["flagged"], row["by source"], row["not checked"], row["clean"]) == (
        flagged, by_source, not_checked, clean)  # fmt: skip
    _, clean_rows = _clean_rows(copy, "tfidf", "sa")
    expected = f1_score([r["gold"] for r in clean_rows], [r["prediction"] for r in clean_rows], average="macro")
    assert len(clean_rows) == clean and row["clean items (%)"] == round(100 * expected, 2)


def test_a_run_whose_scores_disagree_with_its_rows_gets_no_clean_score(results: Path, tmp_path: Path) -> None:
    """issue 32, item 1: the clean score is recomputed only for runs whose stored scores their predictions give."""
    copy = _edited_copy(results, tmp_path, lambda d: None)
    path = copy / "tfidf" / "sa.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["metrics"]["macro_f1"] = 0.99
    path.write_text(json.dumps(data), encoding="utf-8")
    board = load_contamination_board(copy)
    assert "sa" not in {row["task"] for row in board.scores.rows}
    assert any(line.startswith("tfidf/sa.json: left out:") and "macro_f1" in line for line in board.skipped)


def test_a_broken_findings_file_costs_its_own_rows_only(results: Path, tmp_path: Path) -> None:
    """issue 32, item 1: a findings file that breaks a rule is listed with the field, by its place in the results
    folder (no machine's path); the other findings still give their clean scores."""
    copy = _edited_copy(results, tmp_path, lambda d: d["tasks"]["sa"]["items"][0].update(verdict="maybe"))
    board = load_contamination_board(copy)
    assert {row["task"] for row in board.scores.rows} == {"mcq_ur"}
    (line,) = board.skipped
    assert line.startswith("contamination/") and "tasks.sa.items[0].verdict: expected clean" in line
    assert str(tmp_path) not in line


def _shown(components) -> list:
    """The Space's components that are visible, as (kind, value)."""
    return [(type(c).__name__, c.value) for c in components if c.visible]


def test_without_findings_nothing_changes(results: Path, tmp_path: Path) -> None:
    """issue 32, item 1: a results folder without findings: no board rows, no report section, no Space table shown."""
    import gradio as gr

    from nlue.space.contamination_section import build_contamination_board

    copy = tmp_path / "results"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("contamination"))
    board = load_contamination_board(copy)
    assert board.empty and board.scores.rows == [] and board.skipped == []
    report = build_report(copy, ReportOptions(resamples=10))
    assert "contamination" not in {section.key for section in report.sections}
    with gr.Blocks():
        assert _shown(build_contamination_board(board)) == []  # built hidden, for the refresh button to fill
    with gr.Blocks():
        shown = _shown(build_contamination_board(load_contamination_board(results)))
    frames = [value for kind, value in shown if kind == "Dataframe"]
    assert [len(f["data"]) for f in frames] == [3, 3] and "clean items (%)" in frames[1]["headers"]


def test_the_spaces_refresh_button_reads_the_findings_again(results: Path, tmp_path: Path) -> None:
    """issue 32, item 2a: findings that arrive after the page was built show when "Re-read results folder" is
    pressed (the leaderboard event), and disappear when they are gone."""
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings
    from nlue.space.ui import build_demo

    copy = tmp_path / "results"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("contamination"))
    (tmp_path / "models").mkdir()
    settings = SpaceSettings(models=tmp_path / "models", results_dir=copy)
    demo = build_demo(settings, SpaceService(settings))
    (event,) = [fn for fn in demo.fns.values() if fn.api_name == "leaderboard"]
    legend = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "contamination-legend")
    scores = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "contamination-scores")
    assert not legend.visible and not scores.visible
    outputs = [block._id for block in event.outputs]

    def press() -> dict:
        values = event.fn(None, "", False, "as listed", True, False, "paper")
        return dict(zip(outputs, values, strict=True))

    shutil.copytree(results / "contamination", copy / "contamination")
    pressed = press()
    assert pressed[legend._id]["visible"] is True and pressed[scores._id]["visible"] is True
    assert {row[2] for row in pressed[scores._id]["value"].values.tolist()} == {"sa", "stsb", "mcq_ur"}
    table = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "leaderboard-table")
    assert "SA clean (nlue.txt)" in pressed[table._id]["value"].data.columns  # the leaderboard's clean columns too
    rebuilt = build_demo(settings, SpaceService(settings))  # a page built with findings shows the clean columns
    table = next(b for b in rebuilt.blocks.values() if getattr(b, "elem_id", None) == "leaderboard-table")
    assert "STSB clean (nlue.txt)" in table.value["headers"]
    shutil.rmtree(copy / "contamination")
    assert press()[scores._id]["visible"] is False


def test_the_report_shows_the_checked_items_and_clean_scores_with_untrusted_text_escaped(
    results: Path, tmp_path: Path
) -> None:
    """issue 32, item 1: the report's contamination tables (page, Markdown, CSV) hold the board's numbers, marked
    as ours; a corpus name from the findings file is text in every format, never markup or a formula."""
    copy = _edited_copy(results, tmp_path, lambda d: d["corpus"].update(id=HOSTILE))
    out = tmp_path / "report"
    assert main(["report", str(copy), "--out", str(out), "--resamples", "10", "-q"]) == 0
    with (out / "contamination_scores.csv").open(encoding="utf-8", newline="") as handle:
        raw = list(csv.DictReader(handle))
    rows = {r["task"]: {k: csv_cell_read(v) for k, v in r.items()} for r in raw}
    shown = {row["task"]: row for row in load_contamination_board(copy).scores.rows}
    for task in ("sa", "stsb", "mcq_ur"):
        assert rows[task]["numbers"] == "ours"
        for column in ("items", "flagged", "clean", "all items (%)", "clean items (%)", "clean − all (points)"):
            assert float(rows[task][column]) == pytest.approx(float(shown[task][column])), (task, column)
    assert next(r for r in raw if r["task"] == "sa")["corpus"] == "'" + HOSTILE and rows["sa"]["corpus"] == HOSTILE
    page = (out / "index.html").read_text(encoding="utf-8")
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert 'id="contamination"' in page and "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
    assert "<script>" not in markdown and "\\*corpus\\*" in markdown and "\\|" in markdown
    assert (out / "contamination_checked.csv").is_file()


def test_the_leaderboard_has_a_clean_column_only_for_tasks_with_findings(results: Path, tmp_path: Path) -> None:
    """issue 32, item 2c: the NLUE leaderboard shows "<TASK> clean (<corpus>)" beside the task's score, in both
    views, for each NLUE task with findings (sa, stsb; not the exam, not rte): the run's clean score from the
    contamination board, blank for the paper's rows; a corpus name from a file is plain characters in the header;
    without findings the table is as before."""
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    def frame_of(folder: Path, view: str):
        (tmp_path / "models").mkdir(exist_ok=True)
        service = SpaceService(SpaceSettings(models=tmp_path / "models", results_dir=folder))
        return service.leaderboard_table(view=view)[0]

    shown = {row["task"]: row for row in load_contamination_board(results).scores.rows}
    for view in ("primary", "paper"):
        frame = frame_of(results, view)
        clean = [c for c in frame.columns if " clean (" in c]
        assert clean == ["SA clean (nlue.txt)", "STSB clean (nlue.txt)"], clean
        own = [i for i, c in enumerate(frame.columns) if (c == "SA" or c.startswith("SA ")) and c not in clean]
        assert own and list(frame.columns).index("SA clean (nlue.txt)") == max(own) + 1  # beside the task's score
        run = frame[frame["Model"] == "tfidf"].iloc[0]
        assert run["SA clean (nlue.txt)"] == shown["sa"]["clean items (%)"]
        assert run["STSB clean (nlue.txt)"] == shown["stsb"]["clean items (%)"]
        assert frame[frame["Model"] != "tfidf"]["SA clean (nlue.txt)"].isna().all()  # the paper's rows
    copy = _edited_copy(results, tmp_path, lambda d: d["corpus"].update(id=HOSTILE))
    headers = [c for c in frame_of(copy, "primary").columns if " clean (" in c]
    assert len(headers) == 2 and not any(set(h) & set('<>="*|') for h in headers), headers
    bare = tmp_path / "bare"
    shutil.copytree(results, bare, ignore=shutil.ignore_patterns("contamination"))
    assert not [c for c in frame_of(bare, "primary").columns if "clean" in c]
