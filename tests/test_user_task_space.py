"""The Space with tasks no paper printed (issue 30, item 2): Try a model, Browse data and a board of their own.

The three tasks of tests/user_tasks.py, built from our CSV files and run by the TF-IDF baseline and a tiny
fine-tuned encoder, are registered in-process around each test (as ``nlue space --task-file`` does for the
Space's life). The browser test drives the page in headless Chromium; its screenshots go to
test-artifacts/space/ (gitignored).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlue.registry.task_file.activate import ENV_VARIABLE as TASK_FILES_VARIABLE
from nlue.registry.task_file.activate import activated_task_files
from nlue.registry.tasks import TASKS, registered_task_files
from tests.user_tasks import BASELINE_RUN, FINE_TUNED_RUN, NEPALI_TOPICS, URDU_LABELS, UserRuns

pytest.importorskip("gradio", reason="the Space needs gradio")
pytest.importorskip("transformers")

from nlue.space.service import SpaceService
from nlue.space.settings import SpaceSettings
from tests.browser import ARTIFACTS as TEST_ARTIFACTS
from tests.browser import BROWSER_ARGS, CHROMIUM, playwright_api

ARTIFACTS = TEST_ARTIFACTS / "space"
URDU_REVIEW = "کھانا بہت مزیدار تھا۔"


def _settings(runs: UserRuns) -> SpaceSettings:
    """The embedded sample first, then the user tasks' own builds: each config from the first that has it."""
    builds = tuple(str(repo) for repo in runs.builds.values())
    return SpaceSettings(models=runs.models, results_dir=runs.results, dataset=None, more_datasets=builds)


@pytest.fixture
def service(user_task_runs: UserRuns) -> Iterator[SpaceService]:
    with registered_task_files(user_task_runs.task_files.values()):
        yield SpaceService(_settings(user_task_runs))


def test_try_a_model_fine_tuned_on_a_user_task(service: SpaceService) -> None:
    """Issue 30, item 2: the classifier fine-tuned on the Urdu task is offered for it and answers with the task
    file's label names; the form shows the task's language and turns its boxes right to left."""
    form = service.task_form("ur_review_sentiment")
    assert form.models == ("models/ur_review_sentiment",)
    assert [(f.label, f.rtl) for f in form.fields if f.visible] == [("Review", True)]
    assert "Language: ur (right to left)" in form.summary and "From a task file (no paper)" in form.summary
    output, details = service.predict("ur_review_sentiment", form.models[0], URDU_REVIEW)
    assert set(output) == set(URDU_LABELS) and sum(output.values()) == pytest.approx(1.0)
    assert "ur_review_sentiment" in details
    news = service.task_form("ne_news_topic")
    assert not any(f.rtl for f in news.fields) and "Language: ne." in news.summary
    output, _ = service.predict("ne_news_topic", news.models[0], "नेपाली टोलीले फाइनल खेल जित्यो।")
    assert set(output) == set(NEPALI_TOPICS)
    assert not any(f.rtl for f in service.task_form("sa").fields)  # the shipped Nepali tasks as before


def test_browse_a_user_tasks_built_config_beside_the_sample(service: SpaceService) -> None:
    """Issue 30, item 2: the user task's build is browsable with its own fields and label names, beside the
    embedded sample's shipped configs; the sample is not asked for a task it does not have, nor is a source
    whose configs cannot be listed."""
    configs = service.data.configs()
    assert configs[-3:] == ("ne_news_topic", "ur_review_sentiment", "ne_headline_relatedness") and "sa" in configs
    frame, page, status = service.data_page("ur_review_sentiment", "test", 1, 10)
    assert list(frame.columns) == ["row", "review", "sentiment"] and page == 1
    assert set(frame["sentiment"]) == set(URDU_LABELS) and "language: ur (right to left)" in status
    pairs, _, _ = service.data_page("ne_headline_relatedness", "train", 1, 5)
    assert list(pairs.columns) == ["row", "first", "second", "score"]
    sample, _, status = service.data_page("sa", "test", 1, 3)
    assert len(sample) == 3 and "language: ne" in status
    # A source that cannot be listed (a Hub id, offline) never takes a config a listed source has.
    from nlue.space.data import DataBrowser

    build = str(service.settings.more_datasets[1])
    browser = DataBrowser(["some-org/unreachable", build])
    assert browser.source_of("ur_review_sentiment") == build and browser.source_of("sa") == "some-org/unreachable"


