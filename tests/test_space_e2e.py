"""The Space in a real browser: headless Chromium drives the page served on loopback.

Needs Debian's chromium (/usr/bin/chromium) and the playwright package; skipped, saying
which is missing, otherwise. Screenshots go to test-artifacts/space/ (gitignored).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import ARTIFACTS as TEST_ARTIFACTS
from tests.browser import BROWSER_ARGS, CHROMIUM, playwright_api

sync_api = playwright_api("the end-to-end Space test", module_level=True)
pytest.importorskip("gradio", reason="the end-to-end Space test needs gradio")
pytest.importorskip("transformers")

from nlue.results import RunResult, write_result  # noqa: E402
from nlue.space.demo_models import build_demo_models  # noqa: E402
from nlue.space.serve import launch  # noqa: E402
from nlue.space.settings import SpaceSettings  # noqa: E402

ARTIFACTS = TEST_ARTIFACTS / "space"
TIMEOUT_MS = 30_000
MAX_CHARS = 300
HOSTILE_NAME = "![x](http://e/x.png)<script>alert(1)</script>"
# Header texts the table cut short (a CSS ellipsis: the text is wider than its box), in the view on screen.
CUT_HEADERS = """Array.from(document.querySelectorAll('#leaderboard-table thead th'))
  .filter(th => Array.from(th.querySelectorAll('.header')).some(e => e.scrollWidth > e.clientWidth + 1))
  .map(th => th.innerText.trim())"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _causal_lm_without_architectures(folder: Path) -> Path:
    """A tiny causal LM whose config.json records no architecture, as some exports leave it (issue 29, item 29:
    the Space found causal LMs by their architecture's name only)."""
    import json

    from nlue.lm.tiny import save_tiny_causal_lm

    save_tiny_causal_lm(folder, "llama")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    del config["architectures"]
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def space_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("space-e2e")
    models = build_demo_models(root / "models", tasks=("sa", "mnli"))
    _causal_lm_without_architectures(models / "chat-lm")
    results = root / "results"
    metrics = {"accuracy": 0.52, "macro_f1": 0.5, "macro_f1_ci_low": 0.4, "macro_f1_ci_high": 0.6}
    run = RunResult(task="sa", model=str(models / "sa"), kind="fine-tune", metrics=metrics)
    write_result(run, results, "tiny-bert")
    # Names from outside (issue 29, item 20): a model name and a task name holding Markdown and HTML.
    hostile = RunResult(task="sa", model=HOSTILE_NAME, kind="zero-shot", metrics={"accuracy": 0.5, "macro_f1": 0.4})
    written = write_result(hostile, results)  # in the folder named after it, so the row shows the name itself
    text = written.read_text(encoding="utf-8")
    (written.parent / "rte.json").write_text(text.replace('"task": "sa"', f'"task": "{HOSTILE_NAME}"'))
    settings = SpaceSettings(models=models, results_dir=results, max_chars=MAX_CHARS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NLUE_CACHE", str(root / "nlue-cache"))
        patch.setenv("HF_HUB_OFFLINE", "1")  # the server thread outlives each test's own offline setting
        patch.setenv("HF_DATASETS_OFFLINE", "1")
        demo = launch(settings, host="127.0.0.1", port=_free_port(), block=False, quiet=True)
        try:
            yield demo.local_url
        finally:
            demo.close()


@pytest.fixture(scope="module")
def page(space_url: str) -> Iterator[sync_api.Page]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(space_url)
        page.wait_for_selector("#try-predict")
        try:
            yield page
        finally:
            browser.close()


def _choose(page: sync_api.Page, dropdown: str, option: str) -> None:
    page.locator(f"#{dropdown} input").click()
    page.get_by_role("option", name=option).click()


def test_predict_a_label_for_nepali_text(page: sync_api.Page) -> None:
    expect = sync_api.expect
    _choose(page, "try-task", "MNLI · Multi-Genre Natural Language Inference")
    expect(page.locator("#try-field-0")).to_contain_text("Premise")
    expect(page.locator("#try-field-1")).to_contain_text("Hypothesis")
    expect(page.locator("#try-field-2")).to_be_hidden()
    expect(page.locator("#try-model input")).to_have_value("models/mnli")
    page.locator("#try-field-0 textarea").fill("हिजो रातभरि पानी परेकाले बाटो हिलो भयो।")
    page.locator("#try-field-1 textarea").fill("हिजो पानी परेको थियो।")
    page.locator("#try-predict").click()
    expect(page.locator("#try-details")).to_contain_text("models/mnli", timeout=60_000)
    expect(page.locator("#try-output")).to_contain_text(re.compile("entailment|neutral|contradiction"))
    page.screenshot(path=ARTIFACTS / "try-model.png", full_page=True)


def test_oversize_input_gets_a_friendly_message(page: sync_api.Page) -> None:
    page.locator("#try-field-0 textarea").fill("क" * (MAX_CHARS + 50))
    page.locator("#try-predict").click()
    sync_api.expect(page.get_by_text(f"this Space accepts up to {MAX_CHARS}")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "try-model-oversize.png")  # the viewport: a full-page capture drops the toast
    page.get_by_test_id("toast-close").click()
    sync_api.expect(page.get_by_test_id("toast-body")).to_have_count(0)


def test_leaderboard_shows_paper_rows_and_runs(page: sync_api.Page) -> None:
    expect = sync_api.expect
    page.get_by_role("tab", name="Leaderboard").click()
    table = page.locator("#leaderboard-table")
    expect(table).to_contain_text("XLM-R Base")
    expect(table).to_contain_text("m-DeBERTa-v3")
    expect(table).to_contain_text("tiny-bert")
    # The default view: the paper's own metrics, as printed, with its inconsistent cells flagged.
    expect(table).to_contain_text("WG F1")
    expect(table).to_contain_text("50.52")
    expect(table).to_contain_text("⚠ WG, STSB")
    page.get_by_text("Flagged cells of the paper's tables").click()
    expect(page.locator("#paper-flags")).to_contain_text("probably")
    page.screenshot(path=ARTIFACTS / "leaderboard-paper-view.png", full_page=True)
    # The conventions view: primary metrics and the NLUE score, said to be ours when ranked by it.
    page.get_by_label("Primary metrics + NLUE score (nlue conventions)").check()
    expect(table).to_contain_text("1/12 incomplete")
    page.get_by_label("Sort by").click()
    page.get_by_role("option", name="NLUE score", exact=True).click()
    expect(page.locator("#nlue-status")).to_contain_text("an nlue convention")
    page.locator("#chart").scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "leaderboard.png", full_page=True)
    page.get_by_label("Search models").fill("xlm")
    expect(table).not_to_contain_text("m-DeBERTa-v3")
    expect(table).to_contain_text("XLM-R Base")
    page.get_by_label("Search models").fill("")


