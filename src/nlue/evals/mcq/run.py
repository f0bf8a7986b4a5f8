"""Running a multiple-choice exam on a language model: prompts, answers, parses, scores and every file, in one call.

:func:`run_mcq` takes a :class:`~nlue.lm.base.LanguageModel` (local transformers or an
OpenAI-compatible server), the exam's built dataset (a Hub id or the folder ``nlue build``
wrote) and the task, and writes under ``<results_dir>/<run name>/``:

* ``<task>.json``: the results file in the shared format (kind ``zero-shot`` or
  ``few-shot``; the numeric metrics; per-group tables, invalid counts, the lenient parse
  and the prompt-language gap under ``details``; the model's ``describe()``, prompt
  language, shots, seed and package versions);
* ``<task>/``: ``raw_outputs.jsonl``, ``tables.md``, ``by_<group>.csv``, the chart and,
  when the other prompt language has been run too, ``prompt_gap.md``
  (:mod:`nlue.evals.mcq.report`).

The run name is ``<name>__<prompt language>-<k>shot`` (``-loglik`` appended in
log-likelihood mode), ``<name>`` defaulting to the model's folder or id, so the English
and the native run of one model sit side by side and find each other for the gap.

Decisions (ours, where the paper is silent or its settings do not fit a local run):

* **Gold out of reach.** Each test item loses its key and keyed text before it is
  rendered (:func:`without_gold`); the gold is read again only to score.
* **Chat or plain text.** Chat messages for a model whose tokenizer has a chat template
  and for a server's chat endpoint; plain text otherwise; ``chat=`` overrides.
* **Decoding.** Greedy (the backends' only mode). New tokens are capped at 256 by default,
  sized to the two-line answer (a 60-letter option at three tokens per letter, as byte-fallback
  tokenizers spend on Devanagari and Urdu, plus the key line); the paper's 4,096, which a
  reasoning model needs for its thinking, is ``max_new_tokens=4096`` (``--max-new-tokens``). A
  cap over half the model's window is lowered to that (a local model needs room for the
  prompt). One stop sequence: a new line opening the next item's subject line
  (``\\nSubject:`` in the prompt language), where a base model that has answered starts
  writing the next question. Blank lines are not a stop: the parser drops them, and an
  answer split by one stays an answer.
* **API errors** count as invalid outputs (``api_error``), as the paper counts them; they
  are not journalled, so a re-run asks them again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.evals.llm import wordings as worded
from nlue.evals.llm.label_generation import require_answers
from nlue.evals.mcq import order_robustness, report
from nlue.evals.mcq.loglik import CHOICE_MODES, score_options
from nlue.evals.mcq.parse import INVALID_CATEGORIES, parse_item_output
from nlue.evals.mcq.permute import GIVEN, run_suffix
from nlue.evals.mcq.prompts import SEED, Messages, prompt_spec, render
from nlue.evals.mcq.score import exam_answers, score_answers
from nlue.evals.verify import add_wording_tests
from nlue.lm.base import ChatMessage, GenerationRequest, LanguageModel
from nlue.registry.kinds.mcq_text import LETTERS, exam_of
from nlue.registry.kinds.multiple_choice import MultipleChoiceKind
from nlue.registry.tasks import TASKS, TaskSpec, get_task
from nlue.registry.wordings import MAIN

logger = logging.getLogger(__name__)

PAPER_MAX_NEW_TOKENS = 4096  # the paper's, for reasoning models (--max-new-tokens 4096)
ANSWER_TOKENS = 256  # the default: the two-line answer (module docstring)
MODES: tuple[str, ...] = ("generate", "loglik")
PROMPT_LANGUAGES: tuple[str, ...] = ("en", "native")
ENGLISH = "en"
HEADLINE = ("accuracy_all_items", "accuracy_parseable", "invalid_rate")


def exam_names() -> list[str]:
    """The registry's multiple-choice exams."""
    return [name for name, task in TASKS.items() if isinstance(task.kind, MultipleChoiceKind)]


def exam_task(task: str | TaskSpec) -> TaskSpec:
    spec = get_task(task) if isinstance(task, str) else task
    if not isinstance(spec.kind, MultipleChoiceKind):
        raise NlueError(f"task {spec.name!r} is not a multiple-choice exam; exams: {', '.join(exam_names())}")
    return spec


