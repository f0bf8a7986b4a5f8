"""Scores that cannot be silently wrong: `nlue submit` and the leaderboards recompute them (issue 29, items 7-10, 26).

One real run (the TF-IDF baseline on a built release that is not the sample) is copied and edited
the way a hand, a bug or an attacker would edit it; every test checks what `nlue submit` and the
Space's tables make of the copy.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.results import RunResult, write_result

TASKS = ("sa", "rte", "stsb")


@pytest.fixture(scope="module")
def release_run(sample_build, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(release, run folder): a real baseline run of sa, rte and stsb on a release built from the sample."""
    root = tmp_path_factory.mktemp("verified")
    release = root / "release"
    shutil.copytree(sample_build.repo_dir, release)
    card = release / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("sample-data", "release"), encoding="utf-8")
    assert main(["baseline", "--tasks", ",".join(TASKS), "--dataset", str(release), "--bootstrap", "0",
                 "--results-dir", str(root / "results"), "--name", "tfidf", "-q"]) == 0  # fmt: skip
    return release, root / "results" / "tfidf"


@pytest.fixture
def run(release_run: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the run, to edit."""
    copy = tmp_path / "results" / "tfidf"
    shutil.copytree(release_run[1], copy)
    return copy


def _edit(path: Path, **changes) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if key == "metrics":
            data["metrics"].update(value)
        else:
            data[key] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    return data


def _submit(run: Path, release: Path, capsys, *more: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["submit", str(run), "--repo-id", "org/r", "--release", str(release), "--dry-run", *more])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- nlue submit ---------------------------------------------------------------------------


def test_submit_recomputes_every_score_from_the_predictions_and_refuses_an_edited_one(
    release_run, run: Path, capsys
) -> None:
    """issue 29, item 7: a results file whose scores were edited (0.99 where its predictions give 0.697) is refused."""
    release = release_run[0]
    code, out, _ = _submit(run, release, capsys)
    assert code == 0 and "score (recomputed)" in out
    true_f1 = json.loads((run / "sa.json").read_text(encoding="utf-8"))["metrics"]["macro_f1"]
    _edit(run / "sa.json", metrics={"macro_f1": 0.99}, primary_score=0.99)
    _edit(run / "stsb.json", metrics={"pearson": 0.9})
    code, _, err = _submit(run, release, capsys)
    assert code == 2 and "nothing was sent" in err
    assert f"sa.json: macro_f1: stored 0.99, its predictions give {true_f1:.6g}" in err
    assert "(predictions scored against the release's gold answers)" in err
    assert "stsb.json: pearson: stored 0.9, its predictions give" in err  # every metric, not just the primary


def test_submit_refuses_a_results_file_without_predictions_as_unverifiable(release_run, run: Path, capsys) -> None:
    """issue 29, item 7: a score that cannot be recomputed is not submitted."""
    _edit(run / "rte.json", predictions=None)
    code, _, err = _submit(run, release_run[0], capsys)
    assert code == 2 and "rte.json: no per-item predictions" in err and "cannot be recomputed" in err


@pytest.mark.parametrize(("metric", "value", "shown"), [("accuracy", 42, "accuracy = 42 is outside its range [0, 1]"),
                                                       ("macro_f1", -5, "macro_f1 = -5 is outside its range [0, 1]"),
                                                       ("macro_f1", 1e308, "macro_f1 = 1e+308 is outside")])  # fmt: skip
def test_submit_refuses_scores_outside_their_metrics_range(
    release_run, run: Path, capsys, metric: str, value: float, shown: str
) -> None:
    """issue 29, item 8: scores of 42, -5 and 1e308 are refused, each naming its range."""
    _edit(run / "sa.json", metrics={metric: value})
    code, _, err = _submit(run, release_run[0], capsys)
    assert code == 2 and f"sa.json: {shown}" in err


def test_metric_ranges_follow_what_each_metric_can_be() -> None:
    """issue 29, item 8: shares in [0, 1], correlations in [-1, 1], R² at most 1, every value finite."""
    from nlue.scoring.ranges import range_problem

    for name, good, bad in [("accuracy_all_items_ci_low", 0.0, 1.01), ("spearman", -1.0, -1.2), ("r2", -40.0, 1.5),
                            ("combined", 0.5, 2.0), ("macro_f1_sd", 0.2, -0.1), ("invalid_count_empty", 3.0, -1.0)]:  # fmt: skip
        assert range_problem(name, good) is None and range_problem(name, bad)
    assert "not a finite number" in range_problem("r2", -math.inf)
    assert "not a number" in range_problem("accuracy", "high") and "not a number" in range_problem("accuracy", True)


@pytest.mark.parametrize("where", ["absolute", "parent", "symlink"])
def test_submit_uploads_only_predictions_inside_the_run_folder(release_run, run: Path, tmp_path, capsys, where) -> None:
    """issue 29, item 10: an absolute path, `../` or a symlink leading out of the run folder is refused."""
    outside = tmp_path / "elsewhere" / "rte.predictions.jsonl"
    outside.parent.mkdir()
    shutil.copy(run / "rte.predictions.jsonl", outside)
    if where == "absolute":
        name, said = str(outside), "is an absolute path"
    elif where == "parent":
        name, said = "../../elsewhere/rte.predictions.jsonl", "leads out of the run folder with '..'"
    else:
        (run / "rte.predictions.jsonl").unlink()
        (run / "rte.predictions.jsonl").symlink_to(outside)
        name, said = "rte.predictions.jsonl", "is a symlink to"
    _edit(run / "rte.json", predictions=name)
    code, _, err = _submit(run, release_run[0], capsys)
    assert code == 2 and "rte.json: its `predictions`" in err and said in err


def test_the_dry_run_shows_where_each_file_comes_from_and_goes(release_run, run: Path, capsys) -> None:
    """issue 29, item 10: the dry run prints each file's local path beside its path in the results repo."""
    (run / "rows").mkdir()
    (run / "sa.predictions.jsonl").rename(run / "rows" / "sa.predictions.jsonl")
    _edit(run / "sa.json", predictions="rows/sa.predictions.jsonl")  # inside the run folder: accepted
    code, out, _ = _submit(run, release_run[0], capsys)
    assert code == 0
    assert f"runs/tfidf/rows/sa.predictions.jsonl  <- {(run / 'rows' / 'sa.predictions.jsonl').resolve()}" in out
    assert f"runs/tfidf/rte.json  <- {(run / 'rte.json').resolve()}" in out


def _probes_file(results: Path, run: Path, task: str) -> Path:
    """A memorisation file of the run's model and items, as `nlue memorisation` lays one out (its numbers made up
    per item; the summaries the reader recomputes from them)."""
    from nlue.evals.memorisation.probes_file import probes_document, write_probes
    from nlue.evals.memorisation.summary import task_summary
    from nlue.predictions import read_predictions

    items = []
    for n, row in enumerate(read_predictions(run / f"{task}.predictions.jsonl")):
        scores = {m: -1.0 - n % 3 for m in ("minkpp", "mink", "loglik")}
        items.append({"id": row["id"], "input_sha256": row["input_sha256"], "tokens": 9, "control_tokens": 9,
                      "control_from": [f"sample:{task}/validation/{n % 4}"], **scores,
                      **{f"{m}_control": v - 0.5 * (n % 2) for m, v in scores.items()}})  # fmt: skip
    model = json.loads((run / f"{task}.json").read_text(encoding="utf-8"))["model"]
    document = probes_document({"name": model}, {"id": "release", "split": "test", "is_sample": False}, {},
                               {task: {"summary": task_summary(items, resamples=0), "items": items}})  # fmt: skip
    return write_probes(results / "memorisation" / "tfidf" / "release.json", document)


def test_submit_carries_the_runs_findings_and_probes_each_checked_first(
    release_run, run: Path, tmp_path: Path, capsys
) -> None:
    """issue 32, item 2b: the run's contamination findings and memorisation files go up beside it, at their place
    in the results folder (where a Space reading the repo finds them: its clean scores show); a refused file, or
    findings of other items, stops the submission with the reason before anything is sent; --without-findings
    leaves them out."""
    from nlue.boards.contamination import load_contamination_board
    from nlue.boards.memorisation import load_memorisation_board
    from nlue.data.access import load_task
    from nlue.evals.submit.submission import check_run
    from nlue.registry.tasks import get_task

    release, results = release_run[0], run.parent
    rows = [json.loads(line) for line in (run / "sa.predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus = tmp_path / "corpus.txt"
    texts = [row["text"] for row in load_task(str(release), get_task("sa"))["test"]][:2]
    corpus.write_text("".join(f"उद्धृत: {t}\n" for t in texts) + "अरू पाठ\n", encoding="utf-8")
    assert main(["contamination", "--dataset", str(release), "--tasks", "sa", "--corpus", str(corpus),
                 "--results-dir", str(results), "-q"]) == 0  # fmt: skip
    (findings,) = (results / "contamination").rglob("*.json")
    probes = _probes_file(results, run, "rte")
    code, out, err = _submit(run, release, capsys)
    assert code == 0, err
    for path in (findings, probes):
        assert f"{path.relative_to(results).as_posix()}  <- {path.resolve()}" in out
    assert "Also carried" in out and len(rows) == 10

    mirror = tmp_path / "mirror"  # the results repo after the pull request, as the Space mirrors it
    for repo_path, local, _ in check_run(run, str(release)).files:
        (mirror / repo_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(local, mirror / repo_path)
    board = load_contamination_board(mirror)
    assert [(r["run"], r["task"], r["flagged"]) for r in board.scores.rows] == [("runs/tfidf", "sa", 2)]
    assert [row["task"] for row in load_memorisation_board(mirror).table.rows] == ["rte"]

    code, out, _ = _submit(run, release, capsys, "--without-findings")
    assert code == 0 and "contamination/" not in out and "memorisation/" not in out

    data = json.loads(findings.read_text(encoding="utf-8"))
    data["tasks"]["sa"]["items"][3]["input_sha256"] = "0" * 64  # checked with other text: another build
    findings.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = _submit(run, release, capsys)
    assert code == 2 and "nothing was sent" in err and "checked sa, but not the items the run scored" in err
    data["tasks"]["sa"]["items"][3]["verdict"] = "maybe"
    findings.write_text(json.dumps(data), encoding="utf-8")
    probes.write_text(probes.read_text(encoding="utf-8").replace('"items": 10', '"items": 11'), encoding="utf-8")
    code, out, err = _submit(run, release, capsys)
    assert code == 2 and "tasks.sa.items[3].verdict: expected clean" in err
    assert "tasks.rte.summary.items: expected 10 as its items give" in err and "runs/tfidf" not in out


def test_submit_without_a_release_says_what_a_release_is_and_how_to_make_one(run: Path, capsys) -> None:
    """issue 29, item 26: no argparse usage error, but what a release is and the commands that make one."""
    assert main(["submit", str(run), "--repo-id", "org/r", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "needs --release" in err and "the release is the published dataset" in err
    assert "nlue build --source" in err and "nlue push build/nlue --repo-id" in err and "usage:" not in err


# --- the leaderboards ----------------------------------------------------------------------


def test_the_board_leaves_out_edited_and_out_of_range_scores_and_ranks_unverified_ones_apart(
    release_run, run: Path
) -> None:
    """issue 29, items 7 and 8: edited or impossible scores never reach the table; unverified rows rank last."""
    from nlue.boards.leaderboard import leaderboard_frame, load_leaderboard, sort_rows

    results = run.parent
    edited = results / "edited"
    shutil.copytree(run, edited)
    _edit(edited / "sa.json", metrics={"macro_f1": 0.99})
    _edit(edited / "rte.json", metrics={"accuracy": 42})
    _edit(edited / "stsb.json", metrics={"r2": 1e308})
    write_result(RunResult(task="sa", model="by-hand", kind="fine-tune", metrics={"accuracy": 1.0, "macro_f1": 1.0}),
                 results)  # fmt: skip
    write_result(RunResult(task="rte", model="impossible", kind="fine-tune", metrics={"accuracy": -5, "macro_f1": 0.5}),
                 results)  # fmt: skip
    board = load_leaderboard(results)
    rows = {row.model: row for row in board.rows}
    assert rows["tfidf"].check == "✓ recomputed" and set(rows["tfidf"].task_scores) == set(TASKS)
    assert rows["edited"].task_scores == {} and rows["edited"].check == "⚠ left out: SA, STSB, RTE"
    assert rows["by-hand"].check == "unverified: SA" and rows["by-hand"].task_scores == {"sa": 1.0}
    assert rows["impossible"].task_scores == {}
    skipped = " | ".join(board.skipped)
    assert "edited/sa.json: left out: macro_f1: stored 0.99, its predictions give" in skipped
    assert "rte.json: left out: accuracy = 42 is outside its range [0, 1]" in skipped
    assert "r2 = 1e+308 is outside its range [-∞, 1]" in skipped and "accuracy = -5 is outside" in skipped
    frame = leaderboard_frame(board.rows).set_index("Model")
    assert frame.loc["edited"].isna()[["SA", "RTE", "STSB"]].all()  # no 4200.0, -500.0 or inf anywhere
    assert frame.drop(columns=["Params (M)"]).select_dtypes("number").abs().max().max() <= 100
    ranked = [row.model for row in sort_rows(board.rows, "SA")]
    assert ranked.index("by-hand") > max(ranked.index(m) for m in ("tfidf", "XLM-R Base", "m-DeBERTa-v3"))


def test_the_exam_and_idiom_tables_leave_out_scores_their_predictions_do_not_give(tmp_path: Path) -> None:
    """issue 29, items 7 and 8: the other two tables check every file the same way."""
    from nlue.boards.exams import load_exam_board
    from nlue.boards.nediom import load_nediom_board

    metrics = {"accuracy_all_items": 42.0, "accuracy_parseable": 0.5, "invalid_rate": 0.0}
    write_result(RunResult(task="mcq_ne", model="m", kind="zero-shot", metrics=metrics), tmp_path, "exam-run")
    fine = {**metrics, "accuracy_all_items": 0.5}
    write_result(RunResult(task="mcq_ne", model="m", kind="zero-shot", metrics=fine), tmp_path, "exam-by-hand")
    for number, score in ((1, -0.5), (2, 0.4)):
        details = {"setting": "zero-shot", "variant": {"number": number}, "floors": {"idiomatic": 7.5}}
        nediom = RunResult(task="nediom", model="m", kind="zero-shot", metrics={"macro_f1": score}, details=details)
        write_result(nediom, tmp_path, f"idioms__zero-shot__v{number}")
    exams = load_exam_board(tmp_path)
    (ours,) = [row for row in exams.rows if not row["kind"].startswith("paper")]
    assert ours["model"] == "exam-by-hand" and ours["check"] == "unverified" and ours["All (all items)"] == 50.0
    assert "accuracy_all_items = 42 is outside its range [0, 1]" in " ".join(exams.skipped)
    idioms = load_nediom_board(tmp_path)
    assert [row["check"] for row in idioms.rows if row["model"] == "idioms"] == ["⚠ left out: v1 · unverified: v2"]
    assert "macro_f1 = -0.5 is outside" in " ".join(idioms.skipped) and "floor 'idiomatic'" in " ".join(idioms.skipped)
    assert list(exams.columns[:3]) == list(idioms.columns[:3]) == ["model", "data", "check"]


def test_rescoring_uses_each_protocols_own_scoring_code() -> None:
    """issue 29, item 7: generation (invalid answers wrong), seeds (their mean), judged GMET (the judges' verdicts)."""
    from nlue.evals.llm.label_generation import generation_problem
    from nlue.evals.verify import compare_with_predictions, recompute_metrics
    from nlue.registry.tasks import get_task
    from nlue.scores import score_task

    sa = get_task("sa")
    rows = [{"id": i, "input_sha256": "x", "prediction": p, "gold": g}
            for i, (p, g) in enumerate([(0, 0), (None, 1), (1, 1), (None, 0), (1, 0)])]  # fmt: skip
    generated = recompute_metrics(sa, rows, {"hyperparameters": {"mode": "generate"}})
    direct = generation_problem([0, None, 1, None, 1], [0, 1, 1, 0, 0], 2).point_estimates()
    assert generated == direct and generated["invalid_rate"] == pytest.approx(0.4)
    seeds = [{**row, "prediction": [row["gold"], 1 - row["gold"]]} for row in rows]
    assert recompute_metrics(sa, seeds, {})["accuracy"] == pytest.approx(0.5)  # one seed right, one wrong
    gmet = get_task("gmet")
    judged = [{"id": i, "input_sha256": "x", "prediction": "शब्द", "verdict": v, "category": c, "gold": ["अर्को"]}
              for i, (v, c) in enumerate([(1, "1"), (0, "1"), (1, "2"), (1, "2")])]  # fmt: skip
    people = recompute_metrics(gmet, judged, {"verdicts": "human"})
    expected = score_task("gmet", ["शब्द"] * 4, [1, 0, 1, 1], categories=["1", "1", "2", "2"])
    assert people["combined"] == pytest.approx(expected["combined"]) and people["accuracy"] == 0.75
    stored = {"task": "gmet", "verdicts": "human", "metrics": {k: expected[k] for k in people}}
    assert compare_with_predictions(gmet, judged, stored).verified
    automatic = recompute_metrics(gmet, judged, {"verdicts": "automatic"})
    assert automatic["accuracy"] == 0.0  # the listed answer, not the judges: another number


# --- reading with limits -------------------------------------------------------------------


def _hostile_files(results: Path) -> None:
    """A file nested 5,000 deep, one past the size limit, one with a predictions line nested 5,000 deep."""
    from nlue.results_files import RESULTS_MAX_BYTES

    (results / "deep").mkdir()
    (results / "deep" / "sa.json").write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    (results / "huge").mkdir()
    (results / "huge" / "sa.json").write_text("{" + " " * RESULTS_MAX_BYTES + "}", encoding="utf-8")
    deep_rows = results / "deep-rows"
    shutil.copytree(results / "tfidf", deep_rows)
    with (deep_rows / "rte.predictions.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": ' + "[" * 5000 + "]" * 5000 + "}\n")


def test_one_bad_results_file_costs_one_row_with_its_reason_never_the_board(
    release_run, run: Path, tmp_path: Path, capsys
) -> None:
    """issue 29, item 9: nesting 5,000 deep or a file past the size limit is one skipped row, in every reader."""
    from nlue.boards.exams import load_exam_board
    from nlue.boards.nediom import load_nediom_board
    from nlue.evals.report.runs import gather
    from nlue.results_folders import resolve_folders
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    results = run.parent
    _hostile_files(results)
    service = SpaceService(SpaceSettings(models=tmp_path / "no-models", results_dir=results))  # the Space starts
    rows = {row.model: row for row in service.board.rows}
    assert rows["tfidf"].check == "✓ recomputed" and set(rows["tfidf"].task_scores) == set(TASKS)
    assert set(rows["deep-rows"].task_scores) == {"sa", "stsb"}  # the one bad predictions file costs RTE only
    skipped = " | ".join(service.board.skipped)
    assert "deep/sa.json: nested 5000 levels deep; at most 32 are read" in skipped
    assert "huge/sa.json: the results file is larger than 8 MiB" in skipped
    assert "deep-rows/rte.json: left out" in skipped and "line 11: nested 5001 levels deep" in skipped
    _, status = service.leaderboard_table()
    assert "3 results file(s) skipped" in status
    load_exam_board(results), load_nediom_board(results)
    assert {f.path.parent.name for f in gather(resolve_folders([results])).files} == {
        "tfidf",
        "deep-rows",
    }  # what `nlue report` reads
    capsys.readouterr()
    assert main(["compare", str(results / "deep-rows"), str(run), "-q"]) == 2
    assert "rte.predictions.jsonl, line 11: nested 5001 levels deep" in capsys.readouterr().err
    shutil.copy(results / "deep" / "sa.json", run / "deep.json")
    code, _, err = _submit(run, release_run[0], capsys)
    assert code == 2 and "deep.json: nested 5000 levels deep" in err


def test_a_fifo_or_an_oversized_line_is_refused_without_reading_on(tmp_path: Path) -> None:
    """issue 29, item 9: the predictions reader streams under limits and never blocks on a FIFO."""
    from nlue.predictions import read_predictions
    from nlue.results_files import BadResultsFile, iter_json_lines, read_json_object

    fifo = tmp_path / "rows.predictions.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(BadResultsFile, match="not a regular file"):
        read_predictions(fifo)
    with pytest.raises(BadResultsFile, match="not a regular file"):
        read_json_object(fifo)
    long = tmp_path / "long.jsonl"
    long.write_text('{"id": "' + "x" * 200 + '"}\n', encoding="utf-8")
    with pytest.raises(BadResultsFile, match="line 1: longer than"):
        list(iter_json_lines(long, line_bytes=100))
    with pytest.raises(BadResultsFile, match="larger than"):
        list(iter_json_lines(long, max_bytes=100, line_bytes=1000))
