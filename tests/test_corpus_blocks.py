"""A corpus file read in blocks by worker processes (`--num-proc`): the same documents, ids and errors as one reader.

The readers are compared block by block in this process (every border falls somewhere awkward at some block
size); one command per reader runs on two processes to show the blocks reach the workers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import nlue.corpus_blocks as corpus_blocks
from nlue.corpus_blocks import count_lines, file_blocks, first_bad_utf8
from nlue.errors import NlueError
from nlue.evals.contamination.corpus import CorpusSpec, blocks_of, corpus_files, file_documents, read_corpus
from nlue.idioms.cli import main as idioms_main
from nlue.idioms.corpus import block_documents, file_document_id, open_corpus
from nlue.idioms.mine import CANDIDATES_NAME, REPORT_NAME, MiningReport, mine_blocks, mine_documents
from nlue.process_map import ItemError
from tests.process_map_faults import FaultyMatcher

# Our own sentences; "न" and "ु" are multi-byte in UTF-8, so some block sizes put a border inside one unless the
# borders keep to newlines.
PARAGRAPHS = [
    "बिहान पानी पर्‍यो।\r\nबेलुका घाम लाग्यो।",  # CRLF inside a document
    "राति चितुवा देख्दा सबैको सातो गयो!",
    "   \t",  # a line of spaces: blank, so it only separates
    "नाक खुम्च्याउनु\rहुँदैन भने।",  # a lone CR: Python's text mode ends a line there
    "धेरै मेहनतपछि उनको हात लाग्यो। " * 12,  # a line longer than the small blocks
]


def _text_corpus(path: Path) -> bytes:
    """Paragraphs separated by one to three empty lines (LF and CRLF), the last line without a newline."""
    parts = []
    for n, paragraph in enumerate(PARAGRAPHS * 3):
        parts.append(paragraph + "\n" + ["\n", "\r\n", "\n\n\n"][n % 3])
    data = ("".join(parts) + "अन्तिम पङ्क्ति, newline बिना").encode()
    path.write_bytes(data)
    return data


def _jsonl_corpus(path: Path) -> None:
    rows = [json.dumps({"text": p, **({"id": f"row{n}"} if n % 4 == 0 else {})}, ensure_ascii=False)
            for n, p in enumerate(PARAGRAPHS * 3)]  # fmt: skip
    path.write_bytes(("\n".join(rows[:5]) + "\r\n\n" + "\n".join(rows[5:])).encode())  # CRLF, a blank row, no last \n


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 61, 200, 10_000])
def test_blocks_cover_every_line_once_at_line_starts(tmp_path: Path, size: int) -> None:
    """issue 32, item 1 (and issue 31, item 5): blocks of any size cover the file once, each starting at a line
    start; paragraph blocks end after an empty line; each knows the number of its first line."""
    data = _text_corpus(tmp_path / "c.txt")
    for paragraphs in (False, True):
        blocks = list(file_blocks(tmp_path / "c.txt", size, paragraphs=paragraphs, universal_newlines=True))
        assert b"".join(data[b.start : b.end] for b in blocks) == data and all(b.size > 0 for b in blocks)
        for block in blocks:
            assert block.first_line == 1 + count_lines(data[: block.start], universal_newlines=True)
            if block.end < len(data):
                assert data[: block.end].endswith((b"\n\n", b"\n\r\n") if paragraphs else b"\n")
            assert data[block.start : block.end].decode()  # no character cut


def _parquet_corpus(path: Path, with_ids: bool, null: bool = True) -> None:
    texts = PARAGRAPHS * 3 + ([None] if null else [])  # an empty cell: text to the miner, an error to the check
    columns = {"text": texts, **({"id": [None if n % 3 else f"r{n}" for n in range(len(texts))]} if with_ids else {})}
    pq.write_table(pa.table(columns), path, row_group_size=4)  # row groups of 4 rows: the blocks


@pytest.mark.parametrize("size", [1, 5, 33, 120, 10_000])
def test_idioms_blocks_give_the_documents_of_one_reader(tmp_path: Path, size: int, monkeypatch) -> None:
    """issue 31, item 5: text read as paragraphs or as lines, and JSONL, read in blocks give the documents, texts
    and ids (numbered through the file) that one reader gives, whatever the borders straddle."""
    monkeypatch.setattr(corpus_blocks, "MIN_BLOCK_BYTES", 1)
    monkeypatch.setattr(corpus_blocks, "BLOCK_BYTES", size)
    _text_corpus(tmp_path / "c.txt")
    _jsonl_corpus(tmp_path / "c.jsonl")
    (tmp_path / "pq").mkdir()
    _parquet_corpus(tmp_path / "pq" / "a.parquet", with_ids=True)
    _parquet_corpus(tmp_path / "pq" / "b.parquet", with_ids=False)
    for name, lines in (("c.txt", False), ("c.txt", True), ("c.jsonl", False), ("pq", False)):
        corpus = open_corpus(str(tmp_path / name), line_documents=lines)
        whole = [(d.id, d.text) for d in corpus.documents()]
        pieces = []
        for source in corpus.files:
            before = 0
            for block in source.blocks(num_proc=2):
                documents = list(block_documents(source, block))
                pieces += [(file_document_id(source, before, d.id), d.text) for d in documents]
                before += len(documents)
        assert pieces == whole and len(whole) > 10, name
    assert len(list(corpus.files[0].blocks(2))) == 4  # the Parquet file's row groups


@pytest.mark.parametrize("size", [1, 5, 33, 10_000])
def test_contamination_blocks_give_the_documents_of_one_reader(tmp_path: Path, size: int, monkeypatch) -> None:
    """issue 32, item 1: `nlue contamination`'s text (a document a line), JSONL and Parquet files read in blocks
    (a Parquet file's row groups) give the documents and their references (file and line or row) of one reader."""
    monkeypatch.setattr(corpus_blocks, "MIN_BLOCK_BYTES", 1)
    monkeypatch.setattr(corpus_blocks, "BLOCK_BYTES", size)
    (tmp_path / "folder").mkdir()
    _text_corpus(tmp_path / "folder" / "a.txt")
    _jsonl_corpus(tmp_path / "folder" / "b.jsonl")
    _parquet_corpus(tmp_path / "folder" / "c.parquet", with_ids=True, null=False)
    (tmp_path / "folder" / "d.parquet").write_bytes(b"not parquet")  # one block; its reader says what it is
    spec = CorpusSpec(str(tmp_path / "folder"))
    files = corpus_files(tmp_path / "folder")
    blocks = list(blocks_of(files, 0, num_proc=2))

    def documents(reader):
        found = []
        with pytest.raises(NlueError, match=r"d.parquet: not a Parquet file"):
            found.extend(reader)
        return found

    whole = documents(read_corpus(spec))
    assert whole == documents(doc for kind, block in blocks for doc in file_documents(Path(block.path), kind, spec,
                                                                                     block))  # fmt: skip
    assert len(whole) > 30 and {"r0", "c.parquet:2"} <= {reference for reference, _ in whole}


def test_errors_in_a_late_block_read_as_from_one_reader(tmp_path: Path, monkeypatch) -> None:
    """issue 32, item 1: a byte that is not UTF-8 and a bad JSONL row in a late block are named by the file, the
    line (or the exact byte) as one reader names them."""
    monkeypatch.setattr(corpus_blocks, "MIN_BLOCK_BYTES", 1)
    monkeypatch.setattr(corpus_blocks, "BLOCK_BYTES", 40)
    data = _text_corpus(tmp_path / "c.txt")
    at = data.rindex(b"newline")
    (tmp_path / "c.txt").write_bytes(data[:at] + b"\xff" + data[at:])
    assert first_bad_utf8(tmp_path / "c.txt") == at
    (tmp_path / "c.jsonl").write_text('{"text": "क"}\n' * 30 + '{"text": 7}\n', encoding="utf-8")

    def message(documents) -> str:
        with pytest.raises(NlueError) as caught:
            list(documents)
        return str(caught.value)

    for name in ("c.txt", "c.jsonl"):
        corpus = open_corpus(str(tmp_path / name))
        in_blocks = (d for block in corpus.files[0].blocks(2) for d in block_documents(corpus.files[0], block))
        assert message(corpus.documents()) == message(in_blocks)
    assert message(corpus.documents()).endswith("c.jsonl: row 31: column 'text' holds int, not text")
    assert message(open_corpus(str(tmp_path / "c.txt")).documents()).endswith(f"at byte {at}")
    for name in ("c.txt", "c.jsonl"):  # contamination's reader: a line number either way
        spec = CorpusSpec(str(tmp_path / name))
        files = corpus_files(tmp_path / name)
        in_blocks = (doc for kind, block in blocks_of(files, 0, 2) for doc in file_documents(
            Path(block.path), kind, spec, block))  # fmt: skip
        assert message(read_corpus(spec)) == message(in_blocks)


def test_mining_a_text_file_in_blocks_on_two_processes(tmp_path: Path, monkeypatch, capsys) -> None:
    """issue 31, item 5: paragraphs mined on two processes, each worker reading its own blocks of the file,
    give the same candidates.jsonl and mining_report.json as one process; a fault in a worker names the
    document by its number in the file, as one process does."""
    monkeypatch.setattr(corpus_blocks, "MIN_BLOCK_BYTES", 1)
    monkeypatch.setattr(corpus_blocks, "BLOCK_BYTES", 300)
    idioms = ["सातो जानु", "हात लाग्नु", "नाक खुम्च्याउनु"]
    (tmp_path / "idioms.txt").write_text("\n".join(idioms) + "\n", encoding="utf-8")
    _text_corpus(tmp_path / "c.txt")
    written = []
    for procs in ("1", "2"):
        out = tmp_path / f"out{procs}"
        assert idioms_main(["mine", "--idioms", str(tmp_path / "idioms.txt"), "--corpus", str(tmp_path / "c.txt"),
                            "--out", str(out), "-q", "--num-proc", procs]) == 0  # fmt: skip
        written.append([(out / name).read_bytes() for name in (CANDIDATES_NAME, REPORT_NAME)])
    assert written[0] == written[1] and json.loads(written[0][1])["candidates"] > 0
    corpus = open_corpus(str(tmp_path / "c.txt"))
    last = len(list(corpus.documents()))
    matcher = FaultyMatcher(idioms)  # fails on the document holding "अन्तिम": the last one
    faults = []
    for documents in (mine_documents(matcher, corpus.documents(), MiningReport(), 1),
                      mine_blocks(matcher, corpus.files, MiningReport(), 2, lambda size: None)):  # fmt: skip
        with pytest.raises(ItemError) as caught:
            list(documents)
        faults.append(str(caught.value))
    assert faults[0] == faults[1] == f"document c.txt:{last}: ZeroDivisionError: division by zero"