def test_gmet_and_data_tabs(page: sync_api.Page) -> None:
    expect = sync_api.expect
    page.get_by_role("tab", name="GMET fill-the-blank").click()
    page.locator("#gmet-fill").click()
    expect(page.locator("#gmet-details")).to_contain_text("top 5", timeout=60_000)
    page.screenshot(path=ARTIFACTS / "gmet.png", full_page=True)
    page.get_by_role("tab", name="Browse data").click()
    expect(page.locator("#data-status")).to_contain_text("sa / train: page 1")
    expect(page.locator("#data-table")).to_contain_text("positive")
    page.screenshot(path=ARTIFACTS / "data.png", full_page=True)


def test_the_exam_board_shows_the_papers_rows_with_readable_headers(page: sync_api.Page) -> None:
    expect = sync_api.expect
    page.get_by_role("tab", name="Exams (LLMs)").click()
    table = page.locator("#exam-table")
    expect(table).to_contain_text("DeepSeek-V4-Flash")  # a row of the UrduMMLU paper's Table 4
    header = table.locator("th").filter(has_text="Humanities").first
    box = header.bounding_box()
    # Sized by its longest word, a header wraps between words: "Humanities" keeps to one line
    # (a squeezed column stacked its letters one per line, several hundred pixels tall).
    assert box is not None and box["width"] >= 9 * len("Humanities") and box["height"] < 120, box
    page.screenshot(path=ARTIFACTS / "exams.png", full_page=True)


