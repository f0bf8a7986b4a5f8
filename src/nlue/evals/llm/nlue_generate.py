"""The NLUE tasks put to a language model by generation (``nlue llm nlue --mode generate``).

Each item's prompt is the log-likelihood prompt of :mod:`nlue.evals.llm.nlue_llm` with the line
listing the label words before its cue (:mod:`nlue.evals.llm.label_generation`); k-shot prompts
start with the same demonstrations (each a solved prompt and its label word). The model writes
an answer, the strict parser reads it, and the scores are those of
:func:`nlue.evals.llm.label_generation.label_scores`. STS-B, whose answer is a similarity score, gets
a line asking for one number instead, and a strict number parser and correlations over the
parsed answers (:mod:`nlue.evals.llm.number_generation`). Per task this writes the shared results
file (``hyperparameters.mode`` = ``generate``) and ``<task>/raw_outputs.jsonl`` beside it: one
line per item, the gold label written last.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from nlue.evals.llm import label_generation as gen
from nlue.evals.llm import number_generation as num
from nlue.evals.llm.nlue_llm import demonstrations, llm_kind, llm_run_identity, render_prompt, task_data
from nlue.evals.verify import add_wording_tests
from nlue.lm.base import LanguageModel

logger = logging.getLogger(__name__)

RAW_OUTPUTS = "raw_outputs.jsonl"
NOTES = (
    "nlue's own generation protocol (the NLUE paper prompts no LLM): the model writes one of the label words; "
    "macro_f1 (the primary) and accuracy_all_items count an invalid answer as wrong, *_parseable leave invalid "
    "answers out; the lenient parse (details.lenient) is a diagnostic and never enters these numbers."
)
NUMBER_NOTES = (
    "nlue's own generation protocol (the NLUE paper prompts no LLM): the model writes one number in the score "
    f"range; {num.INVALID_POLICY}; the lenient parse (details.lenient) is a diagnostic and never enters these numbers."
)


@dataclass(frozen=True)
class _Scored:
    """One task's answers read and scored, whichever way its answer is written (a label word or a number)."""

    metrics: dict[str, float]
    predictions: list[Any]  # label ids or scores; None for an invalid answer
    rows: list[dict[str, Any]]  # the raw-output rows
    extras: list[dict[str, Any]]  # per item, for the predictions file
    answer: dict[str, Any]  # what the model was asked to write (hyperparameters)
    details: dict[str, Any]
    notes: str
    headline: str  # the log line


def _label_answers(task: Any, items: list[Any], prompts: list[str], outputs: list[Any], words: Sequence[str],
                   bootstrap_resamples: int, seed: int) -> _Scored:  # fmt: skip
    references = [int(item[str(task.label_field)]) for item in items]  # read only now, to score
    ids = [item.get("idx", i) for i, item in enumerate(items)]
    strict, lenient, rows = gen.answer_rows(ids, prompts, outputs, words, references)
    metrics = gen.label_scores(strict, references, len(words), bootstrap_resamples or None, seed)
    extras = [{"output": r["output"], "verdict": r["verdict"], "category": r["strict"]["category"]} for r in rows]
    details = {"invalid_categories": dict(gen.INVALID_CATEGORIES), "lenient": gen.lenient_summary(lenient, references)}
    return _Scored(metrics, [p.label for p in strict], rows, extras, {"label_words": list(words)}, details, NOTES,
                   f"macro_f1 {metrics['macro_f1']:.4f}")  # fmt: skip


def _number_answers(task: Any, items: list[Any], prompts: list[str], outputs: list[Any], bootstrap_resamples: int,
                    seed: int) -> _Scored:  # fmt: skip
    references = [float(item[str(task.label_field)]) for item in items]  # read only now, to score
    ids = [item.get("idx", i) for i, item in enumerate(items)]
    strict, lenient, rows = num.number_answer_rows(ids, prompts, outputs, task.score_range, references)
    metrics, undefined = num.number_scores(task.name, strict, references, bootstrap_resamples or None, seed)
    extras = [{"output": r["output"], "verdict": r["verdict"], "category": r["strict"]["category"]} for r in rows]
    details = {"invalid_categories": dict(num.INVALID_CATEGORIES), "invalid_answers": num.INVALID_POLICY,
               "lenient": num.lenient_number_summary(lenient, references), "undefined_metrics": undefined,
               "null_metrics": undefined}  # the reason each null metric keeps (nlue.results), not a family's guess  # fmt: skip
    answer = {"answer": "one number", "score_range": list(task.score_range)}
    return _Scored(metrics, [p.value for p in strict], rows, extras, answer, details, NUMBER_NOTES,
                   f"{task.primary_metric} {metrics[task.primary_metric]:.4f} over the parseable answers")  # fmt: skip


