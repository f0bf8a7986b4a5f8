"""The Gradio page: seven tabs wired to :class:`~nlue.space.service.SpaceService`.

Gradio 6: the theme and CSS go to ``launch()`` (see :func:`launch_options`), each event
sets its own ``concurrency_limit``, and the queue bounds how many requests may wait.
Predictions have their own pool, wide enough to fill a batch (the service micro-batches
them per model, :mod:`nlue.space.batching`); GMET calls keep a narrow one, since each
runs its own forward passes. Only the model, GMET, data-page and leaderboard events are
API endpoints; the rest are page plumbing, closed to API clients. One endpoint has no
component: ``classify``, the predictions for scripts (one request each, JSON answer).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr

from nlue.boards import columns as cols
from nlue.boards import text
from nlue.boards.charts import MAX_CHART_MODELS
from nlue.boards.exams import LEGEND as EXAM_LEGEND
from nlue.boards.leaderboard import styled_frame
from nlue.boards.nediom import LEGEND as NEDIOM_LEGEND
from nlue.boards.robustness import robustness_board_of
from nlue.boards.score_checks import skipped_markdown
from nlue.boards.sections import exam_board_of, nediom_board_of
from nlue.boards.tasks import DeclaredBoards, declared_boards
from nlue.registry.benchmarks import declared_tasks
from nlue.registry.tasks import TASKS
from nlue.space import http_api
from nlue.space.batching import let_idle_cores_sleep
from nlue.space.board_table import TAB_HEIGHT_PX, board_table
from nlue.space.data import MAX_PAGE_SIZE
from nlue.space.declared_section import build_declared_boards
from nlue.space.handler_errors import api_errors, visitor_errors
from nlue.space.inference import TRY_TASKS
from nlue.space.llm_try import build_llm_section
from nlue.space.robustness_section import build_robustness_board
from nlue.space.service import SpaceService
from nlue.space.settings import SpaceSettings
from nlue.space.trust_sections import TrustBoards, build_trust_sections, trust_boards, trust_updates

QUEUE_STATUS_SECONDS = 1.0
# Gradio keeps a record of its last 10,000 events and, after every event, rebuilds a monitoring summary
# from them as a pandas DataFrame: milliseconds per request, and heap growth (about 150 MiB over the first
# 10,000 requests of a soak) from ever larger frames. The last 1,000 events, summarised once per 1,000, suffice.
GRADIO_ANALYTICS = {"GRADIO_ANALYTICS_MAX_EVENTS": "1000", "GRADIO_ANALYTICS_CACHE_FREQUENCY": "1000"}
SESSIONS_KEPT = 2000
# The Label and its details, emptied in the browser. An empty mapping, not null: Gradio 6 drops the whole
# update of a js-only event whose values include a null for a Label (checked in Chromium).
CLEAR_PREDICTION_JS = "() => [{}, '']"

CSS = """
#nlue-intro h1 { margin-bottom: 0.2em; }
#nlue-status, #try-details, #gmet-details, #data-status { color: var(--body-text-color-subdued); font-size: 0.9em; }
#data-table * { font-family: var(--font) !important; }
"""


def launch_options(settings: SpaceSettings) -> dict[str, Any]:
    """Keyword arguments for ``demo.launch()`` that belong to the page's look (Gradio 6 takes them there)."""
    # Montserrat ships with Gradio; Devanagari falls back to Noto Sans Devanagari, then the system's font.
    font = [gr.themes.LocalFont("Montserrat"), "Noto Sans Devanagari", "ui-sans-serif", "system-ui", "sans-serif"]
    theme = gr.themes.Soft(primary_hue="red", secondary_hue="blue", font=font)
    # Enough worker threads for a full predict pool (two batches) beside the GMET and data events.
    threads = max(40, settings.predict_concurrency + settings.model_concurrency + 4 * settings.data_concurrency)
    # Gradio keeps each session's copy of the page config (~130 KiB here) for its 10,000 most recent sessions;
    # an API client that sends no session hash opens one per call, so fewer are kept: memory stays bounded.
    return {"theme": theme, "css": CSS, "max_threads": threads, "state_session_capacity": SESSIONS_KEPT}


def _on(
    trigger: Callable[..., Any],
    handler: Callable[..., Any],
    inputs: Any,
    outputs: Sequence[Any] | Any,
    api_name: str | None = None,
    **kwargs: Any,
) -> Any:
    """Wire ``handler`` to an event, wrapped by :func:`visitor_errors`; private unless it has an API name."""
    count = len(outputs) if isinstance(outputs, list | tuple) else 1
    visibility = {"api_name": api_name} if api_name else {"api_visibility": "private"}
    return trigger(visitor_errors(handler, count), inputs, outputs, **visibility, **kwargs)


