"""The docs' engine examples (docs/examples/corpus-engines/): Dask and Ray Data run nlue's per-document mining
function over a corpus and write the same candidates.jsonl, byte for byte, as `nlue idioms mine`."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.idioms.cli import main as idioms_main
from nlue.idioms.mine import CANDIDATES_NAME, candidate_line, drop_repeats, find_candidates, read_idioms
from tests.ray_local import RAY_ON_LOOPBACK
from tests.test_num_proc import IDIOMS, PLAIN, WITH_IDIOM

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "corpus-engines"


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, bytes]:
    """A small JSONL corpus with ids (null texts, repeated pages) and what `nlue idioms mine` writes from it."""
    folder = tmp_path_factory.mktemp("engines")
    draw = random.Random(5)
    rows = []
    for number in range(600):
        text = " ".join(draw.choice(WITH_IDIOM if draw.random() < 0.3 else PLAIN) for _ in range(draw.randint(1, 3)))
        rows.append(json.dumps({"id": f"doc-{number}", "text": None if number % 97 == 5 else text}, ensure_ascii=False))
    rows += rows[:40]  # pages crawled twice: their candidates are repeats
    (folder / "corpus.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "idioms.txt").write_text("\n".join(IDIOMS) + "\n", encoding="utf-8")
    argv = ["mine", "--idioms", str(folder / "idioms.txt"), "--corpus", str(folder / "corpus.jsonl"), "--out",
            str(folder / "nlue"), "-q"]  # fmt: skip
    assert idioms_main(argv) == 0
    expected = (folder / "nlue" / CANDIDATES_NAME).read_bytes()
    assert expected.count(b"\n") > 100
    return folder / "idioms.txt", folder / "corpus.jsonl", expected


def _run(script: str, idioms: Path, corpus: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> None:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, **(env or {}),
           "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
    argv = [sys.executable, str(EXAMPLES / script), "--idioms", str(idioms), "--corpus", str(corpus), "--out",
            str(out), *extra]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def test_dask_example_writes_what_nlue_idioms_mine_writes(mined, tmp_path: Path) -> None:
    """issue 31, item 5: dask.bag.read_text(...).map_partitions(find_candidates ...) on two worker processes."""
    pytest.importorskip("dask")
    idioms, corpus, expected = mined
    _run("dask_mine.py", idioms, corpus, tmp_path / "dask.jsonl", "--workers", "2", "--blocksize", "8KiB")
    assert (tmp_path / "dask.jsonl").read_bytes() == expected


def test_ray_example_writes_what_nlue_idioms_mine_writes(mined, tmp_path: Path) -> None:
    """issue 31, item 5: ray.data.read_json(...).map_batches(find_candidates ...) on a local two-CPU Ray."""
    pytest.importorskip("ray.data")
    idioms, corpus, expected = mined
    _run("ray_mine.py", idioms, corpus, tmp_path / "ray.jsonl", "--num-cpus", "2", "--batch-size", "100",
         env=RAY_ON_LOOPBACK)  # fmt: skip
    assert (tmp_path / "ray.jsonl").read_bytes() == expected


def test_find_candidates_is_the_commands_work_in_memory(mined) -> None:
    """issue 31, item 5: the engines' function, called in this process on batches, gives the command's bytes."""
    idioms_path, corpus, expected = mined
    idioms = read_idioms(idioms_path)
    records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    batches = [records[start : start + 50] for start in range(0, len(records), 50)]
    found = [c for batch in batches for c in find_candidates(idioms, ((r["id"], r["text"]) for r in batch))]
    assert "".join(candidate_line(c) for c in drop_repeats(found)).encode() == expected
    with pytest.raises(NlueError, match="document d7: the text is int, not text"):
        find_candidates(idioms, [("d7", 7)])
