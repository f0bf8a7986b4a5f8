"""Mining candidate contexts for a list of idioms from a corpus (neDIOM's collection step, facts §3).

For every document, in corpus order: find the idioms' truncated prefixes
(:mod:`nlue.text.idiom_prefix`), split the document into sentences
(:mod:`nlue.idioms.sentences`) and write one candidate per hit: the idiom, the sentence
holding it (S2), the sentences before and after it in the same document (S1, S3; empty at
the document's edges), the hit's span as offsets and as the paper's ``###`` position
field, the matched text and the document's id. Annotators then label each candidate I,
L or NA and correct the span (:mod:`nlue.idioms.annotate`).

Speed and memory: a document is first searched for the idioms' first words with one
compiled alternation (most documents hold none and cost one scan); only a document with
a first word is split into sentences and matched against the patterns of those idioms.
Candidates are written as they are found; what grows with the corpus is an 8-byte
fingerprint per distinct candidate, which drops repeats (web crawls repeat pages).

Processes and engines: the per-document work (:func:`document_candidates`) runs on ``num_proc`` worker
processes (:func:`nlue.process_map.map_in_order`: results in corpus order), while this process drops
repeats and writes, so the files are the same bytes however many processes run. An uncompressed text or
JSONL file is cut into blocks of bytes that each worker reads and cuts into documents itself, and a Parquet
file into its row groups (:func:`mine_blocks`; this process only places the blocks); any other corpus is read here and sent to the
workers in chunks of documents (:func:`mine_documents`).
:func:`find_candidates`, :func:`drop_repeats` and :func:`candidate_line` are the stable API for running
the same work on an engine (Ray Data, Dask, Spark; docs/examples/corpus-engines/).

Output (deterministic: the same idioms and corpus give the same bytes), in ``out``:
``candidates.jsonl`` (ids ``cand-<hash of idiom, S1, S2, S3 and span>``) and
``mining_report.json`` (documents and sentences read, candidates and repeats, hits per
idiom, idioms never found). Both are written beside their place and moved there when done.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from nlue.corpus_blocks import Block, RowGroup
from nlue.errors import NlueError
from nlue.idioms.corpus import Corpus, CorpusFile, Document, block_documents, file_document_id
from nlue.idioms.sentences import split_sentences
from nlue.process_map import ItemFailure, failure_of, map_in_order, raise_failure
from nlue.strict_json import dumps
from nlue.text.idiom_position import mark_position
from nlue.text.idiom_prefix import WORD_CHARS, IdiomPattern, compile_idiom
from nlue.text.normalize import normalize_text

logger = logging.getLogger(__name__)

CANDIDATES_NAME = "candidates.jsonl"
REPORT_NAME = "mining_report.json"


def read_idioms(path: Path) -> list[str]:
    """The idioms of a list file: one per line, normalised; blank lines and ``#`` comments skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise NlueError(f"{path}: idiom list not found") from None
    except UnicodeDecodeError:
        raise NlueError(f"{path}: the idiom list is not UTF-8 text") from None
    idioms: list[str] = []
    for number, line in enumerate(lines, start=1):
        idiom = normalize_text(line.split("#", 1)[0])
        if not idiom:
            continue
        if len(idiom.split()) < 2:
            raise NlueError(f"{path}: line {number}: {idiom!r}: an idiom needs at least two words")
        if idiom not in idioms:
            idioms.append(idiom)
    if not idioms:
        raise NlueError(f"{path}: no idioms listed")
    return idioms


@dataclass(frozen=True)
class Hit:
    """One idiom found in one sentence: the sentence's index and the marked span in it."""

    idiom: str
    sentence: int
    start: int
    end: int


class Matcher:
    """The truncated-prefix patterns of a list of idioms, indexed by their first word."""

    def __init__(self, idioms: Sequence[str], suppletive: bool = True) -> None:
        self.idioms = list(idioms)
        self.patterns: dict[str, list[IdiomPattern]] = {}
        for idiom in self.idioms:
            pattern = compile_idiom(idiom, suppletive)
            self.patterns.setdefault(pattern.first_word, []).append(pattern)
        words = sorted(self.patterns, key=lambda w: (-len(w), w))
        self._first_words = re.compile(rf"(?<![\w{WORD_CHARS}])(?:{'|'.join(map(re.escape, words))})(?=[^\S\n])")

    def has_first_word(self, text: str) -> bool:
        return self._first_words.search(text) is not None

    def hits(self, sentences: Sequence[str]) -> Iterator[Hit]:
        """Every hit, by sentence, then position, then the idioms' listed order."""
        for index, sentence in enumerate(sentences):
            found = []
            for word in self._first_words.finditer(sentence):
                for pattern in self.patterns[word.group()]:
                    span = pattern.match_at(sentence, word.start())
                    if span is not None:
                        found.append(Hit(pattern.idiom, index, *span))
            order = {idiom: n for n, idiom in enumerate(self.idioms)}
            yield from sorted(found, key=lambda h: (h.start, order[h.idiom]))


