"""How each task's fields become the text, or text pair, a sequence classifier reads.

One definition shared by the trainers, the evaluator and the Space:

* single-sentence tasks (sa, cola): the text alone;
* pair tasks: the two fields as a tokenizer text pair, in registry order;
* qadsm: the query, paired with the ad title and description joined by a danda;
* wg: a cross-encoder over both readings: the sentence with the blank filled by
  option 1, paired with the sentence filled by option 2; label 0 means the first
  reading is right. Any sequence classifier can learn it, and no multiple-choice
  head is needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlue.registry.tasks import WG_BLANK, TaskSpec

AD_JOINER = "। "


def text_pair(task: TaskSpec, example: Mapping[str, Any]) -> tuple[str, str | None]:
    """The (first, second) texts of one example; second is None for single-sentence tasks."""
    if task.problem_type == "mask_fill":
        raise ValueError("gmet is a zero-shot mask-filling task; it has no classifier input")
    if task.name == "wg":
        sentence = example["sentence"]
        return sentence.replace(WG_BLANK, example["option1"], 1), sentence.replace(WG_BLANK, example["option2"], 1)
    if task.name == "qadsm":
        return example["query"], f"{example['ad_title']}{AD_JOINER}{example['ad_description']}"
    fields = task.input_fields
    if len(fields) == 1:
        return example[fields[0]], None
    return example[fields[0]], example[fields[1]]


def batch_text_pairs(task: TaskSpec, batch: Mapping[str, Sequence[Any]]) -> tuple[list[str], list[str] | None]:
    """Column-wise version of :func:`text_pair` for ``datasets.map(batched=True)``."""
    size = len(next(iter(batch.values())))
    pairs = [text_pair(task, {k: v[i] for k, v in batch.items()}) for i in range(size)]
    firsts = [a for a, _ in pairs]
    if all(b is None for _, b in pairs):
        return firsts, None
    return firsts, [b or "" for _, b in pairs]
