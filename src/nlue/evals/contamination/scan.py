"""Streaming a corpus past the test set's index: batches of documents, one process or a pool of them.

Batches of documents are hashed and looked up (:func:`~nlue.evals.contamination.measures.scan_batch`) and the
matches merged in corpus order, so memory stays bounded by the test set and a few batches, and the findings
(best ratios, the first matching documents) are the same for any ``num_proc``.

* One process reads the corpus (:mod:`nlue.evals.contamination.corpus`) and scans each batch itself.
* With ``num_proc`` workers, a corpus of plain text and JSONL files is cut into blocks of bytes
  (:mod:`nlue.corpus_blocks`) that each worker reads, cuts into documents and scans on its own; the command's
  process only places the blocks and merges the results in block order. A gzip or Parquet file, or a Hub
  dataset, is read by the command's process, which hands batches of documents to the workers. Either way
  the workers come from :func:`nlue.process_map.map_in_order`, which was handed the index once per worker: at
  most two blocks or batches per worker are in flight, Ctrl-C stops them, a worker that dies is reported.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nlue.corpus_blocks import Block, RowGroup
from nlue.errors import NlueError
from nlue.evals.contamination.corpus import CorpusSpec, blocks_of, corpus_blocks, file_documents, read_corpus
from nlue.evals.contamination.index import GramIndex, Matches
from nlue.evals.contamination.measures import Settings, scan_batch
from nlue.process_map import map_in_order

logger = logging.getLogger(__name__)

BATCH_DOCUMENTS = 2000
BATCH_CHARACTERS = 4 << 20  # a batch of long documents is cut short: its arrays cost ~40 bytes a character


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


def _scan_texts(indexes: Mapping[str, GramIndex], batch: tuple[str, Sequence[str]]) -> tuple[dict[str, Matches], int]:
    """One batch of documents the command's process read (its first document's reference, the texts) scanned:
    the matches and the characters."""
    return scan_batch(batch[1], indexes), sum(map(len, batch[1]))


@dataclass
class ScannedBlock:
    """What a worker sends back for one block: per batch, the references of the documents that matched (by their
    place in the batch), the matches, documents and characters; the bytes read; the reading error that ended the
    block, if any (after the batches read before it)."""

    batches: list[tuple[dict[int, str], dict[str, Matches], int, int]] = field(default_factory=list)
    size: int = 0
    error: str | None = None


def _scan_block(indexes: Mapping[str, GramIndex], job: tuple[str, CorpusSpec, Block | RowGroup]) -> ScannedBlock:
    """One block (a Parquet row group) read, cut into documents and scanned in a worker: the work
    :func:`scan_corpus` hands out."""
    kind, spec, block = job
    scanned = ScannedBlock(size=block.size)

    def scan(references: Sequence[str], texts: Sequence[str]) -> None:
        matches = scan_batch(texts, indexes)
        matched = {int(d) for found in matches.values() for d in np.unique(found.documents)}
        scanned.batches.append(({d: references[d] for d in matched}, matches, len(texts), sum(map(len, texts))))

    try:
        for references, texts in _batches(file_documents(Path(block.path), kind, spec, block)):
            scan(references, texts)
    except NlueError as exc:
        scanned.error = str(exc)
    return scanned


def _merge(findings: ScanFindings, indexes: Mapping[str, GramIndex], references: Sequence[str] | Mapping[int, str],
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
    spec: CorpusSpec,
    indexes: Mapping[str, GramIndex],
    item_count: int,
    settings: Settings,
    num_proc: int = 1,
    show_progress: bool = True,
) -> ScanFindings:
    """Every document of the corpus ``spec`` names checked against ``indexes``; the findings per measure and item
    (the same for any ``num_proc``: module docstring)."""
    from tqdm.auto import tqdm

    findings = ScanFindings({name: MeasureFindings.new(item_count) for name in indexes})
    splittable = corpus_blocks(spec, num_proc)
    if splittable is not None:
        files, total = splittable
        jobs = ((kind, spec, block) for kind, block in blocks_of(files, total, num_proc))
        with tqdm(desc="corpus", total=total, unit="B", unit_scale=True, disable=not show_progress,
                  dynamic_ncols=True) as bar:  # fmt: skip
            for scanned in map_in_order(_scan_block, indexes, jobs, num_proc=num_proc, chunk_items=1,
                                        where=lambda job: job[2].describe()):  # fmt: skip
                for references, matches, documents, characters in scanned.batches:
                    _merge(findings, indexes, references, matches, settings)
                    findings.documents += documents
                    findings.characters += characters
                if scanned.error is not None:
                    raise NlueError(scanned.error)
                bar.update(scanned.size)
        return findings
    kept: deque[list[str]] = deque()  # the references of the batches in flight: only texts go to the workers

    def batches() -> Iterator[tuple[str, list[str]]]:
        for references, texts in _batches(read_corpus(spec)):
            kept.append(references)
            yield references[0], texts

    with tqdm(desc="corpus", unit="doc", unit_scale=True, disable=not show_progress, dynamic_ncols=True) as bar:
        for matches, characters in map_in_order(_scan_texts, indexes, batches(), num_proc=num_proc, chunk_items=1,
                                                where=lambda batch: f"the batch from document {batch[0]}"):  # fmt: skip
            references = kept.popleft()
            _merge(findings, indexes, references, matches, settings)
            findings.documents += len(references)
            findings.characters += characters
            bar.update(len(references))
    return findings
