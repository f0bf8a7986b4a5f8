"""Reading and showing the results of tasks no paper printed (issue 30, item 2): report, compare, submit.

Three tasks nlue does not ship (tests/user_tasks.py: a Nepali 5-topic news task, an Urdu 3-class review
task, a Nepali regression task), each built from CSV files we wrote and run by two real models (the TF-IDF
baseline and a tiny fine-tuned encoder). Each test registers the task files in-process, as
``--task-file`` does, around the command it runs.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import f1_score

from nlue.cli import main
from nlue.predictions import read_predictions
from nlue.registry.tasks import TASKS, registered_task_files
from nlue.text.safe import csv_cell_read
from tests.browser import ARTIFACTS as TEST_ARTIFACTS
from tests.browser import chromium_page
from tests.user_tasks import BASELINE_RUN, FINE_TUNED_RUN, NEPALI_TOPICS, URDU_LABELS, UserRuns

pytest.importorskip("matplotlib")
TASK_NAMES = ("ne_news_topic", "ur_review_sentiment", "ne_headline_relatedness")
ARTIFACTS = TEST_ARTIFACTS / "report"


def _stored(runs: UserRuns, run: str, task: str) -> dict:
    return json.loads((runs.results / run / f"{task}.json").read_text(encoding="utf-8"))


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [{k: csv_cell_read(v) for k, v in row.items()} for row in csv.DictReader(handle)]


@pytest.fixture(scope="module")
def report(user_task_runs: UserRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`nlue report` of the runs, the task files registered for the command."""
    out = tmp_path_factory.mktemp("user-report") / "report"
    with registered_task_files(user_task_runs.task_files.values()):
        assert main(["report", str(user_task_runs.results), "--out", str(out), "--resamples", "200", "-q"]) == 0
    return out


def test_report_gives_each_user_task_its_own_tables_and_figures(user_task_runs: UserRuns, report: Path) -> None:
    """Issue 30, item 2: `nlue report` shows a task no paper printed in a section of its own (every run's metrics
    with intervals, the task file's primary metric marked, kind and data, a bar chart with intervals), never in
    the NLUE paper's tables or the NLUE score; paired tests between its models join the significance section."""
    out = report
    page = (out / "index.html").read_text(encoding="utf-8")
    sections = [s.split('"')[0] for s in page.split('<section id="')[1:]]
    assert sections == ["nlue", "nediom", "mcq", *(f"benchmark_{name}" for name in TASK_NAMES),
                        "models", "significance"]  # fmt: skip
    for name in TASK_NAMES:
        task = TASKS.get(name) or None
        assert task is None  # registered for the command only
        rows = _csv(out / f"declared_{name}.csv")
        assert [row["run"] for row in rows] == sorted(
            [BASELINE_RUN, FINE_TUNED_RUN], key=lambda run: -_stored(user_task_runs, run, name)["primary_score"]
        )
        for row in rows:
            stored = _stored(user_task_runs, row["run"], name)
            primary = stored["primary_metric"]
            shown = row[f"{primary} (primary)"]  # the task file's primary, marked; its interval beside it
            assert float(shown.split(" ")[0]) == pytest.approx(100 * stored["primary_score"], abs=0.005)
            low, high = stored["metrics"][f"{primary}_ci_low"], stored["metrics"][f"{primary}_ci_high"]
            assert shown.endswith(f"[{100 * low:.1f},\u00a0{100 * high:.1f}]")
            assert row["check"] == "✓ recomputed" and row["kind"] in ("baseline", "fine-tune")
            assert row["data"] == str(user_task_runs.builds[name])
        assert (out / f"declared_{name}_chart.png").stat().st_size > 10_000
        assert f"{name}): " in page and "declared in a task file" in page
    regression = _csv(out / "declared_ne_headline_relatedness.csv")[0]
    assert {"pearson_spearman_mean (primary)", "pearson", "spearman", "r2"} <= set(regression)
    assert "macro_f1, the classification kind's default, which the task file keeps (not a paper" in page
    # Never in the NLUE paper's tables or its score: the NLUE section and the models section hold no run of ours.
    for table in ("nlue_table2_single_sentence", "nlue_table3_similarity_paraphrase", "models_by_pretraining"):
        assert {row["numbers"] for row in _csv(out / f"{table}.csv")} == {"paper, as printed"}, table
    assert "No NLUE run in the results folder" in page
    pairs = {row["task"] for row in _csv(out / "significance_pairs.csv")} | {
        name for name in TASK_NAMES if (out / f"significance_{name}_pairs.csv").is_file()
    }
    assert set(TASK_NAMES) <= pairs  # tfidf against the fine-tuned encoder, on each task