def test_a_user_task_has_its_own_board_and_never_the_nlue_score(service: SpaceService) -> None:
    """Issue 30, item 2: each user task's runs are on a board of its own (its primary metric, intervals, check),
    and neither in the NLUE leaderboard's rows nor its NLUE score."""
    from nlue.boards.tasks import declared_boards

    boards = declared_boards(service.settings.results_folders)
    assert [b.task.name for b in boards.tasks] == ["ne_news_topic", "ur_review_sentiment", "ne_headline_relatedness"]
    urdu = boards.of("ur_review_sentiment")
    assert [row["run"] for row in urdu.board.rows] == sorted(
        [BASELINE_RUN, FINE_TUNED_RUN], key=lambda run: -next(s.score for s in urdu.scores if s.run == run)
    )
    assert "macro_f1 (primary)" in urdu.board.columns and "macro_f1 95% CI" in urdu.board.columns
    assert {row["check"] for row in urdu.board.rows} == {"✓ recomputed"} and not boards.skipped
    assert "language: ur (right to left)" in urdu.legend() and "no paper printed it" in urdu.legend()
    regression = boards.of("ne_headline_relatedness").board
    assert regression.columns[5] == "pearson_spearman_mean (primary)"
    assert [r for r in service.board.rows if r.source != "paper"] == []  # nothing of theirs on the NLUE board
    frame, status = service.leaderboard_table()
    assert not any("topic" in column or "sentiment" in column for column in frame.columns)
    assert "skipped" not in status


