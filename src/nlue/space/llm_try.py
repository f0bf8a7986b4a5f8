"""The Space's "Ask a language model": one exam or NLUE item put to a configured local causal LM.

An exam item (``mcq_ne``, ``mcq_ur``) goes through exactly what ``nlue llm mcq`` does for
one item: the gold key and keyed text removed, the prompt rendered (chat messages when
the tokenizer has a chat template), greedy generation with the same stop sequence, then
the strict parser (and the lenient one, shown apart). An NLUE classification item goes
through ``nlue llm nlue``'s scorer: the log-likelihood of each verbalised label after the
prompt. An STS-B item, whose answer is a similarity score, goes through ``nlue llm nlue --mode
generate``: the model writes a number, the strict number parser reads it. The page shows the rendered prompt, the raw output and the parse; the gold answer
is shown only after the model has answered, beside the verdict. Only models on the Space's
list are loaded (``kind: causal-lm`` in the models file, or a causal-LM folder found by the
scan), a few at a time.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nlue.errors import NlueError
from nlue.evals.llm.label_generation import DEFAULT_LABEL_TOKENS, label_request
from nlue.evals.llm.nlue_llm import demonstrations, render_prompt, score_labels
from nlue.evals.llm.number_generation import parse_number, with_number_line
from nlue.evals.mcq.parse import parse_item_output
from nlue.evals.mcq.prompts import show_prompt
from nlue.evals.mcq.run import (
    generation_request,
    item_prompts,
    resolve_language,
    stop_sequences,
    uses_chat,
    without_gold,
)
from nlue.registry.kinds.multiple_choice import MultipleChoiceKind, key_letter
from nlue.registry.tasks import TASKS, TaskSpec, get_task
from nlue.space.models import ModelCatalog
from nlue.text.safe import markdown_text

logger = logging.getLogger(__name__)

MAX_NEW_TOKENS = 64  # the two answer lines fit easily; a visitor does not wait for the paper's 4,096
LOADED_MODELS = 2  # causal LMs kept in memory at once


def llm_tasks() -> list[str]:
    """Tasks a language model can be asked here: the exams, and the tasks with LLM prompts (NLUE's classifiers)."""
    return [name for name, task in TASKS.items() if isinstance(task.kind, MultipleChoiceKind) or bool(task.prompts)]


def prompt_languages(task_name: str) -> list[str]:
    task = get_task(task_name)
    return ["en", "native"] if isinstance(task.kind, MultipleChoiceKind) else list(task.prompts)


@dataclass(frozen=True)
class LlmAnswer:
    """What the page shows: the prompt, what came back, how it was read, and the verdict."""

    prompt: str
    raw_output: str
    parse: dict[str, Any]
    verdict: str  # correct / wrong / invalid


class LlmTry:
    """Loads listed causal LMs on demand (at most :data:`LOADED_MODELS`) and answers one item at a time."""

    def __init__(self, catalog: ModelCatalog) -> None:
        self.catalog = catalog
        self._models: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def model(self, name: str) -> Any:
        from nlue.lm.factory import load_model
        from nlue.lm.spec import ModelSpec

        entry = self.catalog.require(name, "causal-lm")
        with self._lock:  # one load at a time; the least recently used model is dropped
            if entry.name not in self._models:
                spec = ModelSpec(entry.source, backend="transformers", batch_size=1, show_progress=False)
                self._models[entry.name] = load_model(spec)
                while len(self._models) > LOADED_MODELS:
                    self._models.popitem(last=False)
            self._models.move_to_end(entry.name)
            return self._models[entry.name]

    def ask(self, model_name: str, task_name: str, item: Mapping[str, Any], prompt_language: str) -> LlmAnswer:
        task = get_task(task_name)
        model = self.model(model_name)
        if isinstance(task.kind, MultipleChoiceKind):
            return _ask_exam(model, task, item, prompt_language)
        if not task.kind.has_classes:
            return _ask_score(model, task, item, prompt_language)
        return _ask_classification(model, task, item, prompt_language)


def _ask_exam(model: Any, task: TaskSpec, item: Mapping[str, Any], prompt_language: str) -> LlmAnswer:
    language = resolve_language(task, prompt_language)
    (prompt,) = item_prompts([item], task, language, 0, (), uses_chat(model))
    (generation,) = model.generate([generation_request(prompt, stop_sequences(language, task), MAX_NEW_TOKENS)])
    visible = without_gold(item, task)
    strict = parse_item_output(generation.text, visible, language, task=task)
    lenient = parse_item_output(generation.text, visible, language, lenient=True, task=task)
    gold = key_letter(item[str(task.label_field)])
    verdict = "invalid" if not strict.valid else ("correct" if strict.key == gold else "wrong")
    parse = {"strict": strict.as_dict(), "lenient (shown apart, never scored)": lenient.as_dict(), "gold key": gold}
    return LlmAnswer(show_prompt(prompt), generation.text, parse, verdict)


def _ask_classification(model: Any, task: TaskSpec, item: Mapping[str, Any], language: str) -> LlmAnswer:
    visible = {name: value for name, value in item.items() if name != task.label_field}
    scores = score_labels(model, task, [visible], language)
    values = scores.loglikelihoods[0]
    chosen = int(values.argmax())
    gold = int(item[str(task.label_field)])
    parse = {
        "log-likelihood per label": {word: round(float(v), 4) for word, v in zip(scores.choices, values, strict=True)},
        "predicted": task.label_names[chosen],  # label words come in label-id order
        "gold": task.label_names[gold],
    }
    prompt = demonstrations(task, (), language, 0, 0) + render_prompt(task, visible, language)
    return LlmAnswer(prompt, f"(scored by log-likelihood) {scores.choices[chosen]}", parse,
                     "correct" if chosen == gold else "wrong")  # fmt: skip


def _ask_score(model: Any, task: TaskSpec, item: Mapping[str, Any], language: str) -> LlmAnswer:
    """A similarity item (STS-B) by generation: the model writes a number, the strict parser reads it."""
    visible = {name: value for name, value in item.items() if name != task.label_field}
    prompt = with_number_line(render_prompt(task, visible, language), task.score_range, language)
    (generation,) = model.generate([label_request(prompt, uses_chat(model), DEFAULT_LABEL_TOKENS)])
    error = (generation.error or "request failed") if generation.finish_reason == "error" else None
    strict = parse_number(generation.text, task.score_range, error=error)
    lenient = parse_number(generation.text, task.score_range, lenient=True, error=error)
    gold = float(item[str(task.label_field)])
    parse = {"strict": strict.to_dict(), "lenient (shown apart, never scored)": lenient.to_dict(), "gold score": gold}
    off = "" if strict.value is None else f" {strict.value:g}, gold {gold:g}, off by {abs(strict.value - gold):.2f}"
    return LlmAnswer(prompt, generation.text, parse, f"scored{off}" if strict.valid else "invalid")


# ------------------------------------------------------------------ the page section
LLM_INTRO = (
    "Put one test item of an exam or of an NLUE classification task to a language model on this Space's "
    "list. Exam items are answered by greedy generation in the exams' two-line format and read by the "
    "strict parser (the lenient reading is shown apart and never scored), as `nlue llm mcq` does; NLUE items "
    "are scored by the log-likelihood of each label word, as `nlue llm nlue` does, except STS-B, where the "
    "model writes a similarity score that a strict number parser reads (`nlue llm nlue --mode generate`). "
    "The gold answer appears only beside the verdict, after the model has answered."
)
NO_LLM_TASKS = "This Space's dataset has none of the tasks a language model can be asked here."
NO_LLM = (
    "No causal language model is on this Space's list, read from {source}. Put a causal-LM checkpoint "
    "(a folder with its `config.json`, weights and tokenizer) in the models folder it scans, or list one in a "
    "models file with `kind: causal-lm` (a folder or a Hub id), and start the Space again."
)


def build_llm_section(service: Any, settings: Any, on: Any) -> None:
    """The "Ask a language model" part of the Try tab; ``on`` wires an event as the page's other events are."""
    import gradio as gr

    names = service.catalog.causal_lms()
    asker = LlmTry(service.catalog)
    # Only what the Space's data has: a dataset given with --dataset may hold a few configs, and no exams.
    tasks = [name for name in llm_tasks() if name in service.data.configs()]
    intro = (LLM_INTRO if names else NO_LLM.format(source=markdown_text(settings.models))) + (
        "" if tasks else "\n\n" + NO_LLM_TASKS
    )
    with gr.Accordion("🤖 Ask a language model (an exam or NLUE item)", open=False, elem_id="llm-section"):
        gr.Markdown(intro)
        with gr.Row():
            model = gr.Dropdown(names, value=names[0] if names else None, label="Language model", elem_id="llm-model")
            first = tasks[0] if tasks else None
            task = gr.Dropdown(tasks, value=first, label="Task", filterable=False, elem_id="llm-task")
            languages = prompt_languages(first) if first else []
            language = gr.Radio(languages, value=next(iter(languages), None), label="Prompt language",
                                elem_id="llm-language")  # fmt: skip
            number = gr.Number(value=0, precision=0, minimum=0, label="Test item number", elem_id="llm-item")
        ask = gr.Button("Ask", variant="primary", elem_id="llm-ask", interactive=bool(names and tasks))
        verdict = gr.Markdown(elem_id="llm-verdict")
        with gr.Row(equal_height=False):
            prompt = gr.Textbox(label="Prompt, as the model saw it", lines=10, elem_id="llm-prompt")
            with gr.Column():
                raw = gr.Textbox(label="Raw output", lines=3, elem_id="llm-raw")
                parse = gr.JSON(label="How it was read", elem_id="llm-parse")

    def on_task(task_name: str) -> Any:
        choices = prompt_languages(task_name)
        return gr.update(choices=choices, value=choices[0])

    def on_ask(model_name: str, task_name: str, prompt_language: str, item_number: float | None) -> tuple:
        # The event skips Gradio's preprocessing (its refusal of a value off a list prints a traceback), so an
        # API caller's values are checked here: each refused with what is offered, never a failure deep inside.
        if not isinstance(task_name, str) or task_name not in llm_tasks():
            offered = ", ".join(tasks) or "no task"
            raise NlueError(f"a language model can be asked {offered} here; {task_name!r:.40} is not one")
        rows = service.data.split(task_name, "test")  # refuses a task the dataset lacks, naming those it has
        if prompt_language not in prompt_languages(task_name):
            raise NlueError(f"{task_name} prompts come in {', '.join(prompt_languages(task_name))}")
        number_ok = isinstance(item_number, int | float) and not isinstance(item_number, bool)
        if item_number is not None and not (number_ok and math.isfinite(item_number)):
            raise NlueError(f"the test item number must be a whole number; got {item_number!r:.40}")
        if rows.num_rows == 0:
            raise NlueError(f"{task_name} has no test items in this Space's dataset")
        index = int(item_number or 0) % rows.num_rows
        answer = asker.ask(model_name, task_name, rows[index], prompt_language)
        return answer.prompt, answer.raw_output, answer.parse, f"**{answer.verdict}** · {task_name} test item {index}"

    on(task.change, on_task, task, language, show_progress="hidden")
    on(ask.click, on_ask, [model, task, language, number], [prompt, raw, parse, verdict], api_name="ask_llm",
       concurrency_limit=settings.model_concurrency, concurrency_id="model", preprocess=False)  # fmt: skip
