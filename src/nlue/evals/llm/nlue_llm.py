"""The NLUE classification tasks put to a causal language model, scored by log-likelihood.

No anchor paper scores LLMs on NLUE; this is nlue's own protocol, built to agree with
lm-evaluation-harness's ``multiple_choice`` tasks (the export in
:mod:`nlue.evals.export.lm_eval` renders the very same strings):

* the prompt is the task kind's Jinja template (:meth:`~nlue.registry.kinds.TaskKind.llm_template`)
  in English or Nepali, each label verbalised in that language (the registry's
  ``prompts``), and each label word is a continuation ``" " + word`` of the prompt;
* the prediction is the label whose continuation has the highest summed log-probability;
  ``acc_norm_chars`` divides by the label word's length in characters (lm-eval's
  ``acc_norm``), ``acc_norm_bytes`` by its UTF-8 length (a Devanagari letter is 3 bytes, so
  the two normalisations rank Nepali and English words differently);
* k-shot: k demonstrations from the train split, drawn once per run with the seed, each
  the rendered prompt followed by its gold label word, joined by a blank line before the
  item (lm-eval draws its own demonstrations, so only zero-shot is compared with it).

Reported per task: ``accuracy`` and ``macro_f1`` of the raw prediction (with bootstrap
intervals, macro-F1 is the primary as for every classification task), and the two
normalised accuracies.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np

from nlue.errors import NlueError
from nlue.evals.verify import add_wording_tests
from nlue.lm.base import LanguageModel, LoglikelihoodRequest
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)

TARGET_DELIMITER = " "
FEWSHOT_DELIMITER = "\n\n"


@lru_cache(maxsize=64)
def _template(source: str) -> Any:
    import jinja2

    # lm-eval renders doc_to_text with Jinja too; keep its defaults (no autoescape) so the strings agree.
    return jinja2.Environment(keep_trailing_newline=False).from_string(source)


def render_prompt(task: TaskSpec, example: Mapping[str, Any], language: str) -> str:
    """The prompt of one item, as the kind's template renders it."""
    source, _ = task.kind.llm_template(task, language)
    return _template(source).render(**example)


def demonstrations(task: TaskSpec, pool: Sequence[Mapping[str, Any]], language: str, shots: int, seed: int) -> str:
    """``shots`` solved examples from ``pool`` (drawn with ``seed``), ready to precede an item's prompt."""
    if shots <= 0:
        return ""
    if shots > len(pool):
        raise NlueError(f"{task.name}: {shots} shots asked, but the demonstration pool has {len(pool)} items")
    chosen = random.Random(seed).sample(range(len(pool)), shots)
    blocks = [render_prompt(task, pool[i], language) + TARGET_DELIMITER + answer_text(task, pool[i], language)
              for i in chosen]  # fmt: skip
    return FEWSHOT_DELIMITER.join(blocks) + FEWSHOT_DELIMITER


def answer_text(task: TaskSpec, item: Mapping[str, Any], language: str) -> str:
    """A solved example's answer: its label word, or its score written in the prompt language's digits."""
    gold = item[str(task.label_field)]
    if task.kind.has_classes:
        _, words = task.kind.llm_template(task, language)
        return words[int(gold)]
    from nlue.evals.llm.number_generation import number_text

    return number_text(float(gold), language)


@dataclass(frozen=True)
class LabelScores:
    """Every item's log-likelihood of each label word, and what that predicts."""

    choices: tuple[str, ...]
    loglikelihoods: np.ndarray  # (items, labels)

    @property
    def predictions(self) -> np.ndarray:
        return self.loglikelihoods.argmax(axis=1)

    def normalised_predictions(self, unit: str) -> np.ndarray:
        sizes = [len(c) if unit == "chars" else len(c.encode("utf-8")) for c in self.choices]
        return (self.loglikelihoods / np.asarray(sizes, dtype=np.float64)).argmax(axis=1)


def score_labels(
    model: LanguageModel,
    task: TaskSpec,
    items: Sequence[Mapping[str, Any]],
    language: str,
    shots: int = 0,
    pool: Sequence[Mapping[str, Any]] = (),
    seed: int = 42,
) -> LabelScores:
    """Ask ``model`` for the log-likelihood of every label word after every item's prompt."""
    _, words = task.kind.llm_template(task, language)
    prefix = demonstrations(task, pool, language, shots, seed)
    requests = [
        LoglikelihoodRequest(prefix + render_prompt(task, item, language), TARGET_DELIMITER + word)
        for item in items
        for word in words
    ]
    answers = model.loglikelihood(requests)
    values = np.array([a.logprob for a in answers], dtype=np.float64).reshape(len(items), len(words))
    return LabelScores(tuple(words), values)


