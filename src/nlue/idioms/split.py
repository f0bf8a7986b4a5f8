"""Drawing neDIOM's few-shot pool: ``per_label`` items of each label over whole idioms, the rest test.

The paper fine-tuned on 10 or 20 items (5 or 10 per label) and tested on the rest, without
saying how the items were chosen or whether an idiom could be in both. Our rule:

* idioms, not items, are drawn: an idiom's contexts all go to the pool or all to test, so
  a few-shot model is never tested on an idiom it was trained on;
* the idioms are put in a seeded random order and taken greedily while neither label goes
  past ``per_label``; if that pass does not fill both labels exactly, further seeded orders
  are tried (up to :data:`MAX_ATTEMPTS`), then an error says why;
* the pool keeps the draw's order, so the first ``k`` items of each label in it are the
  k-shot set for any smaller ``k`` (the 5-shot set is nested in the 10-shot set);
* test keeps the input's order. The same items and seed give the same split.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.registry.kinds.idiomaticity import parse_idiom_label
from nlue.text.normalize import normalize_text

MAX_ATTEMPTS = 1000


def _label_id(item: Mapping[str, Any], number: int) -> int:
    label = parse_idiom_label(item.get("label"))
    if isinstance(label, str):
        raise NlueError(f"item {number} ({item.get('id', 'no id')}): label {item.get('label')!r}: {label}")
    return label


def draw_pool(
    items: Sequence[Mapping[str, Any]], per_label: int = 10, seed: int = 42
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pool, test) by the module docstring's rule."""
    if per_label < 1:
        raise NlueError(f"--per-label must be at least 1, got {per_label}")
    by_idiom: dict[str, list[int]] = {}
    labels = [_label_id(item, n) for n, item in enumerate(items, start=1)]
    for index, item in enumerate(items):
        by_idiom.setdefault(normalize_text(str(item.get("idiom") or "")), []).append(index)
    totals = [labels.count(0), labels.count(1)]
    if min(totals) < per_label:
        raise NlueError(
            f"the pool needs {per_label} items per label; the items have {totals[0]} idiomatic and {totals[1]} literal"
        )
    names = sorted(by_idiom)
    rng = random.Random(seed)
    for _ in range(MAX_ATTEMPTS):
        rng.shuffle(names)
        counts, chosen = [0, 0], []
        for name in names:
            adds = [sum(1 for i in by_idiom[name] if labels[i] == label) for label in (0, 1)]
            if all(counts[label] + adds[label] <= per_label for label in (0, 1)):
                chosen.append(name)
                counts = [counts[label] + adds[label] for label in (0, 1)]
            if counts == [per_label, per_label]:
                pool_indices = [i for name in chosen for i in by_idiom[name]]
                taken = set(pool_indices)
                pool = [dict(items[i]) for i in pool_indices]
                test = [dict(item) for i, item in enumerate(items) if i not in taken]
                return pool, test
    raise NlueError(
        f"cannot draw exactly {per_label} idiomatic and {per_label} literal items from whole idioms in "
        f"{MAX_ATTEMPTS} seeded orders; the idioms' contexts are too unevenly labelled (try another --per-label)"
    )


def shots(pool: Sequence[Mapping[str, Any]], per_label: int) -> list[dict[str, Any]]:
    """The k-shot set: the first ``per_label`` items of each label in the pool's order."""
    seen = [0, 0]
    chosen = []
    for number, item in enumerate(pool, start=1):
        label = _label_id(item, number)
        if seen[label] < per_label:
            seen[label] += 1
            chosen.append(dict(item))
    if seen != [per_label, per_label]:
        raise NlueError(f"the pool holds {seen[0]} idiomatic and {seen[1]} literal items; {per_label} each needed")
    return chosen