def resolve_language(task: TaskSpec, prompt_language: str) -> str:
    """The prompt's language code: ``en``, the exam's own for ``native``, or a code the task has prompts in."""
    code = exam_of(task).language if prompt_language == "native" else prompt_language
    if code not in task.prompts:
        offered = ", ".join([*PROMPT_LANGUAGES, *task.prompts])
        raise NlueError(f"task {task.name!r} has no {prompt_language!r} prompt; expected one of: {offered}")
    return code


def run_name(base: str, language: str, shots: int, mode: str = "generate", limit: int | None = None,
             option_orders: str = GIVEN, wordings: str = MAIN) -> str:  # fmt: skip
    """``<base>__<language>-<k>shot[-loglik][-orders-cyclic][-wordings-all][-limit<N>]``: a partial run, and a run
    under other option orders or wordings, each have a folder of their own."""
    from nlue.run_identity import limit_suffix

    mode_part = "-loglik" if mode == "loglik" else ""
    extra = run_suffix(option_orders) + worded.run_suffix(wordings)
    return f"{base}__{language}-{shots}shot{mode_part}{extra}{limit_suffix(limit)}"


def model_base_name(model: LanguageModel) -> str:
    """The model's folder name or id, as a folder name (``org/model`` -> ``org__model``)."""
    from nlue.lm.slug import model_slug

    return model_slug(str(model.describe().model or model.name))