def _try_tab(service: SpaceService, settings: SpaceSettings) -> None:
    first = TRY_TASKS[0]
    form = service.task_form(first)
    gr.Markdown(text.TRY_INTRO)
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            task = gr.Dropdown(
                [text.task_choice(TASKS[name]) for name in TRY_TASKS],
                value=first,
                label="Task",
                elem_id="try-task",
                filterable=False,
            )
            summary = gr.Markdown(form.summary, elem_id="try-summary")
            boxes = [
                gr.Textbox(
                    label=box.label or f"Field {index + 1}",
                    info=box.info or None,
                    visible=box.visible,
                    rtl=box.rtl,
                    lines=2,
                    elem_id=f"try-field-{index}",
                )
                for index, box in enumerate(form.fields)
            ]
            model = gr.Dropdown(
                list(form.models),
                value=form.models[0] if form.models else None,
                label="Model",
                allow_custom_value=False,  # visitors pick from the configured list; the handler checks again
                elem_id="try-model",
            )
            with gr.Row():
                example = gr.Button("Fill with an example", variant="secondary", elem_id="try-example")
                predict = gr.Button("Predict", variant="primary", elem_id="try-predict")
        with gr.Column(scale=2):
            output = gr.Label(label="Prediction", num_top_classes=3, elem_id="try-output")
            details = gr.Markdown(elem_id="try-details")

    def on_task(task_name: str) -> list[Any]:
        chosen = service.task_form(task_name)
        models = list(chosen.models)
        return [
            *(
                gr.update(visible=box.visible, label=box.label or "unused", info=box.info, value="", rtl=box.rtl)
                for box in chosen.fields
            ),
            gr.update(choices=models, value=models[0] if models else None),
            chosen.summary,
            None,
            "",
        ]

    _on(task.change, on_task, task, [*boxes, model, summary, output, details], show_progress="hidden")
    _on(example.click, service.example_inputs, task, boxes, concurrency_limit=settings.data_concurrency)
    # A prediction belongs to the text and model it was made for: new text (typed, or filled from an example)
    # or another model clears it, in the browser (no request to the server), so no old answer stands beside it.
    for changed in (*boxes, model):
        changed.change(None, None, [output, details], js=CLEAR_PREDICTION_JS, queue=False, api_visibility="private")
    _on(
        predict.click,
        service.predict_async,  # a coroutine: no worker thread while a visitor's batch runs
        [task, model, *boxes],
        [output, details],
        api_name="predict",
        concurrency_limit=settings.predict_concurrency,
        concurrency_id="predict",
        # The inputs arrive as plain strings, which is what the handler takes; the handler itself checks the
        # task and model against the catalog, so Gradio's preprocessing (a thread hop per request) adds nothing.
        preprocess=False,
    )

    async def classify(task: str, model: str, fields: list[str]) -> dict:
        """One prediction in one HTTP request: POST /gradio_api/run/classify, the answer as JSON."""
        return await service.classify(task, model, fields)

    # The same checks and micro-batches as "predict", for scripts: not queued (no event stream to read,
    # one request per prediction), bounded by the batcher's max_waiting instead of the queue's size.
    # Its POST address is served by the Space's own route (nlue.space.http_api), which can answer a
    # refusal with a 4xx; this declaration lists it on the API page and serves the queued routes.
    gr.api(api_errors(classify), api_name="classify", queue=False, api_description=text.CLASSIFY_API)


def _gmet_tab(service: SpaceService, settings: SpaceSettings) -> None:
    models = service.catalog.masked_lms()
    gr.Markdown(text.GMET_INTRO)
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            sentence = gr.Textbox(value=text.GMET_EXAMPLE, label="Sentence", lines=2, elem_id="gmet-sentence")
            model = gr.Dropdown(
                models,
                value=models[0] if models else None,
                label="Masked language model",
                allow_custom_value=False,
                info=None if models else text.NO_MASKED_LM_HINT,
                elem_id="gmet-model",
            )
            top_k = gr.Slider(1, settings.max_top_k, value=5, step=1, label="How many words")
            with gr.Row():
                example = gr.Button("Draw a GMET sentence", variant="secondary")
                fill = gr.Button("Fill the blank", variant="primary", elem_id="gmet-fill")
        with gr.Column(scale=2):
            words = gr.Label(label="Most likely words", num_top_classes=settings.max_top_k, elem_id="gmet-output")
            details = gr.Markdown(elem_id="gmet-details")
    _on(example.click, service.gmet_example, None, [sentence, details], concurrency_limit=settings.data_concurrency)
    _on(
        fill.click,
        service.fill_blank,
        [model, sentence, top_k],
        [words, details],
        api_name="fill_blank",
        concurrency_limit=settings.model_concurrency,
        concurrency_id="model",
    )


