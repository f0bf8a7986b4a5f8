"""Where control texts come from: natural text the model cannot have read, cut to each item's length.

A control must be text the model has not seen, or a high score means nothing; and it must read like the
items, or any fluent model scores the items higher just for being better written. Three sources:

* ``sample`` (the default): nlue's own sample texts of the same task, all splits (written by the nlue
  developers for this kit, in the task's script and format), less any text that is also a probed item.
  They stand for "unseen" only for a model whose training data was gathered before they were published
  (docs/guides/memorisation.md says so); a task with no sample needs one of the others.
* a file (``--controls FILE``): a text file (one text a line) or JSON Lines (a ``text`` field) of texts
  the user knows the model has not read, such as text written after its training cut-off;
* ``shuffled``: each item's own words in another order (:func:`.controls.control_fields`). Unseen for
  certain, but no longer fluent: any trained model prefers the real order, so this is a floor, not a null.

A pool control for an item is the first pool text, in an order drawn from the item's own generator (seed,
task, id), that has at least the item's token count, cut to it; only where no pool text is that long are
texts joined, by a line break, until it is reached. So a control is one natural text where it can be, of
the item's length in tokens, and the same for every model and rerun.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nlue.errors import NlueError
from nlue.evals.contamination.measures import Item
from nlue.evals.memorisation.controls import item_text
from nlue.registry.spec import TaskSpec

SAMPLE, SHUFFLED = "sample", "shuffled"
MAX_POOL = 100_000  # texts read from a control file; the rest are left, and that is said
Pool = list[tuple[str, str]]  # (where the text is from, the text)


def sample_pool(task: TaskSpec, probed: Sequence[Item]) -> Pool:
    """Every split's sample texts of ``task`` (built as the items were), less those that are probed items."""
    from nlue.data.sample import sample_data_dir
    from nlue.evals.contamination.items import task_items

    if not (sample_data_dir() / task.name).is_dir():
        raise NlueError(f"task {task.name!r} has no embedded sample to draw controls from; give --controls FILE "
                        "(texts the model cannot have read) or --controls shuffled")  # fmt: skip
    taken = {item_text(item.texts) for item in probed}
    pool = []
    for split in task.splits:
        for item in task_items(SAMPLE, task, split):
            text = item_text(item.texts)
            if text and text not in taken:
                pool.append((f"sample:{task.name}/{split}/{item.id}", text))
    return pool


def file_pool(path: Path) -> Pool:
    """The texts of a control file (text lines, or JSON Lines with ``text``), at most :data:`MAX_POOL`."""
    import logging

    from nlue.evals.contamination.corpus import CorpusSpec, read_corpus

    if not path.is_file():
        raise NlueError(f"--controls {path}: no such file; give a text or JSON Lines file, 'sample' or 'shuffled'")
    pool = []
    for reference, text in read_corpus(CorpusSpec(str(path))):
        if len(pool) == MAX_POOL:
            logging.getLogger(__name__).warning("--controls %s: only its first %d texts are used", path, MAX_POOL)
            break
        if text.strip():
            pool.append((reference, text.strip()))
    if not pool:
        raise NlueError(f"--controls {path}: no text in it")
    return pool


def in_script_share(pool: Pool, script: str) -> float | None:
    """The share of pool texts most of whose letters are in ``script`` (character ranges, as a language profile
    declares them); None for a profile with no script of its own."""
    if not script or not pool:
        return None
    inside = re.compile(f"[{script}]")

    def mostly_in(text: str) -> bool:
        letters = [c for c in text if c.isalpha()]
        return bool(letters) and sum(bool(inside.match(c)) for c in letters) * 2 > len(letters)

    return sum(mostly_in(text) for _, text in pool) / len(pool)


def pool_control(
    pool_tokens: Sequence[Sequence[int]], joiner: Sequence[int], length: int, rng: np.random.Generator
) -> tuple[list[int], list[int]]:
    """(tokens, pool indices used) of a control of ``length`` tokens: the first pool text, in a drawn order, that
    is as long, cut there; where none is, pool texts in that order joined by ``joiner`` until it is long enough."""
    order = [int(i) for i in rng.permutation(len(pool_tokens)) if pool_tokens[i]]
    for index in order:
        if len(pool_tokens[index]) >= length:
            return list(pool_tokens[index][:length]), [index]
    tokens: list[int] = []
    used: list[int] = []
    while order and len(tokens) < length:
        for index in order:
            tokens += [*(joiner if tokens else []), *pool_tokens[index]]
            used.append(index)
            if len(tokens) >= length:
                break
    return tokens[:length], used