def test_leaderboard_headers_are_whole_at_1280_px_and_names_from_files_stay_text(page: sync_api.Page) -> None:
    """issue 29, items 29 and 20: no header cut to "COL..." at 1280 px, the sample flag beside the model, and a
    name holding Markdown or HTML shown as text (no remote image, no link, no script)."""
    expect = sync_api.expect
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.get_by_role("tab", name="Leaderboard").click()
    table = page.locator("#leaderboard-table")
    for view in ("The paper's metrics", "Primary metrics + NLUE score (nlue conventions)"):
        page.get_by_label(view).check()
        expect(table).to_contain_text("STSB")
        page.wait_for_timeout(500)  # the widths are applied after the rows
        assert page.evaluate(CUT_HEADERS) == [], view
        headers = table.locator("thead th").all_inner_texts()
        assert [h.strip() for h in headers[:3]] == ["Model", "Data", "Check"], headers
    expect(table).to_contain_text(HOSTILE_NAME)  # the model name, as typed
    expect(page.locator("#nlue-status")).to_contain_text(f"unknown NLUE task '{HOSTILE_NAME}'")
    remote = 'Array.from(document.querySelectorAll(\'img[src*="//e/"], a[href*="//e/"]\')).length'
    assert page.evaluate(remote) == 0
    page.screenshot(path=ARTIFACTS / "leaderboard-1280.png")
    page.set_viewport_size({"width": 1440, "height": 1000})


def test_new_input_clears_the_old_prediction(page: sync_api.Page) -> None:
    """issue 29, item 29: after "Fill with an example" (or typing, or another model) the old prediction is gone."""
    expect = sync_api.expect
    page.get_by_role("tab", name="Try a model").click()
    _choose(page, "try-task", "SA · Sentiment Analysis")
    # The task's form arrives from the server and empties the fields: type only once it has (a busy machine
    # can answer after the typing, and the text typed would be gone).
    expect(page.locator("#try-model input")).to_have_value("models/sa")
    expect(page.locator("#try-field-0 textarea")).to_have_value("")
    page.locator("#try-field-0 textarea").fill("आजको खाना एकदमै मीठो थियो।")
    page.locator("#try-predict").click()
    expect(page.locator("#try-details")).to_contain_text("models/sa", timeout=60_000)
    expect(page.locator("#try-output")).to_contain_text("%")
    page.screenshot(path=ARTIFACTS / "try-before-example.png", full_page=True)
    page.locator("#try-example").click()
    expect(page.locator("#try-field-0 textarea")).not_to_have_value("आजको खाना एकदमै मीठो थियो।")
    expect(page.locator("#try-details")).to_have_text("")
    expect(page.locator("#try-output")).not_to_contain_text("%")
    page.screenshot(path=ARTIFACTS / "try-after-example.png", full_page=True)
    page.locator("#try-predict").click()  # the example's own prediction, then a typed change clears it too
    expect(page.locator("#try-details")).to_contain_text("models/sa", timeout=60_000)
    page.locator("#try-field-0 textarea").press_sequentially("!")
    expect(page.locator("#try-details")).to_have_text("")


def test_a_causal_lm_in_the_models_folder_can_be_asked(page: sync_api.Page) -> None:
    """issue 29, item 29: "Ask a language model" offers the causal LM the models folder holds and asks it."""
    expect = sync_api.expect
    page.get_by_role("tab", name="Try a model").click()
    page.get_by_text("Ask a language model (an exam or NLUE item)").click()
    section = page.locator("#llm-section")
    expect(section).not_to_contain_text("No causal language model")
    expect(page.locator("#llm-model input")).to_have_value("models/chat-lm")
    page.locator("#llm-ask").click()
    expect(page.locator("#llm-verdict")).to_contain_text("test item 0", timeout=60_000)
    expect(page.locator("#llm-prompt textarea")).not_to_have_value("")
    page.locator("#llm-section").scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "llm-asked.png", full_page=True)