@dataclass
class MiningReport:
    documents: int = 0
    documents_with_hits: int = 0
    sentences: int = 0  # in documents holding a first word (the others are not split)
    candidates: int = 0
    repeats: int = 0
    hits: Counter[str] = field(default_factory=Counter)

    def to_dict(self, idioms: Sequence[str]) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "documents_with_hits": self.documents_with_hits,
            "sentences_split": self.sentences,
            "candidates": self.candidates,
            "repeats_dropped": self.repeats,
            "idioms": len(idioms),
            "idioms_found": sum(1 for i in idioms if self.hits[i]),
            "candidates_per_idiom": {i: self.hits[i] for i in idioms},
            "idioms_not_found": [i for i in idioms if not self.hits[i]],
        }


def candidate(idiom: str, sentences: Sequence[str], hit: Hit, document: str) -> dict[str, Any]:
    """One candidate record for the annotators (see the module docstring)."""
    s2 = sentences[hit.sentence]
    s1 = sentences[hit.sentence - 1] if hit.sentence > 0 else ""
    s3 = sentences[hit.sentence + 1] if hit.sentence + 1 < len(sentences) else ""
    key = "\x1f".join((idiom, s1, s2, s3, str(hit.start))).encode()
    return {
        "id": f"cand-{hashlib.blake2b(key, digest_size=8).hexdigest()}",
        "idiom": idiom,
        "S1": s1,
        "S2": s2,
        "S3": s3,
        "position": mark_position(s2, hit.start, hit.end),
        "span_start": hit.start,
        "span_end": hit.end,
        "matched": s2[hit.start : hit.end],
        "document": document,
    }


@dataclass(frozen=True)
class DocumentCandidates:
    """What one document gives: its sentences (0 when it holds no idiom's first word and is not split) and
    its candidates in order, repeats of earlier documents not yet dropped (that takes the corpus's order)."""

    sentences: int
    records: list[dict[str, Any]]


def document_candidates(matcher: Matcher, document: Document) -> DocumentCandidates:
    """The per-document work of mining: the part that runs on ``--num-proc`` processes or an engine's workers."""
    text = document.text
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if not matcher.has_first_word(text):
        return DocumentCandidates(0, [])
    sentences = split_sentences(text)
    records = [candidate(hit.idiom, sentences, hit, document.id) for hit in matcher.hits(sentences)]
    return DocumentCandidates(len(sentences), records)


def _mined(matcher: Matcher, pair: tuple[str, str]) -> tuple[int, list[dict[str, Any]]] | None:
    """:func:`document_candidates` in a shape that crosses processes cheaply: plain tuples, and None for the
    documents (most of them) that hold no idiom's first word and count for nothing but a document."""
    found = document_candidates(matcher, Document(*pair))
    return (found.sentences, found.records) if found.sentences else None


class RepeatFilter:
    """Drops a candidate seen before (same id: same idiom, S1, S2, S3 and span), keeping an 8-byte digest each."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def is_new(self, record: dict[str, Any]) -> bool:
        digest = hashlib.blake2b(record["id"].encode(), digest_size=8).digest()
        if digest in self._seen:
            return False
        self._seen.add(digest)
        return True


def candidate_line(record: dict[str, Any]) -> str:
    """A candidate as a line of ``candidates.jsonl``."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def find_candidates(
    idioms: Sequence[str], documents: Iterable[tuple[str, str | None]], suppletive: bool = True
) -> list[dict[str, Any]]:
    """The candidates of ``documents`` (pairs of document id and text; None for no text), in order: the
    function an engine runs.

    A stable API for running the mining on Ray Data, Dask, Spark or any pool of workers: call it on each
    batch or partition of the corpus, keep the batches in corpus order, and pass the concatenation through
    :func:`drop_repeats`; :func:`candidate_line` of each record is then, byte for byte, the
    ``candidates.jsonl`` that ``nlue idioms mine`` writes from the same documents with the same ids.
    ``idioms`` are citation forms as :func:`read_idioms` returns them; their patterns are compiled once
    per process and list.
    """
    matcher = _matcher(tuple(idioms), suppletive)
    found: list[dict[str, Any]] = []
    for document_id, text in documents:
        if text is None:  # an empty cell, read as the corpus readers read it
            text = ""
        elif not isinstance(text, str):
            raise NlueError(f"document {document_id}: the text is {type(text).__name__}, not text")
        found += document_candidates(matcher, Document(str(document_id), text)).records
    return found


