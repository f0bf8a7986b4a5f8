"""Files written whole or not at all (nlue.atomic_files): results, predictions, summaries, gathered cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlue.atomic_files import copy_file_atomic, write_text_atomic


def test_a_failed_write_leaves_the_earlier_file_and_nothing_beside_it(tmp_path: Path) -> None:
    path = write_text_atomic(tmp_path / "deep" / "summary.csv", "a,b\r\n1,2\r\n", newline="")
    assert path.read_bytes() == b"a,b\r\n1,2\r\n"  # newline="": the csv module's line ends kept
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "half \ud800 written")  # a lone surrogate has no UTF-8 form
    assert path.read_bytes() == b"a,b\r\n1,2\r\n" and [p.name for p in path.parent.iterdir()] == ["summary.csv"]


def test_a_copy_is_whole_or_not_made(tmp_path: Path) -> None:
    source = tmp_path / "sa.predictions.jsonl"
    source.write_bytes(b'{"id": 1}\n')
    copied = copy_file_atomic(source, tmp_path / "out" / "sa.predictions.jsonl")
    assert copied.read_bytes() == source.read_bytes()
    with pytest.raises(FileNotFoundError):
        copy_file_atomic(tmp_path / "gone.jsonl", tmp_path / "out" / "gone.jsonl")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["sa.predictions.jsonl"]