def generation_prompts(task: Any, items: Sequence[Any], pool: Sequence[Any], language: str, shots: int,
                       seed: int) -> list[str]:  # fmt: skip
    """Each item's prompt by generation: demonstrations, the item as ``task``'s prompt words it, then the line
    that asks for one label word (or a number on the task's scale)."""
    _, words = task.kind.llm_template(task, language)
    prefix = demonstrations(task, pool, language, shots, seed)
    return [
        gen.with_answer_line(prefix + render_prompt(task, item, language), words, language, task.answer_line(language))
        if task.kind.has_classes
        else num.with_number_line(
            prefix + render_prompt(task, item, language), task.score_range, language, task.number_line(language)
        )
        for item in items
    ]


def _ask(model: LanguageModel, task: Any, items: list[Any], pool: list[Any], language: str, shots: int, chat: bool,
         max_new_tokens: int, bootstrap_resamples: int, seed: int) -> _Scored:  # fmt: skip
    """Every item put to ``model`` as ``task``'s prompt words it, the answers read and scored."""
    _, words = task.kind.llm_template(task, language)
    prompts = generation_prompts(task, items, pool, language, shots, seed)
    outputs = model.generate([gen.label_request(p, chat, max_new_tokens) for p in prompts])
    gen.require_answers(outputs, task.name)
    if task.kind.has_classes:
        return _label_answers(task, items, prompts, outputs, words, bootstrap_resamples, seed)
    return _number_answers(task, items, prompts, outputs, bootstrap_resamples, seed)


def _asked(scored: _Scored) -> Any:
    """One wording's answers as :mod:`nlue.evals.llm.wordings` keeps them."""
    from nlue.evals.llm.wordings import Asked

    return Asked(scored.metrics, scored.predictions, scored.extras)


def run_nlue_generation(
    model: LanguageModel,
    dataset: str | None,
    tasks: Sequence[Any],
    language: str,
    shots: int,
    results_dir: Path,
    name: str,
    *,
    chat: bool,
    max_new_tokens: int = gen.DEFAULT_LABEL_TOKENS,
    bootstrap_resamples: int = 1000,
    seed: int = 42,
    limit: int | None = None,
    overwrite: bool = False,
    wordings: str = "main",
) -> dict[str, Any]:
    """Ask ``model`` for a label of every test item of each task; write the results and raw outputs per task.

    A results file this run may not replace is refused before the task's first request (``overwrite``: replace it).
    ``wordings="all"`` also asks every other wording of the prompt (:mod:`nlue.evals.llm.wordings`).
    """
    from nlue.data.access import dataset_description
    from nlue.evals.llm import wordings as worded
    from nlue.predictions import attach, prediction_rows
    from nlue.results import RunResult, check_replace, task_result_path, write_result

    results: dict[str, RunResult] = {}
    for task in tasks:
        test, pool, facts = task_data(dataset, task, shots, limit)
        identity = llm_run_identity(model, task, facts, "generate", language, shots, limit, seed, chat=chat,
                                    max_new_tokens=max_new_tokens, bootstrap_resamples=bootstrap_resamples,
                                    **worded.identity_settings(task, language, wordings))  # fmt: skip
        check_replace(task_result_path(results_dir, name, task.name), identity, overwrite=overwrite)
        items = list(test)

        ask = partial(_ask, model, items=items, pool=pool, language=language, shots=shots, chat=chat,
                      max_new_tokens=max_new_tokens, bootstrap_resamples=bootstrap_resamples, seed=seed)  # fmt: skip
        scored = ask(task)
        robust = worded.ask_wordings(
            task, language, wordings, lambda asked, ask=ask: _asked(ask(asked)), _asked(scored)
        )
        metrics, rows = scored.metrics, scored.rows
        raw = gen.write_rows(Path(results_dir) / name / task.name / RAW_OUTPUTS, rows)
        result = RunResult(
            task=task.name,
            model=model.name,
            kind=llm_kind(shots),
            metrics=metrics,
            dataset=dataset_description(dataset, task.name, "test", items=len(items)),
            identity=identity,
            hyperparameters={
                "mode": "generate",
                "evaluation": f"generation of {'one label word' if task.kind.has_classes else 'one number'}, "
                "strict parsing",
                "prompt_language": language,
                "shots": shots,
                **scored.answer,
                "chat": chat,
                "decoding": "greedy",
                "max_new_tokens": max_new_tokens,
                "stop": [] if chat else list(gen.PLAIN_STOP),
                "model": model.describe().to_dict(),
            },
            seed=seed,
            details={
                **scored.details,
                "files": {"raw_outputs": str(raw.relative_to(Path(results_dir)))},
                **({worded.SECTION: robust.section} if robust else {}),
            },
            notes=scored.notes,
        )
        references = [task.kind.gold(task, item) for item in items]
        extras = [dict(e) for e in scored.extras]
        for extra, record in zip(extras, robust.records if robust else (), strict=False):
            extra[worded.FIELD] = record
        item_rows = prediction_rows(task, items, scored.predictions, references, extras)
        add_wording_tests(result, task, item_rows, bootstrap_resamples, seed)
        attach(result, item_rows, Path(results_dir), name)
        write_result(result, Path(results_dir), name, overwrite=overwrite)
        results[task.name] = result
        logger.info("%s: %s, invalid %.1f%% on %d items", task.name, scored.headline, 100 * metrics["invalid_rate"],
                    len(items))  # fmt: skip
    return results
