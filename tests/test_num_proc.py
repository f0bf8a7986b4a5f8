"""Corpus work on several processes (`--num-proc`): the same bytes as one process, failures named by row.

`nlue translate --num-proc` is tested beside the other translation runs (tests/test_translate_engine.py).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nlue.corpus_blocks as corpus_blocks
import nlue.process_map as process_map
from nlue.errors import NlueError
from nlue.idioms.cli import main as idioms_main
from nlue.idioms.mine import CANDIDATES_NAME, REPORT_NAME
from nlue.process_map import ItemError, map_in_order, num_proc_arg, usable_cores
from tests.process_map_faults import exit_on_five, fail_on_seven

IDIOMS = ["नाक खुम्च्याउनु", "सातो जानु", "हात लाग्नु", "डाँडो काट्नु", "आलु खानु"]
# Our own words: sentences with an idiom in an inflected form, look-alikes the rule must pass over, and plain ones.
WITH_IDIOM = [
    "बजारको भाउ सुनेर सबैले नाक खुम्च्याए।", "राति चितुवा देख्दा सबैको सातो गयो!", "धेरै मेहनतपछि उनको हात लाग्यो।",
    "ऋण तिर्न नसकेर ऊ रातारात डाँडो काटेछ।", "सातो जाला भनेर आमाले ढोका थुनिन्।",
]  # fmt: skip
PLAIN = [
    "आज बिहानदेखि पानी परिरहेको छ।", "हातिम लामाले नयाँ पसल खोले।", "नाक र कान डाक्टरलाई देखाउनु पर्छ।",
    "गाउँका केटाकेटी खेतमा खेल्दै थिए।", "डाँडो क्याम्पमा हिउँ परेको छ।", "बसमा धेरै भीड थियो?",
]  # fmt: skip


def _corpus(path: Path, documents: int, seed: int = 31) -> list[str]:
    """A JSONL corpus of ``documents`` rows: texts of 1-4 sentences, a few repeated, empty or null."""
    draw = random.Random(seed)
    lines = []
    for _ in range(documents):
        roll = draw.random()
        if roll < 0.03 and lines:
            lines.append(draw.choice(lines))  # a repeated page: its candidates are dropped as repeats
            continue
        text = None if roll < 0.04 else "" if roll < 0.05 else " ".join(
            draw.choice(WITH_IDIOM if draw.random() < 0.2 else PLAIN) for _ in range(draw.randint(1, 4))
        )  # fmt: skip
        lines.append(json.dumps({"text": text}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def _mine(tmp_path: Path, corpus: Path, num_proc: str, capsys) -> tuple[int, dict[str, bytes], str, str]:
    out = tmp_path / f"out-{corpus.stem}-{num_proc}"
    argv = ["mine", "--idioms", str(tmp_path / "idioms.txt"), "--corpus", str(corpus), "--out", str(out), "-q"]
    status = idioms_main([*argv, "--num-proc", num_proc])
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())} if out.is_dir() else {}
    printed = capsys.readouterr()
    return status, files, printed.out.replace(str(out), "OUT"), printed.err


def test_mining_on_two_processes_writes_the_same_bytes_as_one(tmp_path: Path, monkeypatch, capsys) -> None:
    """issue 31, item 5: `nlue idioms mine --num-proc 2` writes candidates.jsonl and mining_report.json byte for
    byte as one process does (same order, counts and repeats), and a bad row stops both with the same message."""
    monkeypatch.setattr(process_map, "DEFAULT_CHUNK_ITEMS", 64)  # many chunks, so order across workers matters
    monkeypatch.setattr(corpus_blocks, "MIN_BLOCK_BYTES", 4096)  # many blocks of the file, likewise
    monkeypatch.setattr(corpus_blocks, "BLOCK_BYTES", 8192)
    (tmp_path / "idioms.txt").write_text("\n".join(IDIOMS) + "\n", encoding="utf-8")
    lines = _corpus(tmp_path / "corpus.jsonl", 3000)
    one = _mine(tmp_path, tmp_path / "corpus.jsonl", "1", capsys)
    two = _mine(tmp_path, tmp_path / "corpus.jsonl", "2", capsys)
    assert one[0] == two[0] == 0
    assert one[1:] == two[1:]
    report = json.loads(one[1][REPORT_NAME])
    assert report["documents"] == 3000 and report["repeats_dropped"] > 0 and report["candidates"] > 100
    assert report["idioms_not_found"] == ["आलु खानु"]
    candidates = [json.loads(line) for line in one[1][CANDIDATES_NAME].decode().splitlines()]
    assert [c["document"] for c in candidates] == sorted((c["document"] for c in candidates),
                                                         key=lambda d: int(d.split(":")[1]))  # fmt: skip
    # A row that is not text, late in the corpus: both stop with the row named and write nothing.
    lines[2600] = json.dumps({"text": 42})
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    one = _mine(tmp_path, tmp_path / "bad.jsonl", "1", capsys)
    two = _mine(tmp_path, tmp_path / "bad.jsonl", "2", capsys)
    assert one[0] == two[0] == 2 and one[1] == two[1] == {}
    assert one[3] == two[3] and "bad.jsonl: row 2601: column 'text' holds int, not text" in one[3]


def _items(stop: int, bad_read_at: int | None = None):
    for item in range(stop):
        if item == bad_read_at:
            raise NlueError(f"items.txt: row {item}: not readable")
        yield item


def _run(items, num_proc: int) -> tuple[list[str], BaseException]:
    done: list[str] = []
    with pytest.raises((ItemError, NlueError)) as caught:
        for result in map_in_order(fail_on_seven, "n", items, num_proc=num_proc, where=lambda i: f"items.txt, row {i}",
                                   chunk_items=3):  # fmt: skip
            done.append(result)
    return done, caught.value


def test_a_worker_error_names_its_row_as_one_process_does() -> None:
    """issue 31, item 5: an exception raised on an item in a worker surfaces with the item's file and row, the
    original type and message, after every item before it, exactly as in one process; never swallowed."""
    # The reader fails at row 9, after row 7's fault was read: the first failure in order is the one reported.
    one = _run(_items(20, bad_read_at=9), 1)
    two = _run(_items(20, bad_read_at=9), 2)
    assert one[0] == two[0] == [f"n{i}" for i in range(7)]
    assert type(one[1]) is type(two[1]) is ItemError
    assert str(one[1]) == str(two[1]) == "items.txt, row 7: ZeroDivisionError: division by zero"
    assert "fail_on_seven" in str(two[1].__cause__)  # the worker's traceback travels with it
    # An error in the user's input raised by the function stays one (exit 2), named by row.
    one = _run((i for i in range(8, 20)), 1)
    two = _run((i for i in range(8, 20)), 2)
    assert type(one[1]) is type(two[1]) is NlueError and str(two[1]) == "items.txt, row 11: eleven is not allowed"
    # A reading failure mid-chunk comes after the results of every item read before it.
    one = _run(_items(6, bad_read_at=5), 1)
    two = _run(_items(6, bad_read_at=5), 2)
    assert one[0] == two[0] == [f"n{i}" for i in range(5)] and str(two[1]) == "items.txt: row 5: not readable"


def test_a_worker_that_dies_is_reported_with_its_rows() -> None:
    """issue 31, item 5: a worker process that ends abruptly stops the work with the rows it held, not a hang."""
    done = []
    with pytest.raises(
        ItemError, match=r"ended abruptly .* from items.txt, row (\d+) to items.txt, row (\d+)"
    ) as caught:
        for result in map_in_order(exit_on_five, "n", range(30), num_proc=2, where=lambda i: f"items.txt, row {i}",
                                   chunk_items=3):  # fmt: skip
            done.append(result)
    # which chunks had come back before the pool broke is a race: the rows named are those still in flight
    first, last = (int(row) for row in re.search(r"row (\d+) to .*row (\d+)", str(caught.value)).groups())
    assert done == [f"n{i}" for i in range(first)] and first <= 5 <= last


def test_num_proc_values() -> None:
    assert num_proc_arg("2") == 2 and num_proc_arg("1") == 1
    assert num_proc_arg("0") == num_proc_arg("auto") == usable_cores() >= 1
    for bad in ("-1", "two"):
        with pytest.raises(Exception, match="expected a number of processes"):
            num_proc_arg(bad)


def test_ctrl_c_stops_the_workers(tmp_path: Path) -> None:
    """issue 31, item 5: Ctrl-C (SIGINT to the foreground process group) during `nlue idioms mine --num-proc 2`
    ends the command with exit 130 within seconds, its worker processes gone and no output left behind."""
    psutil = pytest.importorskip("psutil")
    (tmp_path / "idioms.txt").write_text("\n".join(IDIOMS) + "\n", encoding="utf-8")
    line = " ".join(WITH_IDIOM[:2] + PLAIN[:3]) + "\n"
    (tmp_path / "corpus.txt").write_text(line * 400_000, encoding="utf-8")  # tens of seconds of mining
    argv = [sys.executable, "-c", "import sys; from nlue.idioms.cli import main; sys.exit(main(sys.argv[1:]))",
            "mine", "--idioms", str(tmp_path / "idioms.txt"), "--corpus", str(tmp_path / "corpus.txt"),
            "--line-documents", "--out", str(tmp_path / "out"), "-q", "--num-proc", "2"]  # fmt: skip
    command = subprocess.Popen(argv, start_new_session=True, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        tree: list = []
        while len(tree) < 3 and time.monotonic() < deadline:  # the forkserver and two workers
            time.sleep(0.3)
            tree = psutil.Process(command.pid).children(recursive=True)
        assert len(tree) >= 3, "the workers never started"
        time.sleep(1.0)  # at work
        os.killpg(command.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        started = time.monotonic()
        _, errors = command.communicate(timeout=30)
        stopped_in = time.monotonic() - started
    finally:
        if command.poll() is None:
            os.killpg(command.pid, signal.SIGKILL)
    assert command.returncode == 130 and "interrupted" in errors and stopped_in < 10, (command.returncode, errors)
    _, alive = psutil.wait_procs(tree, timeout=10)
    assert not alive
    assert not (tmp_path / "out" / CANDIDATES_NAME).exists()
    assert not [p for p in (tmp_path / "out").iterdir()]  # no temporary file left either
