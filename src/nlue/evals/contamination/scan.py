"""Streaming a corpus past the test set's index: batches of documents, one process or a pool of them.

The parent reads the corpus (:mod:`nlue.evals.contamination.corpus`) and cuts it into batches; each batch is
hashed and looked up (:func:`~nlue.evals.contamination.measures.scan_batch`) in the parent or in a worker of a
``multiprocessing`` pool that was handed the index once, when it started. At most two batches per worker are
in flight and results are taken back in corpus order, so memory stays bounded by the test set and a few
batches, and the findings (best ratios, the first matching documents) are the same for any ``num_proc``.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from nlue.evals.contamination.index import GramIndex, Matches
from nlue.evals.contamination.measures import Settings, scan_batch

logger = logging.getLogger(__name__)

BATCH_DOCUMENTS = 2000
BATCH_CHARACTERS = 4 << 20  # a batch of long documents is cut short: its arrays cost ~40 bytes a character

_WORKER_INDEXES: Mapping[str, GramIndex] = {}


@dataclass
class MeasureFindings:
    """Per item: the largest share of its n-grams one document holds, and the first documents that reach the
    measure's threshold (at most ``max_documents``)."""

    best: np.ndarray
    documents: list[list[str]]

    @staticmethod
    def new(count: int) -> MeasureFindings:
        return MeasureFindings(np.zeros(count, dtype=np.float64), [[] for _ in range(count)])


@dataclass
class ScanFindings:
    measures: dict[str, MeasureFindings]
    documents: int = 0
    characters: int = 0


def _batches(documents: Iterable[tuple[str, str]]) -> Iterator[tuple[list[str], list[str]]]:
    references: list[str] = []
    texts: list[str] = []
    size = 0
    for reference, text in documents:
        references.append(reference)
        texts.append(text)
        size += len(text)
        if len(texts) >= BATCH_DOCUMENTS or size >= BATCH_CHARACTERS:
            yield references, texts
            references, texts, size = [], [], 0
    if texts:
        yield references, texts


def _start_worker(indexes: Mapping[str, GramIndex]) -> None:
    global _WORKER_INDEXES
    _WORKER_INDEXES = indexes


def _worker_batch(texts: Sequence[str]) -> dict[str, Matches]:
    return scan_batch(texts, _WORKER_INDEXES)


def _merge(findings: ScanFindings, indexes: Mapping[str, GramIndex], references: Sequence[str],
           matches: Mapping[str, Matches], settings: Settings) -> None:  # fmt: skip
    for name, found in matches.items():
        if not len(found.items):
            continue
        index, measure = indexes[name], findings.measures[name]
        shares = found.found / np.maximum(index.gram_counts[found.items], 1)
        np.maximum.at(measure.best, found.items, shares)
        threshold = settings.threshold(name)
        reached = (shares >= threshold) if threshold > 0 else (found.found > 0)
        order = np.argsort(found.documents[reached], kind="stable")  # corpus order within the batch
        for document, item in zip(found.documents[reached][order], found.items[reached][order], strict=True):
            kept = measure.documents[item]
            if len(kept) < settings.max_documents:
                kept.append(references[document])


def scan_corpus(
    documents: Iterable[tuple[str, str]],
    indexes: Mapping[str, GramIndex],
    item_count: int,
    settings: Settings,
    num_proc: int = 1,
    show_progress: bool = True,
) -> ScanFindings:
    """Every document of ``documents`` checked against ``indexes``; the findings per measure and item."""
    from tqdm.auto import tqdm

    findings = ScanFindings({name: MeasureFindings.new(item_count) for name in indexes})
    batches = _batches(documents)
    with contextlib.ExitStack() as stack:
        pool = None
        if num_proc > 1:  # started before the progress bar's thread: a fork copies no running thread
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            pool = stack.enter_context(context.Pool(num_proc, initializer=_start_worker, initargs=(indexes,)))
        bar = stack.enter_context(
            tqdm(desc="corpus", unit="doc", unit_scale=True, disable=not show_progress, dynamic_ncols=True)
        )

        def take(references: Sequence[str], texts: Sequence[str], matches: Mapping[str, Matches]) -> None:
            _merge(findings, indexes, references, matches, settings)
            findings.documents += len(texts)
            findings.characters += sum(map(len, texts))
            bar.update(len(texts))

        if pool is None:
            for references, texts in batches:
                take(references, texts, scan_batch(texts, indexes))
            return findings
        pending: deque = deque()
        for references, texts in islice(batches, 2 * num_proc):
            pending.append((references, texts, pool.apply_async(_worker_batch, (texts,))))
        while pending:
            references, texts, result = pending.popleft()
            take(references, texts, result.get())
            for more_references, more_texts in islice(batches, 1):
                pending.append((more_references, more_texts, pool.apply_async(_worker_batch, (more_texts,))))
    return findings
