"""`nlue sweep ROSTER --shard K/N`: the roster's cells cut into N parts, the same on every machine.

The unit of the partition is a **results group**: the cells that write one results folder name (a model's
cells: its modes, shots, prompt languages and tasks; a run given a ``label``, or several presets, has a name
of its own). A group's cells run one after the other in one job, so that what a cell wrote is told apart
from what another job writes meanwhile into the same shared ``results/`` tree (a cell's results are the
files of its group's folders that changed while it ran), and a job claims a whole group at a time
(:meth:`nlue.evals.sweep.run.SweepState.claim`).

Groups are dealt to shards by their cost (:func:`work`), largest first, each to the shard with the least work
so far (ties: the lower shard number; equal costs: the grid's order), which depends only on the cells: every
job of a Slurm array or a Ray task computes the same partition from the same roster and options.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nlue.errors import NlueError
from nlue.evals.sweep.grid import Cell

# How much work a cost counts, in model requests. A fine-tuning (each seed one) weighs as much as a thousand
# requests; a GMET item about 6.4 forward passes of the masked LM (the evaluator's measured figure), rounded up.
TRAINING_WEIGHT = 1000
GMET_ITEM_WEIGHT = 7

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` (1 <= K <= N) as ``(K, N)``; an NlueError saying what was expected otherwise."""
    match = _SHARD.match(text or "")
    if not match:
        raise NlueError(f"--shard expects K/N, this job's shard K of N (e.g. 2/3), got {text!r}")
    shard, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= shard <= count:
        raise NlueError(f"--shard {text}: K must be between 1 and N, and N at least 1 (e.g. 1/3, 2/3, 3/3)")
    return shard, count


def work(cell: Cell) -> int:
    """The cell's cost as one number (at least 1): requests, plus fine-tunings and GMET items by their weight."""
    cost = cell.cost
    return max(1, cost.requests + TRAINING_WEIGHT * cost.trainings + GMET_ITEM_WEIGHT * cost.gmet_items)


def results_groups(cells: Sequence[Cell]) -> dict[str, list[Cell]]:
    """The cells by the results folder name they write, in the grid's order."""
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.results_name, []).append(cell)
    return groups


def partition(cells: Sequence[Cell], count: int) -> list[list[Cell]]:
    """The cells of each of ``count`` shards (shard 1 first), each in the grid's order."""
    groups = list(results_groups(cells).values())
    order = sorted(range(len(groups)), key=lambda i: (-sum(work(c) for c in groups[i]), i))
    loads = [0] * count
    shard_of: dict[int, int] = {}
    for index in order:
        shard = min(range(count), key=lambda s: (loads[s], s))
        shard_of[index] = shard
        loads[shard] += sum(work(c) for c in groups[index])
    chosen: list[set[str]] = [set() for _ in range(count)]
    for index, shard in shard_of.items():
        chosen[shard].update(c.id for c in groups[index])
    return [[c for c in cells if c.id in ids] for ids in chosen]


def shard_cells(cells: Sequence[Cell], shard: int, count: int) -> list[Cell]:
    """The cells of shard ``shard`` (1-based) of ``count``."""
    return partition(cells, count)[shard - 1]
