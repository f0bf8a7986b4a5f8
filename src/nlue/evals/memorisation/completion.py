"""The exam completion probe: the model is given the first half of a question and writes on greedily.

A question is split by whitespace words: the first ``n // 2`` words are the prompt (plain text, no
instruction, no chat template: a memorised question goes on by itself), the rest is the reference. The
model writes greedily for as many tokens as the reference has, two more (so a word cut in the middle of its
tokens is written whole), rounded up to a multiple of :data:`CAP_STEP` (questions with one cap are generated
in one batch), and what it wrote is cut to the reference's number of words. Both are normalised
by the task's language profile (the rules the builder used) before they are compared:

* ``exact``: the words are the reference's, word for word;
* ``overlap``: ``1 - edit distance / longer length`` over characters (1: the same text, 0: nothing in place).

The control compares the same generation with the second half of another question of the task (a seeded
derangement), cut to that one's word count: what any fluent continuation shares with a question it did not
come from. Questions of fewer than :data:`MIN_WORDS` words are not split.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nlue.lm.base import GenerationRequest

MIN_WORDS = 4
SLACK_TOKENS = 2
CAP_STEP = 8


def halves(question: str) -> tuple[str, str] | None:
    """(first half, second half) of the question's words, or None for fewer than :data:`MIN_WORDS` words."""
    words = question.split()
    if len(words) < MIN_WORDS:
        return None
    middle = len(words) // 2
    return " ".join(words[:middle]), " ".join(words[middle:])


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance over characters (insert, delete, substitute: 1 each), one numpy row at a time."""
    if not a or not b:
        return max(len(a), len(b))
    target = np.array([ord(c) for c in b])
    previous = np.arange(len(b) + 1)
    steps = np.arange(len(b) + 1)
    for i, char in enumerate(a, start=1):
        diagonal_or_up = np.minimum(previous[1:] + 1, previous[:-1] + (target != ord(char)))
        row = np.concatenate(([i], diagonal_or_up))
        # insertions along the row: row[j] = min over l <= j of row[l] + (j - l)
        previous = np.minimum.accumulate(row - steps) + steps
    return int(previous[-1])


def similarity(a: str, b: str) -> float:
    """``1 - edit_distance / max(len)``; two empty texts are the same (1.0)."""
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - edit_distance(a, b) / longest


def compare(generated: str, reference: str, normalize: Callable[[str], str]) -> tuple[bool, float]:
    """(exact, overlap) of what was generated, cut to the reference's word count, against the reference."""
    want = normalize(reference).split()
    got = normalize(generated).split()[: len(want)]
    return got == want, similarity(" ".join(got), " ".join(want))


def requests(splits: Sequence[tuple[str, str] | None], count_tokens: Callable[[str], int]) -> list[GenerationRequest]:
    """One greedy request per split question: its first half, as many new tokens as its second half has."""

    def cap(second: str) -> int:
        return -(-(count_tokens(" " + second) + SLACK_TOKENS) // CAP_STEP) * CAP_STEP

    return [GenerationRequest(prompt=first, max_new_tokens=cap(second))
            for first, second in (s for s in splits if s is not None)]  # fmt: skip


def control_partners(count: int, seed: int) -> list[int] | None:
    """A seeded derangement of ``range(count)``: whose second half each generation is held against."""
    if count < 2:
        return None
    order = np.random.default_rng(seed).permutation(count)
    for i in range(count):
        if order[i] == i:
            j = (i + 1) % count
            order[i], order[j] = order[j], order[i]
    return [int(j) for j in order]


def completion_records(
    ids: Sequence[Any], questions: Sequence[str], generated: Sequence[str], normalize: Callable[[str], str], seed: int
) -> list[dict[str, Any]]:
    """Per question: its prompt, reference, what the model wrote (``generated``: one per split question, in
    order), exact and overlap, and the same against its control partner's reference."""
    splits = [halves(q) for q in questions]
    done = [i for i, s in enumerate(splits) if s is not None]
    partners = control_partners(len(done), seed)
    records = [{"id": item_id, "prompt": None, "reference": None, "generated": None, "exact": None,
                "overlap": None, "control_id": None, "control_exact": None, "control_overlap": None}
               for item_id in ids]  # fmt: skip
    for n, (i, text) in enumerate(zip(done, generated, strict=True)):
        first, second = splits[i]  # type: ignore[misc]
        exact, overlap = compare(text, second, normalize)
        records[i].update(prompt=first, reference=second, generated=text, exact=exact, overlap=round(overlap, 6))
        if partners is not None:
            other = done[partners[n]]
            control_exact, control_overlap = compare(text, splits[other][1], normalize)  # type: ignore[index]
            records[i].update(control_id=ids[other], control_exact=control_exact,
                              control_overlap=round(control_overlap, 6))  # fmt: skip
    return records