def _data_tab(service: SpaceService, settings: SpaceSettings, demo: gr.Blocks) -> None:
    offered = service.data.configs() or tuple(TASKS)  # the configs the data has; with none, each refusal says so
    gr.Markdown(text.DATA_INTRO + text.sample_notice(offered, service.data.is_sample_config))
    first = offered[0]
    with gr.Row():
        config = gr.Dropdown(
            [text.task_choice(TASKS[name]) for name in offered],
            value=first,
            label="Config",
            filterable=False,
            scale=3,
            elem_id="data-config",
        )
        split = gr.Dropdown(service.splits(first), value="train", label="Split", filterable=False, scale=1)
        page = gr.Number(value=1, precision=0, minimum=1, label="Page", scale=1)
        page_size = gr.Slider(5, MAX_PAGE_SIZE, value=10, step=5, label="Rows per page", scale=2)
    with gr.Row():
        previous = gr.Button("◀ Previous", size="sm")
        following = gr.Button("Next ▶", size="sm")
        draw = gr.Button("🎲 Random rows", size="sm")
    status = gr.Markdown(elem_id="data-status")
    table = gr.Dataframe(interactive=False, wrap=True, max_height=560, elem_id="data-table")

    def show(config_name: str, split_name: str, page_number: float | None, size: float, step: int = 0) -> Any:
        return service.data_page(config_name, split_name, int(page_number or 1) + step, int(size))

    def on_config(config_name: str) -> Any:
        splits = service.splits(config_name)
        return gr.update(choices=splits, value=splits[0])

    limit = settings.data_concurrency
    where = [config, split, page, page_size]
    shown = [table, page, status]

    def first_page(config_name: str, split_name: str, size: float) -> Any:
        return show(config_name, split_name, 1, size)

    config_changed = _on(config.change, on_config, config, split)
    _on(config_changed.then, first_page, [config, split, page_size], shown, concurrency_limit=limit)
    _on(split.input, first_page, [config, split, page_size], shown, concurrency_limit=limit)
    for trigger in (page.submit, page_size.release, demo.load):
        _on(trigger, show, where, shown, concurrency_limit=limit)
    _on(previous.click, functools.partial(show, step=-1), where, shown, concurrency_limit=limit)
    _on(following.click, functools.partial(show, step=1), where, shown, api_name="data_page", concurrency_limit=limit)
    _on(draw.click, service.data_random, [config, split, page_size], [table, status], concurrency_limit=limit)


def _leaderboard_tab(service: SpaceService, declared: DeclaredBoards | None, trust: TrustBoards) -> None:
    gr.Markdown(text.leaderboard_legend())
    kinds_found = service.board.kinds
    with gr.Row(equal_height=True):
        view = gr.Radio(list(cols.VIEW_LABELS), value=next(iter(cols.VIEW_LABELS)), label="View", scale=2)
        kinds = gr.CheckboxGroup(kinds_found, value=kinds_found, label="Kinds", scale=3)
    with gr.Row(equal_height=True):
        query = gr.Textbox(label="Search models", placeholder="e.g. XLM", scale=2)
        sort_by = gr.Dropdown(list(cols.SORT_CHOICES), value=cols.AS_LISTED, label="Sort by", scale=1)
    with gr.Row():
        descending = gr.Checkbox(True, label="Highest first")
        complete_only = gr.Checkbox(False, label="Only rows with all 12 tasks")
        show_ci = gr.Checkbox(False, label="Show 95% intervals (primary view)")
        refresh = gr.Button("↻ Re-read results folder", size="sm", variant="secondary")

    def table_args(frame: Any, show: bool, view_label: str) -> dict[str, Any]:
        shown_columns = [cols.column_named(name) for name in frame.columns]  # the frame decides (sd columns vary)
        return {
            "value": styled_frame(frame),
            "datatype": [c.datatype for c in shown_columns],
            "column_widths": cols.column_widths(shown_columns),
        }

    def table_view(*controls: Any) -> tuple[Any, str]:
        frame, status_text = service.leaderboard_table(*controls)
        return gr.update(**table_args(frame, bool(controls[-2]), controls[-1])), status_text

    first_view = next(iter(cols.VIEW_LABELS))
    frame, status_text = service.leaderboard_table(kinds_found, view=first_view)
    table = gr.Dataframe(
        **table_args(frame, False, first_view),
        interactive=False,
        wrap=True,  # headers wrap between words: each column is as wide as its longest header word (columns.py)
        pinned_columns=1,
        max_height=520,
        elem_id="leaderboard-table",
    )
    status = gr.Markdown(status_text, elem_id="nlue-status")
    with gr.Accordion("Flagged cells of the paper's tables", open=False):
        gr.Markdown(text.flags_legend(), elem_id="paper-flags")
    gr.Markdown("### Per-model scores across tasks")
    chart_models = gr.Dropdown(
        service.chart_models(),
        value=service.default_chart_models(),
        multiselect=True,
        max_choices=MAX_CHART_MODELS,
        label=f"Models to chart (up to {MAX_CHART_MODELS})",
        elem_id="chart-models",
    )
    chart = gr.Plot(service.chart(service.default_chart_models()), show_label=False, format="png", elem_id="chart")

    controls = [kinds, query, complete_only, sort_by, descending, show_ci, view]
    for control in controls:
        _on(control.change, table_view, controls, [table, status], show_progress="hidden")

    if declared is not None:  # tasks from task files: boards of their own below NLUE's, never in its table or score
        build_declared_boards(declared)
    trust_components = build_trust_sections(trust)  # contamination and memorisation: hidden where no files

    def on_refresh(kinds_selected: list[str] | None, *other_controls: Any) -> tuple[Any, ...]:
        offered = set(service.board.kinds)
        board = service.reload_results(fetch_again=True)
        # A kind that appears with the new files is shown, not silently filtered out.
        selected = [*(kinds_selected or []), *(k for k in board.kinds if k not in offered)]
        return (
            *table_view(selected, *other_controls),
            gr.update(choices=board.kinds, value=selected),
            gr.update(choices=service.chart_models()),
            *trust_updates(trust_boards(service.settings.results_folders, service.contamination)),  # as just fetched
        )

    _on(refresh.click, on_refresh, controls, [table, status, kinds, chart_models, *trust_components],
        api_name="leaderboard")  # fmt: skip
    _on(chart_models.change, service.chart, chart_models, chart)


