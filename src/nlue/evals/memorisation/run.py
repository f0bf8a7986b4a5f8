"""One task through the probes: each item and its control scored in one pass, exam questions completed.

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
                           metadata={"help": "an item needs this many words to get a shuffled control"})  # fmt: skip
    bootstrap_resamples: int = field(default=DEFAULT_RESAMPLES,
                                     metadata={"help": "resamples of the AUC's 95%% interval; 0 for none"})  # fmt: skip


def _item_records(model: Any, items: Sequence[Item], settings: ProbeSettings, max_length: int,
                  batch_size: int, show_progress: bool) -> list[dict[str, Any]]:  # fmt: skip
    tokenizer = model.tokenizer
    token_lists: list[list[int]] = []
    controls: list[list[int]] = []
    for item in items:
        tokens = encode(tokenizer, item_text(item.texts))
        shuffled = None
        if word_count(item.texts) >= settings.min_words:
            shuffled = control_fields(item.texts, item_rng(settings.seed, item.task, item.id))
        control = encode(tokenizer, item_text(shuffled))[: len(tokens)] if shuffled else []
        token_lists.append(tokens)
        controls.append(control)
    scores = score_token_lists(model.model, tokenizer, [*token_lists, *controls], k=settings.k,
                               batch_size=batch_size, max_length=max_length, show_progress=show_progress)  # fmt: skip
    records = []
    for n, item in enumerate(items):
        own, control = scores[n], scores[len(items) + n]
        record: dict[str, Any] = {"id": item.id, "input_sha256": item.input_sha256, "tokens": len(token_lists[n]),
                                  "control_tokens": len(controls[n]) if control else None}  # fmt: skip
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


def probe_task(model: Any, task: TaskSpec, items: Sequence[Item], settings: ProbeSettings, *, exam: bool,
               batch_size: int = 8, show_progress: bool = False) -> dict[str, Any]:  # fmt: skip
    """The task's entry of the memorisation file: Min-K%++ (and Min-K%, mean log p) of each item and its
    control, and, for an exam (``exam``), the completion of each question from its first half."""
    records = _item_records(model, items, settings, model.max_length, batch_size, show_progress)
    summary = task_summary(records, settings.bootstrap_resamples, settings.seed)
    if summary["no_control"]:
        logger.warning("%s: %d of %d items have fewer than %d words (or one word only) and get no control; they "
                       "are scored but left out of the comparison", task.name, summary["no_control"], len(records),
                       settings.min_words)  # fmt: skip
    completion = _completion(model, task, items, settings.seed) if exam else None
    return {"summary": summary, "items": records, "completion": completion}