def _ask_loglik(model: LanguageModel, task: TaskSpec, *, items: list[Any], golds: Sequence[int], language: str,
                shots: int, pool: Sequence[Any], seed: int, bootstrap_resamples: int | None) -> tuple[LabelScores, Any]:  # fmt: skip
    """Every item put to ``model`` as ``task``'s prompt words it, scored; and the same as one wording's answers
    (:class:`nlue.evals.llm.wordings.Asked`, per item the label words' log-likelihoods beside the prediction)."""
    from nlue.evals.llm.wordings import Asked

    scores = score_labels(model, task, items, language, shots, pool, seed)
    metrics = task_metrics(task, scores, golds, bootstrap_resamples, seed)
    extras = [{"loglikelihoods": dict(zip(scores.choices, np.round(row, 5).tolist(), strict=True))}
              for row in scores.loglikelihoods]  # fmt: skip
    return scores, Asked(metrics, scores.predictions.tolist(), extras)


def task_metrics(
    task: TaskSpec, scores: LabelScores, references: Sequence[int], bootstrap_resamples: int | None, seed: int
) -> dict[str, float]:
    """accuracy and macro-F1 of the raw prediction (with intervals) and the two normalised accuracies."""
    from nlue.scores import score_task

    references = np.asarray(references, dtype=np.int64)
    metrics = score_task(
        task.name, scores.predictions, references, bootstrap_resamples=bootstrap_resamples or None, seed=seed
    )
    for unit in ("chars", "bytes"):
        metrics[f"acc_norm_{unit}"] = float((scores.normalised_predictions(unit) == references).mean())
    return {k: float(v) for k, v in metrics.items()}


def llm_kind(shots: int) -> str:
    """The results kind of an LLM run: zero-shot, or few-shot (k > 0); both evaluate without fine-tuning."""
    return "zero-shot" if shots == 0 else "few-shot"


def task_splits(dataset: str | None, task: TaskSpec, shots: int, limit: int | None) -> tuple[Any, list[Any]]:
    """The test split (its first ``limit`` items) and, for k-shot prompts, the train split as the pool."""
    test, pool, _ = task_data(dataset, task, shots, limit)
    return test, pool


def task_data(dataset: str | None, task: TaskSpec, shots: int, limit: int | None) -> tuple[Any, list[Any], Any]:
    """:func:`task_splits` and the facts a run's identity records (:func:`nlue.run_identity.split_facts`)."""
    from nlue.data.access import load_task
    from nlue.run_identity import split_facts

    data = load_task(dataset, task)
    whole = data["test"]
    test = whole if limit is None else whole.select(range(min(limit, whole.num_rows)))
    pool = list(data["train"]) if shots and "train" in data else []
    return test, pool, split_facts(whole, test.num_rows, pool)


def llm_run_identity(model: LanguageModel, task: TaskSpec, facts: Any, mode: str, language: str, shots: int,
                     limit: int | None, seed: int, **settings: Any) -> dict[str, Any]:  # fmt: skip
    """The identity of an LLM run on an NLUE task (:mod:`nlue.run_identity`)."""
    from nlue.run_identity import model_run_identity

    return model_run_identity(model, task.name, facts, mode=mode, shots=shots, prompt_language=language,
                              limit=limit, seed=seed, settings=settings)  # fmt: skip


def asked_by_llm_nlue(task: TaskSpec) -> bool:
    """The tasks `nlue llm nlue` asks: those with prompts whose kind puts one item to a model and reads one label
    word or one number (classification and regression, of NLUE or a task file; exams and idioms have their own
    commands)."""
    return bool(task.prompts) and task.kind.trainable


def native_language(tasks: Sequence[str] | None) -> str:
    """The prompt language ``native`` stands for: the tasks' own (their first language), Nepali for NLUE's.

    Tasks of several languages in one call are refused: one run folder holds one prompt language.
    """
    from nlue.registry.tasks import get_task

    if not tasks:
        return "ne"
    own = {name: get_task(name).languages[0] for name in tasks}
    if len(set(own.values())) > 1:
        listed = ", ".join(f"{name} ({code})" for name, code in own.items())
        raise NlueError(f"the tasks are in several languages ({listed}); --prompt-language native or both asks "
                        "each in its own: run the tasks of each language in a call of their own")  # fmt: skip
    return next(iter(own.values()))


