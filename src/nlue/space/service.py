"""What each part of the Space does, without Gradio: the handlers the UI calls, testable alone.

Handlers raise :class:`~nlue.errors.NlueError` subclasses with messages meant for the
visitor; the UI layer turns them into ``gr.Error`` pop-ups. A model that fails to load
raises :class:`ModelLoadError` and leaves the service serving.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import pandas as pd
from matplotlib.figure import Figure

from nlue.boards import columns as cols
from nlue.boards import text
from nlue.boards.charts import MAX_CHART_MODELS, score_chart
from nlue.boards.clean_columns import with_clean_columns
from nlue.boards.contamination import ContaminationBoard, contamination_board_of
from nlue.boards.leaderboard import (
    PAPER_KIND,
    Leaderboard,
    filter_rows,
    leaderboard_frame,
    sort_rows,
)
from nlue.boards.score_checks import skipped_markdown
from nlue.boards.sections import leaderboard_of
from nlue.errors import NlueError
from nlue.lm.backends import CLASSIFIER, WORD_PREDICTOR
from nlue.lm.factory import load_model
from nlue.lm.spec import ModelSpec
from nlue.registry.spec import TaskSpec
from nlue.registry.tasks import TASKS, get_task
from nlue.results_folders import describe
from nlue.space.batching import Batched, MicroBatcher
from nlue.space.cache import LoadedModel, ModelCache
from nlue.space.data import DataBrowser
from nlue.space.gmet import check_sentence, predict_blank
from nlue.space.inference import (
    TRY_TASKS,
    InputError,
    check_head,
    checked_text,
    field_hint,
    field_label,
    format_prediction,
    is_blank,
    max_fields,
    predict_rows,
    prediction_record,
    validate_inputs,
)
from nlue.space.models import ModelCatalog, ModelEntry, load_catalog
from nlue.space.results_source import Fetch, ResultsSource, refresh_minutes
from nlue.space.settings import SpaceSettings

logger = logging.getLogger(__name__)


class ModelLoadError(NlueError):
    """A listed model could not be loaded (missing files, no network, wrong head...)."""


@dataclass(frozen=True)
class FieldForm:
    """One input box of the "Try a model" form."""

    visible: bool
    label: str = ""
    info: str = ""
    rtl: bool = False  # the task's language is written right to left (Urdu, Arabic, ...)


@dataclass(frozen=True)
class TaskForm:
    """What the form shows for a task: its input boxes, its models, and a summary."""

    fields: tuple[FieldForm, ...]
    models: tuple[str, ...]
    summary: str


class SpaceService:
    """The Space's state (catalog, model cache, data, leaderboard) and its handlers."""

    def __init__(
        self, settings: SpaceSettings, catalog: ModelCatalog | None = None, fetch: Fetch | None = None
    ) -> None:
        """``fetch``: how a Hub results repo is mirrored (tests give a local folder standing in for the snapshot)."""
        self.settings = settings
        self.catalog = catalog if catalog is not None else load_catalog(settings.models)
        self.cache = ModelCache(self._load, max_models=settings.max_cached_models)
        self.data = DataBrowser(settings.datasets)
        self._board_lock = threading.Lock()
        self.results = ResultsSource(settings.results_repo, settings.results_dir, fetch, refresh_minutes())
        self.results.update()  # a Hub results repo is mirrored before the first read
        self._board = self._read_board()
        self._contamination = contamination_board_of(settings.results_folders)  # the clean columns' scores
        self.results.start(self.reload_results)
        self._batchers: dict[tuple[str, str], MicroBatcher] = {}
        self._warming: threading.Thread | None = None
        self._batchers_lock = threading.Lock()

    def warm_up(self) -> threading.Thread:
        """Import the model libraries in the background, so that the first visitor does not wait for them.

        Only imports: no model is loaded before someone asks for it, and nothing is downloaded.
        """

        def work() -> None:
            started = time.perf_counter()
            from transformers import AutoModelForMaskedLM, AutoModelForSequenceClassification, pipeline  # noqa: F401

            from nlue.lm import extra_fc  # noqa: F401  (load_classifier may restore the extra layer)

            logger.info("model libraries imported in %.1f s", time.perf_counter() - started)

        thread = threading.Thread(target=work, name="nlue-space-warm-up", daemon=True)
        thread.start()
        self._warming = thread
        return thread

    # --- models --------------------------------------------------------------------------

    def _load(self, entry: ModelEntry) -> tuple[Any, Any]:
        if self._warming is not None:
            # transformers resolves its names lazily; importing them from two threads at once can fail with
            # "cannot import name ..." in one of them, so a load waits for the warm-up's imports to finish.
            self._warming.join()
        logger.info("loading %s %s from %s", entry.kind, entry.name, entry.source)
        if entry.kind == "masked-lm":  # the GMET tab's word predictor, which holds the model and its tokenizer
            spec = ModelSpec(entry.source, backend="fill-mask", show_progress=False)
            predictor = load_model(spec, WORD_PREDICTOR, device="auto", answer_candidates=False)
            return predictor, predictor.tokenizer
        return load_model(ModelSpec(entry.source), CLASSIFIER, trust_remote_code=False)

    def _get_model(self, entry: ModelEntry) -> LoadedModel:
        try:
            return self.cache.get(entry)
        except Exception as exc:  # any failure to load must not take the Space down
            logger.exception("could not load %s from %s", entry.name, entry.source)
            error = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise ModelLoadError(text.LOAD_FAILED.format(name=entry.name, error=error)) from exc

    # --- try a model ---------------------------------------------------------------------

    def task_form(self, task_name: str) -> TaskForm:
        task = get_task(task_name)
        rtl = text.is_right_to_left_task(task)
        fields = [FieldForm(True, field_label(field), field_hint(task, field), rtl) for field in task.input_fields]
        fields += [FieldForm(False)] * (max_fields() - len(fields))
        models = tuple(self.catalog.classifiers_for(task.name))
        summary = text.task_summary(task, self.settings.max_chars)
        if not models:
            summary += "\n\n⚠️ " + text.NO_CLASSIFIER_HINT
        return TaskForm(tuple(fields), models, summary)

    def _checked_request(
        self, task_name: str, model_name: str | None, values: Sequence[str | None]
    ) -> tuple[ModelEntry, TaskSpec, dict[str, str]]:
        """The model entry, task and example of a prediction request, all checked (the model is not loaded)."""
        if not isinstance(task_name, str) or task_name not in TRY_TASKS:
            raise InputError(f"pick one of the tasks listed; {task_name!r:.80} is not one")
        task = TASKS[task_name]
        example = validate_inputs(task, values, self.settings.max_chars)
        if not model_name and not self.catalog.classifiers_for(task.name):
            raise InputError(text.NO_CLASSIFIER)
        return self.catalog.require(model_name, "classifier", task.name), task, example

    def _ready(self, entry: ModelEntry, task: TaskSpec) -> None:
        """Load ``entry`` (if it is not loaded yet) and check that its head reads out ``task``'s labels."""
        check_head(entry, task, self._get_model(entry).model.config)

    async def _ready_async(self, entry: ModelEntry, task: TaskSpec) -> None:
        """:meth:`_ready` for a coroutine: only loading a model (seconds) goes to a worker thread."""
        if entry in self.cache:
            self._ready(entry, task)
        else:
            await anyio.to_thread.run_sync(self._ready, entry, task)

    def predict(
        self, task_name: str, model_name: str | None, *values: str | None
    ) -> tuple[dict[str, float] | str, str]:
        """The prediction (label probabilities, or the stsb score as text) and a line about how it was made.

        For Python callers, one thread per request; the page uses :meth:`predict_async`, the same
        checks and batches without a thread per waiting visitor.
        """
        entry, task, example = self._checked_request(task_name, model_name, values)
        self._ready(entry, task)
        started = time.perf_counter()
        return self._shown(entry, task, self.batcher(entry, task.name).submit(example), started)

    async def predict_async(
        self, task_name: str, model_name: str | None, *values: str | None
    ) -> tuple[dict[str, float] | str, str]:
        """:meth:`predict` as a coroutine: the page's handler. Waiting for its batch, a visitor holds no
        worker thread, and Gradio skips the hop to one (about 0.8x -> 0.82x the direct rate through the
        queue at base size, ``benchmarks/space_latency.py``)."""
        entry, task, example = self._checked_request(task_name, model_name, values)
        await self._ready_async(entry, task)
        started = time.perf_counter()
        return self._shown(entry, task, await self.batcher(entry, task.name).submit_async(example), started)

    @staticmethod
    def _shown(entry: ModelEntry, task: TaskSpec, answer: Batched, started: float) -> tuple[Any, str]:
        milliseconds = 1000 * (time.perf_counter() - started)
        shared = f" · batch of {answer.batch_size}" if answer.batch_size > 1 else ""
        return format_prediction(task, answer.value), f"`{entry.name}` · {task.name} · {milliseconds:.0f} ms{shared}"

    async def classify(self, task_name: str, model_name: str | None, fields: Sequence[str | None]) -> dict[str, Any]:
        """:meth:`predict` for API clients: the same checks and batches, the answer as a JSON object."""
        if not isinstance(fields, list | tuple) or not all(isinstance(value, str) for value in fields):
            raise InputError(f"fields must be a list of texts, the task's input fields in order; got {fields!r:.80}")
        entry, task, example = self._checked_request(task_name, model_name, fields)
        extras = fields[len(task.input_fields) :]  # empty extras are the form's unused boxes
        if not all(is_blank(checked_text(value, "An extra field")) for value in extras):
            wanted = ", ".join(map(field_label, task.input_fields))
            raise InputError(f"{task.name} takes {len(task.input_fields)} field(s) ({wanted}); got {len(fields)} texts")
        await self._ready_async(entry, task)
        started = time.perf_counter()
        answer = await self.batcher(entry, task.name).submit_async(example)
        record = prediction_record(task, answer.value)
        record.update(model=entry.name, batch_size=answer.batch_size)
        record["milliseconds"] = round(1000 * (time.perf_counter() - started), 1)
        return record

    def batcher(self, entry: ModelEntry, task_name: str) -> MicroBatcher:
        """The batcher of ``entry`` on ``task_name``: concurrent requests for that pair share forward passes.

        One per (model, task): a batch needs one task, since the task decides how an example
        becomes model input. The model is fetched from the cache for each batch, so an evicted
        model is loaded again rather than kept alive by its batcher.
        """
        key = (entry.name, task_name)
        with self._batchers_lock:
            found = self._batchers.get(key)
            if found is None:
                task = TASKS[task_name]

                def run(examples: list[dict[str, str]]) -> list[Any]:
                    return predict_rows(self._get_model(entry), task, examples)

                found = MicroBatcher(
                    run,
                    self.settings.max_batch_size,
                    name=f"{entry.name} on {task_name}",
                    max_waiting=self.settings.queue_size,
                )
                self._batchers[key] = found
            return found

    def example_inputs(self, task_name: str, seed: int | None = None) -> list[str]:
        """The input fields of a random item of ``task`` from the data source, padded to the form's size."""
        task = get_task(task_name)
        item = self.data.example(task.name, seed)
        values = [str(item[field]) for field in task.input_fields]
        return values + [""] * (max_fields() - len(values))

    # --- GMET ----------------------------------------------------------------------------

    def fill_blank(self, model_name: str | None, sentence: str | None, top_k: int) -> tuple[dict[str, float], str]:
        sentence = check_sentence(sentence, self.settings.max_chars)
        if not model_name and not self.catalog.masked_lms():
            raise InputError(text.NO_MASKED_LM)
        entry = self.catalog.require(model_name, "masked-lm")
        top_k = max(1, min(int(top_k or 5), self.settings.max_top_k))
        loaded = self._get_model(entry)
        started = time.perf_counter()
        words = predict_blank(loaded, sentence, top_k)
        milliseconds = 1000 * (time.perf_counter() - started)
        return dict(words), f"`{entry.name}` · top {top_k} · {milliseconds:.0f} ms"

    def gmet_example(self, seed: int | None = None) -> tuple[str, str]:
        item = self.data.example("gmet", seed)
        return item[
            "sentence"
        ], f"Category: {item['category']} ({item['theme']}) · accepted: {' / '.join(item['answers'])}"

    # --- data ----------------------------------------------------------------------------

    def splits(self, config: str) -> list[str]:
        return list(get_task(config).splits)

    def data_page(self, config: str, split: str, page: int, page_size: int) -> tuple[pd.DataFrame, int, str]:
        frame, page, pages = self.data.page(config, split, page, page_size)
        total = self.data.split(config, split).num_rows
        language = text.languages_text(get_task(config))
        sample = " · ⚠ sample data" if self.data.is_sample_config(config) else ""
        return (
            frame,
            page,
            f"{config} / {split}: page {page} of {pages} · {total:,} rows · language: {language}{sample}",
        )

    def data_random(self, config: str, split: str, count: int) -> tuple[pd.DataFrame, str]:
        frame = self.data.random(config, split, count)
        return frame, f"{config} / {split}: {len(frame)} random rows"

    # --- leaderboard ---------------------------------------------------------------------

    @property
    def board(self) -> Leaderboard:
        with self._board_lock:
            return self._board

    def _read_board(self) -> Leaderboard:
        """The leaderboard of every results folder; a Hub repo's mirror gives rows marked ``submitted``."""
        return leaderboard_of(self.settings.results_folders, {self.settings.results_dir: self.results.label})

    def reload_results(self, fetch_again: bool = False) -> Leaderboard:
        """Read the results again (``fetch_again``: mirror a Hub results repo first, as the page's button does)."""
        if fetch_again:
            self.results.update()
        board = self._read_board()
        contamination = contamination_board_of(self.settings.results_folders)
        with self._board_lock:
            self._board, self._contamination = board, contamination
        return board

    @property
    def contamination(self) -> ContaminationBoard:
        """The contamination findings and clean scores, as last read (nlue.boards.contamination)."""
        with self._board_lock:
            return self._contamination

    def leaderboard_table(
        self,
        kinds: Sequence[str] | None = None,
        query: str = "",
        complete_only: bool = False,
        sort_by: str = cols.AS_LISTED,
        descending: bool = True,
        show_ci: bool = False,
        view: str = cols.PAPER_VIEW,
    ) -> tuple[pd.DataFrame, str]:
        board = self.board
        view = cols.VIEW_LABELS.get(view, view)
        if view not in (cols.PAPER_VIEW, cols.PRIMARY_VIEW):
            raise NlueError(f"unknown leaderboard view {view!r}")
        rows = sort_rows(filter_rows(board.rows, kinds, query, complete_only), sort_by, descending)
        runs = sum(PAPER_KIND not in r.kinds for r in board.rows)
        where = self.settings.results_repo or describe(self.settings.results_folders)
        status = f"{len(rows)} of {len(board.rows)} rows shown · {runs} model(s) from `{where}` ({self.results.label})"
        note = text.ranking_note(sort_by)
        if note:
            status += f" · {note}"
        if board.skipped:  # every file left out, with its reason (as text, never as markup)
            status += f" · ⚠️ {len(board.skipped)} results file(s) skipped:\n\n{skipped_markdown(board.skipped, 20)}"
        frame = with_clean_columns(leaderboard_frame(rows, show_ci, view), rows, self.contamination.scores.rows)
        return frame, status

    def chart_models(self) -> list[str]:
        return [row.model for row in self.board.rows]

    def default_chart_models(self) -> list[str]:
        """The paper's largest model and up to two runs from the results folder (no ranking by NLUE score)."""
        board = self.board
        paper = sort_rows([r for r in board.rows if PAPER_KIND in r.kinds], cols.PARAMS.name)
        runs = [r for r in board.rows if PAPER_KIND not in r.kinds and not r.is_diagnostic]
        return [r.model for r in (paper[:1] + runs[:2])]

    def chart(self, models: Sequence[str] | None) -> Figure:
        board = self.board
        rows = [row for name in (models or [])[:MAX_CHART_MODELS] if (row := board.row(name)) is not None]
        return score_chart(rows)
