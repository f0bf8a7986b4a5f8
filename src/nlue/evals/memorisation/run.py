"""One task through the probes: each item and its control scored in one pass, exam questions completed.

Controls come from a pool of natural unseen text (:mod:`.control_pools`) or, with ``shuffled``, from the
item's own words (:mod:`.controls`).

:func:`probe_task` returns the task's entry of the memorisation file (:mod:`.probes_file`): per-item scores,
the exam completions where the task is an exam, and the summaries made from them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nlue.evals.contamination.measures import Item
from nlue.evals.memorisation.completion import completion_records, halves, requests
from nlue.evals.memorisation.control_pools import SHUFFLED, Pool, pool_control
from nlue.evals.memorisation.controls import DEFAULT_MIN_WORDS, control_fields, item_rng, item_text, word_count
from nlue.evals.memorisation.forward import encode, score_token_lists
from nlue.evals.memorisation.minkpp import DEFAULT_K, MEASURES
from nlue.evals.memorisation.summary import DEFAULT_RESAMPLES, DEFAULT_SEED, completion_summary, task_summary
from nlue.registry.spec import TaskSpec

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProbeSettings:
    """What changes the probes' numbers (written to the file's ``settings``)."""

    k: float = field(default=DEFAULT_K, metadata={"help": "percent of a text's lowest-scoring tokens averaged"})
    seed: int = field(default=DEFAULT_SEED, metadata={"help": "controls' shuffles, control partners, resampling"})
    min_words: int = field(default=DEFAULT_MIN_WORDS,
                           metadata={"help": "an item of fewer words gets no control and is not compared"})  # fmt: skip
    bootstrap_resamples: int = field(default=DEFAULT_RESAMPLES,
                                     metadata={"help": "resamples of the AUC's 95%% interval; 0 for none"})  # fmt: skip


def _controls(model: Any, items: Sequence[Item], token_lists: Sequence[list[int]], pool: Pool | None,
              settings: ProbeSettings) -> tuple[list[list[int]], list[list[str]]]:  # fmt: skip
    """Each item's control tokens and where they came from (empty: the item gets no control)."""
    tokenizer = model.tokenizer
    controls: list[list[int]] = []
    sources: list[list[str]] = []
    pool_tokens = [encode(tokenizer, text) for _, text in pool] if pool else []
    joiner = encode(tokenizer, "\n")
    for item, tokens in zip(items, token_lists, strict=True):
        rng = item_rng(settings.seed, item.task, item.id)
        if word_count(item.texts) < settings.min_words:
            controls.append([])
            sources.append([])
        elif pool is None:
            shuffled = control_fields(item.texts, rng)
            controls.append(encode(tokenizer, item_text(shuffled))[: len(tokens)] if shuffled else [])
            sources.append([SHUFFLED] if shuffled else [])
        else:
            control, used = pool_control(pool_tokens, joiner, len(tokens), rng)
            controls.append(control)
            sources.append([pool[i][0] for i in used] if control else [])
    return controls, sources


def _item_records(model: Any, items: Sequence[Item], pool: Pool | None, settings: ProbeSettings,
                  batch_size: int, show_progress: bool) -> list[dict[str, Any]]:  # fmt: skip
    token_lists = [encode(model.tokenizer, item_text(item.texts)) for item in items]
    controls, sources = _controls(model, items, token_lists, pool, settings)
    scores = score_token_lists(model.model, model.tokenizer, [*token_lists, *controls], k=settings.k,
                               batch_size=batch_size, max_length=model.max_length,
                               show_progress=show_progress)  # fmt: skip
    records = []
    for n, item in enumerate(items):
        own, control = scores[n], scores[len(items) + n]
        record: dict[str, Any] = {"id": item.id, "input_sha256": item.input_sha256, "tokens": len(token_lists[n]),
                                  "control_tokens": len(controls[n]) if control else None,
                                  "control_from": sources[n] if control else []}  # fmt: skip
        for measure in MEASURES:
            record[measure] = None if own is None else round(own[measure], 6)
            record[f"{measure}_control"] = None if control is None or own is None else round(control[measure], 6)
        records.append(record)
    return records


def _completion(model: Any, task: TaskSpec, items: Sequence[Item], seed: int) -> dict[str, Any]:
    from nlue.text.profiles import profile_of

    questions = [item.texts[0] if item.texts else "" for item in items]  # an exam's first field is its question
    splits = [halves(q) for q in questions]
    asked = requests(splits, lambda text: len(encode(model.tokenizer, text)))
    generated = [g.text for g in model.generate(asked)] if asked else []
    records = completion_records([item.id for item in items], questions, generated, profile_of(task).normalizer(),
                                 seed)  # fmt: skip
    return {"summary": completion_summary(records), "items": records}


def probe_task(model: Any, task: TaskSpec, items: Sequence[Item], pool: Pool | None, settings: ProbeSettings, *,
               exam: bool, batch_size: int = 8, show_progress: bool = False) -> dict[str, Any]:  # fmt: skip
    """The task's entry of the memorisation file: Min-K%++ (and Min-K%, mean log p) of each item and its
    control (from ``pool``; None: the item's words shuffled), and, for an exam (``exam``), the completion of
    each question from its first half."""
    if pool is not None and not pool:
        logger.warning("%s: no sample text is left to draw controls from (every one is a probed item): probe "
                       "fewer items (--limit) or give --controls", task.name)  # fmt: skip
    records = _item_records(model, items, pool, settings, batch_size, show_progress)
    summary = task_summary(records, settings.bootstrap_resamples, settings.seed)
    if summary["no_control"]:
        logger.warning("%s: %d of %d items got no control (fewer than %d words, or none to draw from); they are "
                       "scored but left out of the comparison", task.name, summary["no_control"], len(records),
                       settings.min_words)  # fmt: skip
    completion = _completion(model, task, items, settings.seed) if exam else None
    return {"summary": summary, "items": records, "completion": completion}