def drop_repeats(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``records`` without the repeats of earlier ones, in order (what ``nlue idioms mine`` drops)."""
    repeats = RepeatFilter()
    return (record for record in records if repeats.is_new(record))


@functools.lru_cache(maxsize=8)
def _matcher(idioms: tuple[str, ...], suppletive: bool) -> Matcher:
    return Matcher(idioms, suppletive)


def mine_documents(
    matcher: Matcher, documents: Iterable[Document], report: MiningReport, num_proc: int = 1
) -> Iterator[dict[str, Any]]:
    """The distinct candidates of ``documents`` in corpus order, found on ``num_proc`` processes (the same
    candidates in the same order however many); counts go to ``report``."""
    repeats = RepeatFilter()
    found_in = map_in_order(
        _mined, matcher, ((d.id, d.text) for d in documents), num_proc=num_proc,
        where=lambda pair: f"document {pair[0]}", size=lambda pair: len(pair[1]),
    )  # fmt: skip
    for found in found_in:
        report.documents += 1
        if found is not None:
            yield from _new_candidates(report, repeats, *found)


def _new_candidates(
    report: MiningReport, repeats: RepeatFilter, sentences: int, records: list[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """One document's candidates that are not repeats of earlier ones, counted in ``report``."""
    report.sentences += sentences
    new = False
    for record in records:
        if not repeats.is_new(record):
            report.repeats += 1
            continue
        new = True
        report.candidates += 1
        report.hits[record["idiom"]] += 1
        yield record
    report.documents_with_hits += new


@dataclass
class _MinedBlock:
    """One block's work, as a worker sends it back: documents read, those with candidates (the id the block gave
    them, sentences, records), bytes, and what stopped the block if anything did (after the documents before)."""

    source: CorpusFile | None = None
    documents: int = 0
    found: list[tuple[str, int, list[dict[str, Any]]]] = field(default_factory=list)
    size: int = 0
    failure: ItemFailure | None = None  # a fault on a document (its id: failed_id)
    failed_id: str = ""
    reading_error: str | None = None


def _mine_block(matcher: Matcher, job: tuple[CorpusFile, Block | RowGroup]) -> _MinedBlock:
    source, block = job
    mined = _MinedBlock(source, size=block.size)
    try:
        for document in block_documents(source, block):
            try:
                found = _mined(matcher, (document.id, document.text))
            except Exception as exc:  # named by its document in this process (mine_blocks)
                mined.failure, mined.failed_id = failure_of(exc, mined.documents), document.id
                return mined
            mined.documents += 1
            if found is not None:
                mined.found.append((document.id, *found))
    except NlueError as exc:
        mined.reading_error = str(exc)
    return mined


def mine_blocks(
    matcher: Matcher, files: Sequence[CorpusFile], report: MiningReport, num_proc: int, progress: Callable[[int], Any]
) -> Iterator[dict[str, Any]]:
    """:func:`mine_documents` for files whose blocks the workers read themselves (module docstring): the same
    candidates, ids and errors; ``progress`` is told the bytes of each block done."""
    repeats = RepeatFilter()
    jobs = ((source, block) for source in files for block in source.blocks(num_proc))
    before, source = 0, None  # documents in the file's blocks before: a text file's ids are numbered through it
    for mined in map_in_order(_mine_block, matcher, jobs, num_proc=num_proc, where=lambda job: job[1].describe(),
                              chunk_items=1):  # fmt: skip
        if mined.source != source:  # a copy from the worker: compared by its fields
            before, source = 0, mined.source
        for block_id, sentences, records in mined.found:
            document = file_document_id(source, before, block_id)
            for record in records:
                record["document"] = document
            yield from _new_candidates(report, repeats, sentences, records)
        report.documents += mined.documents
        if mined.failure is not None:
            raise_failure(mined.failure, f"document {file_document_id(source, before, mined.failed_id)}")
        if mined.reading_error is not None:
            raise NlueError(mined.reading_error)
        before += mined.documents
        progress(mined.size)


def mine(
    idioms: Sequence[str],
    corpus: Corpus,
    out: Path,
    suppletive: bool = True,
    show_progress: bool = True,
    num_proc: int = 1,
) -> dict[str, Any]:
    """Mine ``corpus`` for ``idioms`` into ``out`` on ``num_proc`` processes (see the module docstring); returns
    the report. The files are the same byte for byte whatever ``num_proc`` is."""
    matcher = Matcher(idioms, suppletive)
    report = MiningReport()
    out.mkdir(parents=True, exist_ok=True)
    bar = tqdm(
        total=corpus.total_bytes, unit="B" if corpus.total_bytes else " docs", unit_scale=True,
        desc=f"mining {corpus.name}", disable=not show_progress,
    )  # fmt: skip
    handle, tmp = tempfile.mkstemp(prefix=f".{CANDIDATES_NAME}.", dir=out)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as sink:
            if num_proc > 1 and corpus.files:
                records = mine_blocks(matcher, corpus.files, report, num_proc, bar.update)
            else:
                records = mine_documents(matcher, _with_progress(corpus, bar), report, num_proc)
            for record in records:
                sink.write(candidate_line(record))
        os.replace(tmp, out / CANDIDATES_NAME)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        bar.close()
    summary = report.to_dict(matcher.idioms)
    _write_json(out / REPORT_NAME, summary)
    logger.info("%d documents, %d candidates (%d repeats dropped) -> %s", report.documents, report.candidates,
                report.repeats, out)  # fmt: skip
    return summary


def _with_progress(corpus: Corpus, bar: tqdm) -> Iterator[Document]:
    last = 0
    for document in corpus.documents():
        yield document
        now = corpus.position()
        bar.update(now - last if corpus.total_bytes else 1)
        last = now


def _write_json(path: Path, data: Any) -> None:
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as sink:
            sink.write(dumps(data, where=str(path), indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