def test_the_space_registers_task_files_from_its_option_and_the_environment(
    user_task_runs: UserRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30, item 2: `nlue space --task-file FILE` and NLUE_TASK_FILES (os.pathsep-separated) register the
    tasks for the Space's life, through one function."""
    files = user_task_runs.task_files
    monkeypatch.setenv(TASK_FILES_VARIABLE, os.pathsep.join(str(files[n]) for n in ("ur_review_sentiment",)))
    with activated_task_files([files["ne_news_topic"]]) as tasks:
        assert [t.name for t in tasks] == ["ne_news_topic", "ur_review_sentiment"]
        assert "ur_review_sentiment" in TASKS
    assert "ur_review_sentiment" not in TASKS
    from nlue.space import serve

    launched = {}
    monkeypatch.setattr(serve, "launch", lambda settings, **kwargs: launched.update(tasks=list(TASKS)))
    monkeypatch.delenv(TASK_FILES_VARIABLE)
    parser = __import__("argparse").ArgumentParser()
    serve.add_space_arguments(parser)
    args = parser.parse_args(["--task-file", str(files["ne_headline_relatedness"]), "--results-dir", "nowhere"])
    assert serve.run_space_command(args) == 0 and "ne_headline_relatedness" in launched["tasks"]
    assert "ne_headline_relatedness" not in TASKS


def test_a_space_on_builds_of_task_files_knows_their_tasks_without_the_files(
    user_task_runs: UserRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30, item 2 (leftover 5): a Space started on datasets built from task files, no --task-file given
    (`nlue space --dataset sample BUILD ...`, and app.py with NLUE_SPACE_DATASET), registers the task files the
    builds carry, through the one function every command uses: each user task has its board and its data pages."""
    import runpy

    from nlue.boards.tasks import declared_boards
    from nlue.cli import main
    from nlue.space import serve

    builds = [str(user_task_runs.builds[name]) for name in sorted(user_task_runs.builds)]
    seen: dict[str, object] = {}

    def look(settings: SpaceSettings, **_: object) -> None:  # what the page would show, without serving it
        seen["boards"] = [b.task.name for b in declared_boards(settings.results_folders).tasks]
        frame, _, status = SpaceService(settings).data_page("ur_review_sentiment", "test", 1, 10)
        seen["data"] = (list(frame.columns), set(frame["sentiment"]), status)

    monkeypatch.setattr(serve, "launch", look)
    argv = ["space", "--dataset", "sample", *builds, "--results-dir", str(user_task_runs.results), "--models",
            str(user_task_runs.models)]  # fmt: skip
    assert main(argv) == 0
    assert sorted(seen["boards"]) == sorted(user_task_runs.builds)
    columns, labels, status = seen["data"]
    assert columns == ["row", "review", "sentiment"] and labels == set(URDU_LABELS) and "ur_review_sentiment" in status
    assert not set(user_task_runs.builds) & set(TASKS)  # for the Space's life only
    # The Hub's way: spaces/nlue/app.py, configured by the environment alone.
    monkeypatch.setenv("NLUE_SPACE_DATASET", os.pathsep.join(["sample", *builds]))
    monkeypatch.setenv("NLUE_SPACE_RESULTS", str(user_task_runs.results))
    monkeypatch.setenv("NLUE_SPACE_MODELS", str(user_task_runs.models))
    app = runpy.run_path(str(Path(__file__).resolve().parents[1] / "spaces" / "nlue" / "app.py"), run_name="app")
    try:
        assert set(user_task_runs.builds) <= set(TASKS)
        look(app["settings"])
        assert sorted(seen["boards"]) == sorted(user_task_runs.builds)
    finally:
        app["TASKS"].close()
    assert not set(user_task_runs.builds) & set(TASKS)


# ------------------------------------------------------------------ the page, in a browser
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def page(user_task_runs: UserRuns, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    sync_api = playwright_api("the Space's browser test")
    from nlue.space.serve import launch

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with registered_task_files(user_task_runs.task_files.values()), pytest.MonkeyPatch.context() as patch:
        patch.setenv("NLUE_CACHE", str(tmp_path_factory.mktemp("space-cache")))
        patch.setenv("HF_HUB_OFFLINE", "1")  # the server thread outlives each test's own offline setting
        patch.setenv("HF_DATASETS_OFFLINE", "1")
        demo = launch(_settings(user_task_runs), host="127.0.0.1", port=_free_port(), block=False, quiet=True)
        try:
            with sync_api.sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.set_default_timeout(30_000)
                page.goto(demo.local_url)
                page.wait_for_selector("#try-predict")
                try:
                    yield sync_api, page
                finally:
                    browser.close()
        finally:
            demo.close()


def _choose(page, dropdown: str, option: str) -> None:
    page.locator(f"#{dropdown} input").click()
    page.get_by_role("option", name=option).click()


def test_the_page_tries_browses_and_ranks_the_user_tasks(page) -> None:
    """Issue 30, item 2: in the browser, the Urdu task's classifier answers right-to-left text with the task's
    labels, its data pages show its fields, and the leaderboard shows each task's board and chart below NLUE's
    table (which holds none of their runs)."""
    sync_api, page = page
    expect = sync_api.expect
    expect(page.locator("#nlue-intro")).to_contain_text("Urdu review sentiment (ur (right to left))")
    _choose(page, "try-task", "UR_REVIEW_SENTIMENT · Urdu review sentiment")
    expect(page.locator("#try-model input")).to_have_value("models/ur_review_sentiment")
    box = page.locator("#try-field-0 textarea")
    expect(box).to_have_attribute("dir", "rtl")
    box.fill(URDU_REVIEW)
    page.locator("#try-predict").click()
    expect(page.locator("#try-details")).to_contain_text("models/ur_review_sentiment", timeout=60_000)
    expect(page.locator("#try-output")).to_contain_text(re.compile("negative|neutral|positive"))
    expect(page.locator("#try-summary")).to_contain_text("Language: ur (right to left)")
    page.screenshot(path=ARTIFACTS / "byot-space-try.png", full_page=True)
    page.get_by_role("tab", name="Browse data").click()
    _choose(page, "data-config", "UR_REVIEW_SENTIMENT · Urdu review sentiment")
    expect(page.locator("#data-status")).to_contain_text("ur_review_sentiment / train: page 1")
    expect(page.locator("#data-table")).to_contain_text("sentiment")
    expect(page.locator("#data-table")).to_contain_text("neutral")  # labels by name
    page.screenshot(path=ARTIFACTS / "byot-space-data.png", full_page=True)
    page.get_by_role("tab", name="Leaderboard").click()
    expect(page.locator("#leaderboard-table")).not_to_contain_text(FINE_TUNED_RUN)  # not an NLUE run
    expect(page.locator("#tasks-intro")).to_contain_text("Your tasks")
    for name in ("ne_news_topic", "ur_review_sentiment", "ne_headline_relatedness"):
        expect(page.locator(f"#task-{name}-table")).to_contain_text(FINE_TUNED_RUN)
        expect(page.locator(f"#task-{name}-chart img")).to_be_visible()
    expect(page.locator("#task-ne_news_topic-table")).to_contain_text("macro_f1 (primary)")
    expect(page.locator("#task-ur_review_sentiment-legend")).to_contain_text("language: ur (right to left)")
    page.locator("#tasks-intro").scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "byot-space-leaderboard.png", full_page=True)