def nlue_tasks(
    tasks: Sequence[str] | None, language: str, mode: str | None = None, *, warn: bool = True
) -> list[TaskSpec]:
    """The tasks to run (default: every task with prompts in ``language``); a clear error for what cannot run.

    With ``mode="loglik"``, a task that is not scored by log-likelihood (STS-B: its answer is a
    number, not one of a few label words) is left out with a warning that names it and says
    how to score it (``warn=False`` for the second prompt language of one run); when nothing is
    left, that is an error.
    """
    from nlue.registry.kinds import CAUSAL_LM_LOGLIKELIHOOD
    from nlue.registry.tasks import TASK_NAMES, get_task

    chosen = [get_task(t) for t in (tasks or TASK_NAMES)]
    if tasks:
        without = [t.name for t in chosen if language not in t.prompts]
        if without:
            raise NlueError(f"no {language!r} prompt for {', '.join(without)}: only classification tasks are asked")
    chosen = [t for t in chosen if t.prompts and language in t.prompts]
    if not chosen:
        raise NlueError("none of the tasks has a prompt for language models (NLUE's classification tasks do)")
    if mode == "loglik":
        left_out = [t for t in chosen if CAUSAL_LM_LOGLIKELIHOOD not in t.kind.evaluators]
        for task in left_out if warn else ():
            logger.warning("%s is not scored in loglik mode: its answer is %s, not one of a few label words to "
                           "score; --mode generate scores it (the model writes the number, a strict parser reads "
                           "it)", task.name, task.kind.describe_output(task))  # fmt: skip
        chosen = [t for t in chosen if t not in left_out]
        if not chosen:
            raise NlueError(f"{', '.join(t.name for t in left_out)}: not scored by log-likelihood; use --mode generate")
    return chosen


def run_nlue_llm(
    model: LanguageModel,
    dataset: str | None,
    tasks: Sequence[TaskSpec],
    language: str,
    shots: int,
    results_dir: Any,
    name: str,
    bootstrap_resamples: int = 1000,
    seed: int = 42,
    limit: int | None = None,
    overwrite: bool = False,
    wordings: str = "main",
) -> dict[str, Any]:
    """Score ``model`` on the NLUE classification ``tasks`` by log-likelihood; one results file per task.

    A results file of another identity, or a complete one where this run is partial, is refused before
    the task's first request unless ``overwrite`` (:func:`nlue.results.check_replace`). ``wordings="all"``
    also asks every other wording of the prompt (:mod:`nlue.evals.llm.wordings`).
    """
    from pathlib import Path

    from nlue.data.access import dataset_description
    from nlue.evals.llm import wordings as worded
    from nlue.predictions import attach, prediction_rows
    from nlue.results import RunResult, check_replace, task_result_path, write_result

    results: dict[str, RunResult] = {}
    for task in tasks:
        test, pool, facts = task_data(dataset, task, shots, limit)
        identity = llm_run_identity(model, task, facts, "loglik", language, shots, limit, seed,
                                    bootstrap_resamples=bootstrap_resamples,
                                    **worded.identity_settings(task, language, wordings))  # fmt: skip
        check_replace(task_result_path(results_dir, name, task.name), identity, overwrite=overwrite)
        golds = test[str(task.label_field)]

        ask = partial(_ask_loglik, model, items=list(test), golds=golds, language=language, shots=shots, pool=pool,
                      seed=seed, bootstrap_resamples=bootstrap_resamples)  # fmt: skip
        scores, own = ask(task)
        metrics = dict(own.metrics)
        robust = worded.ask_wordings(task, language, wordings, lambda asked, ask=ask: ask(asked)[1], own)
        result = RunResult(
            task=task.name,
            model=model.name,
            kind=llm_kind(shots),
            metrics=metrics,
            dataset=dataset_description(dataset, task.name, "test", items=test.num_rows),
            identity=identity,
            hyperparameters={
                "mode": "loglik",
                "evaluation": "causal-LM log-likelihood of each verbalised label",
                "prompt_language": language,
                "shots": shots,
                "label_words": list(scores.choices),
                "model": model.describe().to_dict(),
            },
            seed=seed,
            notes=(
                "nlue's own LLM protocol (the NLUE paper prompts no LLM); macro_f1 and accuracy from the raw "
                "log-likelihood argmax, acc_norm_chars/acc_norm_bytes normalised by the label word's length."
            ),
            **({"details": {worded.SECTION: robust.section}} if robust else {}),
        )
        extras = [dict(e) for e in own.extras]
        for extra, record in zip(extras, robust.records if robust else (), strict=False):
            extra[worded.FIELD] = record
        rows = prediction_rows(task, list(test), scores.predictions.tolist(), golds, extras)
        add_wording_tests(result, task, rows, bootstrap_resamples, seed)
        attach(result, rows, Path(results_dir), name)
        write_result(result, Path(results_dir), name, overwrite=overwrite)
        results[task.name] = result
        logger.info("%s: macro_f1 %.4f on %d items", task.name, metrics["macro_f1"], test.num_rows)
    return results