def _board_tab(legend: str, board: Any, elem_id: str) -> None:
    """A benchmark's own results table (the exams, neDIOM), read once when the page is built."""
    gr.Markdown(legend)
    board_table(elem_id, board, TAB_HEIGHT_PX)
    if board.skipped:
        gr.Markdown("Skipped: " + skipped_markdown(board.skipped))


def build_demo(settings: SpaceSettings, service: SpaceService | None = None) -> gr.Blocks:
    """The whole Space. Reads local files (models list, results folder, a dataset folder's card); the one
    network call is for the config names of a dataset given as a Hub id (none for the embedded sample)."""
    let_idle_cores_sleep()  # before warm_up, which imports torch
    service = service or SpaceService(settings)
    # Whatever reads files is read before the warm-up imports transformers and torch in its thread: the datasets'
    # cards (datasets imports parts of transformers lazily) and the boards, whose rescoring imports scipy; an
    # import in each thread at once can meet a half-imported module ("partially initialized module 'torch'").
    service.data.configs()
    exams, idioms = exam_board_of(settings.results_folders), nediom_board_of(settings.results_folders)
    trust = trust_boards(settings.results_folders, service.contamination)  # empty without their files: not shown
    robust = {exams: robustness_board_of(settings.results_folders, exams) for exams in (False, True)}  # idem
    declared = declared_boards(settings.results_folders) if declared_tasks() else None
    service.warm_up()
    with gr.Blocks(title=text.PAGE_TITLE, analytics_enabled=False, fill_width=True) as demo:
        gr.Markdown(text.INTRO + text.declared_intro(), elem_id="nlue-intro")
        with gr.Tabs():
            with gr.Tab("Try a model", id="try"):
                _try_tab(service, settings)
                build_llm_section(service, settings, _on)
            with gr.Tab("GMET fill-the-blank", id="gmet"):
                _gmet_tab(service, settings)
            with gr.Tab("Browse data", id="data"):
                _data_tab(service, settings, demo)
            with gr.Tab("🏆 Leaderboard", id="leaderboard"):
                _leaderboard_tab(service, declared, trust)
                build_robustness_board(robust[False], "robustness-table")
            with gr.Tab("📝 Exams (LLMs)", id="exams"):
                _board_tab(EXAM_LEGEND, exams, "exam-table")
                build_robustness_board(robust[True], "exam-robustness-table")
            with gr.Tab("🪶 Idioms (neDIOM)", id="nediom"):
                _board_tab(NEDIOM_LEGEND, idioms, "nediom-table")
            with gr.Tab("About", id="about"):
                gr.Markdown(text.ABOUT)
    for name, value in GRADIO_ANALYTICS.items():  # read when the queue is made; an operator's own values win
        os.environ.setdefault(name, value)
    # Queue positions are sent once a second rather than each time a job starts ("auto"), which would
    # message every waiting visitor per request: quadratic work in a burst.
    demo.queue(
        status_update_rate=QUEUE_STATUS_SECONDS,
        max_size=settings.queue_size,
        default_concurrency_limit=settings.data_concurrency,
    )
    http_api.register(demo, service)  # the classify route that serve.launch hands to Gradio's app
    return demo