def test_the_user_tasks_sections_fit_the_page_in_a_browser(report: Path) -> None:
    """Issue 30, item 2: at 1280 pixels every column of the user tasks' tables is in view (a regression task has
    four metrics, each with its interval), and their charts are drawn; screenshots in test-artifacts/report/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(1280, 900, "the report's browser test") as page:
        page.goto(report.joinpath("index.html").as_uri())
        page.wait_for_load_state("load")
        boxes = page.evaluate(
            """Array.from(document.querySelectorAll('div.scroll'), box => ({
                table: box.querySelector('table').id, fits: box.scrollWidth <= box.clientWidth + 1}))"""
        )
        declared = [box for box in boxes if box["table"].startswith("declared_")]
        assert len(declared) == 3 and all(box["fits"] for box in declared), declared
        for name in TASK_NAMES:
            image = page.locator(f'img[src="declared_{name}_chart.png"]')
            assert image.evaluate("img => img.complete && img.naturalWidth > 600")
            page.locator(f"#benchmark_{name}").screenshot(path=str(ARTIFACTS / f"byot-report-{name}.png"))
        page.locator("#significance").screenshot(path=str(ARTIFACTS / "byot-report-significance.png"))


def _results_naming(runs: UserRuns, folder: Path, datasets: dict[str, Path]) -> Path:
    """A copy of the runs' results folder whose files name ``datasets`` (task -> folder) as their data."""
    shutil.copytree(runs.results, folder)
    for path in folder.glob("*/*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["dataset"] = {**data["dataset"], "id": str(datasets[data["task"]]), "path": str(datasets[data["task"]])}
        path.write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_report_without_the_task_files_names_the_runs_it_cannot_read(user_task_runs: UserRuns, tmp_path: Path) -> None:
    """Issue 30, item 2: without its task file a user task's results are listed as left out, never guessed at;
    issue 30 polish, item 1: so too when the dataset a results file names is gone, or carries a broken task file
    (a warning names it; the report is still written)."""
    broken = tmp_path / "broken-build"
    shutil.copytree(user_task_runs.builds["ne_news_topic"], broken)
    (broken / "tasks" / "ne_news_topic.yaml").write_text("name: ne_news_topic\nkind: novel\n", encoding="utf-8")
    datasets = {name: tmp_path / "moved" / name for name in TASK_NAMES} | {"ne_news_topic": broken}
    results = _results_naming(user_task_runs, tmp_path / "results", datasets)
    out = tmp_path / "report"
    assert main(["report", str(results), "--out", str(out), "--resamples", "50", "-q"]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "benchmark_ne_news_topic" not in page and "unknown NLUE task &#x27;ne_news_topic&#x27;" in page
    assert "benchmark_ur_review_sentiment" not in page and not set(TASK_NAMES) & set(TASKS)


def test_report_and_compare_know_a_task_from_the_dataset_its_results_name(
    user_task_runs: UserRuns, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 30 polish, item 1: after the runs, `nlue report RESULTS` and `nlue compare RUN RUN --tasks TASK` need no
    --task-file: each results file of an unknown task names the dataset it was scored on, and the dataset built
    from the task file carries it (<dataset>/tasks/<task>.yaml), so the readers register it for the command."""
    assert not set(TASK_NAMES) & set(TASKS)
    out = tmp_path / "report"
    with caplog.at_level("INFO", logger="nlue.results_tasks"):
        assert main(["report", str(user_task_runs.results), "--out", str(out), "--resamples", "50"]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert all(f'<section id="benchmark_{name}"' in page for name in TASK_NAMES)
    assert "unknown NLUE task" not in page
    carried = user_task_runs.builds["ur_review_sentiment"].resolve() / "tasks"
    assert f"registered ur_review_sentiment from the task files carried by {carried.parent}" in caplog.text
    assert {row["check"] for row in _csv(out / "declared_ur_review_sentiment.csv")} == {"✓ recomputed"}
    runs = [str(user_task_runs.results / BASELINE_RUN), str(user_task_runs.results / FINE_TUNED_RUN)]
    argv = ["compare", *runs, "--tasks", "ur_review_sentiment", "--resamples", "50", "--json", str(tmp_path / "c.json")]
    assert main([*argv, "-q"]) == 0  # --tasks names the user's task: known before the options are parsed
    (found,) = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert found["task"] == "ur_review_sentiment" and found["metric"] == "macro_f1"
    assert main(["compare", str(user_task_runs.results), "--resamples", "50", "--json", str(tmp_path / "d.json"),
                 "-q"]) == 0  # fmt: skip
    assert {c["task"] for c in json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))} == set(TASK_NAMES)
    assert not set(TASK_NAMES) & set(TASKS)  # for the command only


def test_compare_scores_two_runs_of_a_user_task_by_its_kind(user_task_runs: UserRuns, tmp_path: Path) -> None:
    """Issue 30, item 2: `nlue compare` pairs two runs of each user task on its task file's primary metric (not the
    one a results file claims), recomputed from the predictions by the task's kind: macro-F1 over all 5 (or 3)
    declared labels, the regression's mean of Pearson and Spearman; McNemar where items are right or wrong
    (classification only)."""
    runs = [str(user_task_runs.results / BASELINE_RUN), str(user_task_runs.results / FINE_TUNED_RUN)]
    with registered_task_files(user_task_runs.task_files.values()):
        assert main(["compare", *runs, "--resamples", "300", "--json", str(tmp_path / "c.json"), "-q"]) == 0
    found = {c["task"]: c for c in json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))}
    assert set(found) == set(TASK_NAMES)
    for name, labels in (("ne_news_topic", NEPALI_TOPICS), ("ur_review_sentiment", URDU_LABELS)):
        comparison = found[name]
        assert comparison["metric"] == "macro_f1" and comparison["mcnemar_p"] is not None
        for side, run in (("score_a", BASELINE_RUN), ("score_b", FINE_TUNED_RUN)):
            rows = read_predictions(user_task_runs.results / run / f"{name}.predictions.jsonl")
            expected = f1_score([r["gold"] for r in rows], [r["prediction"] for r in rows], average="macro",
                                labels=list(range(len(labels))), zero_division=0)  # fmt: skip
            assert comparison[side] == pytest.approx(expected, abs=1e-12), (name, side)
    regression = found["ne_headline_relatedness"]
    assert regression["metric"] == "pearson_spearman_mean" and regression["mcnemar_p"] is None
    rows = read_predictions(user_task_runs.results / FINE_TUNED_RUN / "ne_headline_relatedness.predictions.jsonl")
    golds, predictions = [r["gold"] for r in rows], [r["prediction"] for r in rows]
    expected = (pearsonr(golds, predictions)[0] + spearmanr(golds, predictions)[0]) / 2
    assert regression["score_b"] == pytest.approx(expected, abs=1e-9)
    assert all(c["ci_low"] <= c["difference"] <= c["ci_high"] and c["p_holm"] >= c["p_value"] for c in found.values())
    # A results file that claims another primary metric is compared on the task file's all the same.
    claiming = tmp_path / "claims-accuracy"
    shutil.copytree(user_task_runs.results / FINE_TUNED_RUN, claiming)
    data = json.loads((claiming / "ne_news_topic.json").read_text(encoding="utf-8"))
    (claiming / "ne_news_topic.json").write_text(json.dumps({**data, "primary_metric": "accuracy"}), encoding="utf-8")
    with registered_task_files(user_task_runs.task_files.values()):
        assert main(["compare", str(claiming), runs[0], "--tasks", "ne_news_topic", "--resamples", "100",
                     "--json", str(tmp_path / "d.json"), "-q"]) == 0  # fmt: skip
    (again,) = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert again["metric"] == "macro_f1" and again["score_a"] == found["ne_news_topic"]["score_b"]


def test_submit_checks_a_user_tasks_run_against_the_build_that_carries_it(
    user_task_runs: UserRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Issue 30, item 2: `nlue submit --dry-run` recomputes a user task's scores from its predictions against the
    gold answers of the release holding the task (its own build; several releases for a run of several tasks),
    and refuses a stored score its predictions do not give."""
    run = user_task_runs.results / FINE_TUNED_RUN
    releases = [str(user_task_runs.builds[name]) for name in TASK_NAMES]
    with registered_task_files(user_task_runs.task_files.values()):
        assert main(["submit", str(run), "--repo-id", "me/results", "--release", *releases, "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert f"{run}: 3 results checked" in out and "dry run: nothing was sent" in out
        for name in TASK_NAMES:
            stored = _stored(user_task_runs, FINE_TUNED_RUN, name)
            assert f"runs/{FINE_TUNED_RUN}/{name}.predictions.jsonl" in out
            score = f"{stored['primary_score']:.4f}".replace("-", "\\-")  # the PR's Markdown escapes a minus
            assert f"| {score} |" in out  # the score recomputed against the release's gold
        assert "Releases checked against:" in out
        tampered = tmp_path / FINE_TUNED_RUN
        shutil.copytree(run, tampered)
        data = json.loads((tampered / "ne_news_topic.json").read_text(encoding="utf-8"))
        data["metrics"]["macro_f1"] = min(1.0, data["metrics"]["macro_f1"] + 0.25)
        (tampered / "ne_news_topic.json").write_text(json.dumps(data), encoding="utf-8")
        assert main(["submit", str(tampered), "--repo-id", "me/results", "--release", *releases, "--dry-run"]) == 2
        err = capsys.readouterr().err
        assert "macro_f1: stored" in err and "(predictions scored against the release's gold answers)" in err
        assert main(["submit", str(run), "--repo-id", "me/results", "--release", releases[0], "--dry-run"]) == 2
        err = capsys.readouterr().err  # each task needs a release holding it; every problem is reported at once
        assert "cannot load ur_review_sentiment" in err and "cannot load ne_headline_relatedness" in err


@pytest.mark.parametrize("command", ["report", "compare", "submit"])
def test_the_readers_take_task_files_on_their_command_line(
    command: str, user_task_runs: UserRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Issue 30, item 2 (leftover 6): `nlue report`, `compare` and `submit` list --task-file in --help and take it
    as every command does (registered before the parser is built: `compare --tasks` checks a user task's name
    against it), with no in-process registration around them."""
    assert main([command, "--help"]) == 0
    assert "--task-file FILE" in capsys.readouterr().out
    files = [arg for path in user_task_runs.task_files.values() for arg in ("--task-file", str(path))]
    runs = [str(user_task_runs.results / BASELINE_RUN), str(user_task_runs.results / FINE_TUNED_RUN)]
    if command == "report":
        out = tmp_path / "report"
        argv = ["report", str(user_task_runs.results), "--out", str(out), "--resamples", "50", *files, "-q"]
        assert main(argv) == 0
        page = (out / "index.html").read_text(encoding="utf-8")
        assert all(f'<section id="benchmark_{name}"' in page for name in TASK_NAMES)
    elif command == "compare":
        argv = ["compare", *runs, "--tasks", "ur_review_sentiment", "--resamples", "50", "--json",
                str(tmp_path / "c.json"), *files, "-q"]  # fmt: skip
        assert main(argv) == 0
        (found,) = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
        assert found["task"] == "ur_review_sentiment" and found["metric"] == "macro_f1"
    else:
        release = str(user_task_runs.builds["ne_news_topic"])
        bare = tmp_path / "release"  # a release that does not carry its task file: the command line names it
        shutil.copytree(release, bare)
        shutil.rmtree(bare / "tasks")
        run = tmp_path / FINE_TUNED_RUN
        run.mkdir()
        for suffix in (".json", ".predictions.jsonl"):
            shutil.copy(user_task_runs.results / FINE_TUNED_RUN / f"ne_news_topic{suffix}", run)
        own = ["--task-file", str(user_task_runs.task_files["ne_news_topic"])]
        argv = ["submit", str(run), "--repo-id", "me/results", "--release", str(bare), "--dry-run", *own]
        assert main(argv) == 0, capsys.readouterr().err
        assert f"{run}: 1 results checked" in capsys.readouterr().out
        # Several releases (NLUE's and each task's own build): every one's carried files, not the first's alone.
        shutil.copy(user_task_runs.results / FINE_TUNED_RUN / "ur_review_sentiment.json", run)
        shutil.copy(user_task_runs.results / FINE_TUNED_RUN / "ur_review_sentiment.predictions.jsonl", run)
        releases = [release, str(user_task_runs.builds["ur_review_sentiment"])]
        assert main(["submit", str(run), "--repo-id", "me/results", "--release", *releases, "--dry-run"]) == 0
        assert f"{run}: 2 results checked" in capsys.readouterr().out
    assert not set(TASK_NAMES) & set(TASKS)


def test_the_space_knows_a_task_from_the_dataset_its_results_name(user_task_runs: UserRuns) -> None:
    """Issue 30 polish, item 1: the Space started on the results alone (no --task-file, no --dataset of the user
    tasks) registers the task files carried by the datasets those results were scored on, for as long as it runs."""
    from nlue.space.serve import space_task_files
    from nlue.space.settings import SpaceSettings

    settings = SpaceSettings(models=user_task_runs.models, results_dir=user_task_runs.results, dataset=None)
    with space_task_files(settings) as tasks:
        assert {task.name for task in tasks} == set(TASK_NAMES) and set(TASK_NAMES) <= set(TASKS)
    assert not set(TASK_NAMES) & set(TASKS)