def load_exam(
    dataset: str, task: TaskSpec, shots: int = 0, limit: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(test items, demonstration pool) of ``task`` from a Hub id or a built folder; clear errors otherwise."""
    from nlue.data.access import load_task

    if not dataset:
        raise NlueError("give the exam's dataset: the folder `nlue build --configs <exam>` wrote, or a Hub id")
    try:
        data = load_task(dataset, task)
    except (OSError, ValueError) as exc:
        raise NlueError(
            f"cannot load config {task.name!r} from {dataset!r} ({exc}); give the folder `nlue build --source <dir> "
            f"--configs {task.name}` wrote, or the dataset's Hub id while online"
        ) from exc
    if "test" not in data:
        raise NlueError(f"{dataset}: config {task.name!r} has no test split (it has {', '.join(data)})")
    if limit is not None and limit < 1:
        raise NlueError(f"--limit must be at least 1, got {limit}")
    test = data["test"] if limit is None else data["test"].select(range(min(limit, data["test"].num_rows)))
    pool = list(data["demo"]) if shots and "demo" in data else []
    if shots and len(pool) < shots + 1:
        raise NlueError(
            f"{dataset}: {shots}-shot prompts need a demonstration pool (split `demo`) of more than {shots} items; "
            f"config {task.name!r} has {len(pool)}"
        )
    return list(test), pool


def without_gold(item: Mapping[str, Any], task: TaskSpec) -> dict[str, Any]:
    """The item as a prompt may see it: no key, no keyed text."""
    hidden = {str(task.label_field), "correct_option"}
    return {name: value for name, value in item.items() if name not in hidden}


def uses_chat(model: LanguageModel) -> bool:
    """Chat messages for a server's chat endpoint and for a tokenizer with a chat template."""
    return model.describe().chat


def stop_sequences(language: str, task: TaskSpec | None = None) -> tuple[str, ...]:
    """A new line opening the next item's subject line (see the module docstring), in ``task``'s words."""
    return (f"\n{prompt_spec(language, task).field_labels['subject']}:",)


def generation_cap(model: LanguageModel, requested: int | None) -> int:
    """The new-token cap: ``requested``, else the two-line answer's :data:`ANSWER_TOKENS`; at most half the window."""
    cap = requested or ANSWER_TOKENS
    if cap < 1:
        raise NlueError(f"--max-new-tokens must be at least 1, got {cap}")
    window = model.describe().max_length
    if isinstance(window, int) and cap > window // 2:
        logger.warning("the model's window is %d tokens: new tokens capped at %d, not %d", window, window // 2, cap)
        cap = window // 2
    return cap


def item_prompts(
    items: Sequence[Mapping[str, Any]],
    task: TaskSpec,
    language: str,
    shots: int,
    pool: Sequence[Mapping[str, Any]],
    chat: bool,
    seed: int = SEED,
) -> list[Messages | str]:
    """Every item's rendered prompt (gold removed first)."""
    return [render(without_gold(item, task), language, shots, pool, chat, seed, task=task) for item in items]


def prompt_hash(prompt: Messages | str) -> str:
    text = prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generation_request(prompt: Messages | str, stop: tuple[str, ...], cap: int) -> GenerationRequest:
    if isinstance(prompt, str):
        return GenerationRequest(prompt=prompt, stop=stop, max_new_tokens=cap)
    messages = tuple(ChatMessage(m["role"], m["content"]) for m in prompt)  # type: ignore[arg-type]
    return GenerationRequest(messages=messages, stop=stop, max_new_tokens=cap)


@dataclass
class McqRun:
    """What one run wrote and scored."""

    result: Any  # nlue.results.RunResult
    result_path: Path
    folder: Path
    name: str
    language: str
    tables: dict[str, list[dict[str, Any]]]
    files: dict[str, Path] = field(default_factory=dict)
    gap: dict[str, Any] | None = None


def _generate(model, task, items, language, shots, pool, chat, cap, seed):
    prompts = item_prompts(items, task, language, shots, pool, chat, seed)
    stop = stop_sequences(language, task)
    outputs = model.generate([generation_request(p, stop, cap) for p in prompts])
    require_answers(outputs, task.name)
    exam_language = exam_of(task).language
    strict, lenient, answers = [], [], []
    for item, output in zip(items, outputs, strict=True):
        visible = without_gold(item, task)
        error = (output.error or "request failed") if output.finish_reason == "error" else None
        strict.append(parse_item_output(output.text, visible, exam_language, error=error, task=task))
        lenient.append(parse_item_output(output.text, visible, exam_language, lenient=True, error=error, task=task))
        answers.append({"output": output.text, "finish_reason": output.finish_reason, "error": output.error,
                        "completion_tokens": output.completion_tokens})  # fmt: skip
    return [prompt_hash(p) for p in prompts], answers, strict, lenient


def _loglik(model, task, items, language, shots, pool, choices, seed):
    visible = [without_gold(item, task) for item in items]
    contexts, scores = score_options(model, visible, language, shots, pool, choices, seed, task=task)
    chars, by_bytes = scores.choice("chars"), scores.choice("bytes")
    answers = [
        {"loglikelihoods": dict(zip(LETTERS, map(float, row), strict=True)),
         "key_norm_chars": LETTERS[int(c)], "key_norm_bytes": LETTERS[int(b)]}
        for row, c, b in zip(scores.loglikelihoods, chars, by_bytes, strict=True)
    ]  # fmt: skip
    references = [int(item[str(task.label_field)]) for item in items]
    return [prompt_hash(c) for c in contexts], answers, scores.parses(visible), scores.normalised_accuracy(references)


def _prediction_rows(task: TaskSpec, items: Sequence[Mapping[str, Any]], strict: Sequence[Any],
                     answers: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    """Per-item rows in the shared schema (nlue.predictions): the key letter (None when invalid), the gold letter."""
    from nlue.predictions import prediction_rows
    from nlue.registry.kinds.multiple_choice import key_letter

    predictions = [parse.key if parse.valid else None for parse in strict]
    extras = [{**answer, "category": parse.category} for answer, parse in zip(answers, strict, strict=True)]
    golds = [key_letter(item[str(task.label_field)]) for item in items]
    return prediction_rows(task, items, predictions, golds, extras)


def _metrics(summary: Mapping[str, Any], extra: Mapping[str, float]) -> dict[str, float | None]:
    """The numeric metrics (the leaderboard reads numbers only): headline numbers, intervals, invalid counts; None
    (null, with its reason in the results file) for a metric that cannot be computed."""
    metrics = {k: None if v is None else float(v) for k, v in summary.items()
               if k.startswith(HEADLINE) and (v is None or isinstance(v, int | float))}  # fmt: skip
    metrics.update({f"invalid_count_{k}": float(v) for k, v in summary["invalid_counts"].items()})
    metrics.update(extra)
    return metrics


def _gap_with_other_run(
    results_dir, base, task, language, shots, mode, rows, resamples, seed, limit=None, orders=GIVEN, wordings=MAIN
):
    native = exam_of(task).language
    other = native if language == ENGLISH else ENGLISH
    other_name = run_name(base, other, shots, mode, limit, orders, wordings)
    other_raw = Path(results_dir) / other_name / task.name / report.RAW_OUTPUTS
    if language not in (ENGLISH, native) or not other_raw.is_file():
        return None, {}
    other_rows = report.read_jsonl(other_raw)
    english, native_rows = (rows, other_rows) if language == ENGLISH else (other_rows, rows)
    try:
        gap = report.prompt_gap(english, native_rows, resamples, seed)
    except NlueError as exc:  # an older run on another version of the exam: this run's numbers still stand
        logger.warning("no English vs native gap with %s: %s", other_raw, exc)
        return None, {}
    if gap is None:
        logger.warning("no item in common with %s: no English vs native gap", other_raw)
        return None, {}
    this_name = run_name(base, language, shots, mode, limit, orders, wordings)
    names = {ENGLISH: this_name if language == ENGLISH else other_name, native: other_name if language == ENGLISH
             else this_name}  # fmt: skip
    gap["runs"] = names
    gap["native_language"] = native
    return gap, names


def run_mcq(
    model: LanguageModel,
    dataset: str,
    task: str | TaskSpec,
    prompt_language: str = "en",
    shots: int = 0,
    results_dir: str | Path | None = None,
    name: str | None = None,
    *,
    mode: str = "generate",
    chat: bool | None = None,
    max_new_tokens: int | None = None,
    choices: str = "letters",
    limit: int | None = None,
    bootstrap_resamples: int | None = 1000,
    seed: int = SEED,
    chart: bool = True,
    overwrite: bool = False,
    option_orders: str = GIVEN,
    wordings: str = MAIN,
) -> McqRun:
    """Run ``model`` on the exam ``task`` of ``dataset`` and write every file (module docstring).

    A results file this run may not replace (a complete run where this one is partial, or a run of another
    identity: :func:`nlue.results.check_replace`) is refused before the first request, unless ``overwrite``.
    """
    from nlue.results import default_results_dir

    results_dir = Path(results_dir) if results_dir is not None else default_results_dir()
    from nlue.data.access import dataset_description
    from nlue.evals.llm.nlue_llm import llm_kind
    from nlue.predictions import attach
    from nlue.results import RunResult, check_replace, task_result_path, write_result
    from nlue.run_identity import model_run_identity, split_facts

    spec = exam_task(task)
    language = resolve_language(spec, prompt_language)
    if mode not in MODES or choices not in CHOICE_MODES:
        raise NlueError(f"mode must be one of {', '.join(MODES)} and choices one of {', '.join(CHOICE_MODES)}")
    if shots < 0:
        raise NlueError(f"shots must be 0 or more, got {shots}")
    if limit is not None and limit < 1:
        raise NlueError(f"--limit must be at least 1, got {limit}")
    everything, pool = load_exam(dataset, spec, shots)
    items = everything[:limit] if limit else everything
    base = name or model_base_name(model)
    this_name = run_name(base, language, shots, mode, limit, option_orders, wordings)
    folder = Path(results_dir) / this_name / spec.name
    settings: dict[str, Any] = {"mode": mode, "prompt_language": language,
                                "prompt_language_role": "english" if language == ENGLISH else "native",
                                "shots": shots, "demonstration_seed": seed, "option_orders": option_orders}  # fmt: skip
    if mode == "generate":
        chat = uses_chat(model) if chat is None else chat
        cap = generation_cap(model, max_new_tokens)
        settings.update(evaluation="generation, strict two-line parsing", chat=chat, decoding="greedy",
                        max_new_tokens=cap, stop=list(stop_sequences(language, spec)))  # fmt: skip
    else:
        settings.update(evaluation="log-likelihood of each option as a continuation", choices=choices, chat=False)
    protocol = {k: v for k, v in settings.items() if k in ("chat", "decoding", "max_new_tokens", "stop", "choices")}
    protocol.update({} if option_orders == GIVEN else {"option_orders": option_orders})  # older identities stand
    protocol.update(worded.identity_settings(spec, language, wordings))
    worded.require_wordings([spec], language, wordings)
    identity = model_run_identity(model, spec.name, split_facts(everything, len(items), pool), mode=mode, shots=shots,
                                  prompt_language=language, limit=limit, seed=seed,
                                  settings={**protocol, "bootstrap_resamples": bootstrap_resamples})  # fmt: skip
    check_replace(task_result_path(results_dir, this_name, spec.name), identity, overwrite=overwrite)
    started = time.perf_counter()

    def ask(shown: list[dict[str, Any]], asked: TaskSpec = spec) -> tuple[Any, ...]:
        if mode == "generate":
            return _generate(model, asked, shown, language, shots, pool, chat, cap, seed)
        return _loglik(model, asked, shown, language, shots, pool, choices, seed)

    hashes, answers, strict, second = ask(items)
    lenient, extra = (second, {}) if mode == "generate" else (None, second)
    orders = order_robustness.ask_rotations(lambda shown: ask(shown)[:3], items, (hashes, answers, strict),
                                            option_orders, bootstrap_resamples, seed)  # fmt: skip
    robust = worded.ask_wordings(spec, language, wordings, lambda asked: exam_answers(
        items, ask(items, asked)[:3], bootstrap_resamples, seed), exam_answers(items, (hashes, answers, strict),
        bootstrap_resamples, seed))  # fmt: skip
    if orders is not None:
        answers = [{**a, order_robustness.FIELD: r} for a, r in zip(answers, orders.records, strict=True)]
    if robust is not None:
        answers = [{**a, worded.FIELD: r} for a, r in zip(answers, robust.records, strict=True)]
    elapsed = time.perf_counter() - started
    summary = score_answers(items, strict, lenient, bootstrap_resamples=bootstrap_resamples or None, seed=seed)
    rows = report.raw_output_rows(items, hashes, answers, strict, lenient)
    files = {"raw_outputs": report.write_jsonl(folder / report.RAW_OUTPUTS, rows)}
    tables = report.all_tables(items, strict, bootstrap_resamples, seed)
    described = dataset_description(dataset, spec.name, "test", items=len(items))
    title = f"{spec.name} · {base} · {language} prompt · {shots}-shot · {mode}"
    title += " · SAMPLE DATA" if described["is_sample"] else ""
    files.update(report.write_tables(folder, tables, title))
    if chart:
        overall = summary["accuracy_all_items"]
        files["chart"] = report.plot_domains(folder / report.CHART, tables["domain"], overall, title)
    gap, names = _gap_with_other_run(results_dir, base, spec, language, shots, mode, rows, bootstrap_resamples, seed,
                                     limit, option_orders, wordings)  # fmt: skip
    if gap is not None:
        files["prompt_gap"] = report.write_gap(folder, gap, names)
    details = {
        "n_items": summary["n_items"], "parseable_items": summary["parseable_items"],
        "invalid_percent": summary["invalid_percent"], "invalid_counts": summary["invalid_counts"],
        "invalid_categories": dict(INVALID_CATEGORIES), "tables": tables, "lenient": summary.get("lenient"),
        "prompt_language_gap": gap, "files": {k: str(p.relative_to(Path(results_dir))) for k, p in files.items()},
        **({order_robustness.SECTION: orders.section} if orders else {}),
        **({worded.SECTION: robust.section} if robust else {}),
    }  # fmt: skip
    result = RunResult(
        task=spec.name,
        model=model.name,
        kind=llm_kind(shots),
        metrics=_metrics(summary, extra),
        dataset=described,
        identity=identity,
        hyperparameters={**settings, "backend": model.describe().backend, "model": model.describe().to_dict()},
        seed=seed,
        timings={"model_seconds": round(elapsed, 3)},
        details=details,
        notes=(
            "accuracy_all_items counts an invalid output as wrong (the primary, an nlue convention); "
            "accuracy_parseable leaves invalid outputs out, as UrduMMLU's Table 4 appears to; the lenient parse "
            "(details.lenient) is a diagnostic and never enters these numbers."
        ),
    )
    item_rows = _prediction_rows(spec, items, strict, answers)
    add_wording_tests(result, spec, item_rows, bootstrap_resamples, seed)
    attach(result, item_rows, Path(results_dir), this_name)
    result_path = write_result(result, Path(results_dir), this_name, overwrite=overwrite)
    logger.info("%s: accuracy over all items %.4f on %d items", this_name, summary["accuracy_all_items"], len(items))
    return McqRun(result, result_path, folder, this_name, language, tables, files, gap)
