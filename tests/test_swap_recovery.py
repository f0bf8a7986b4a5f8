"""Issue 22 item 8: a build killed while it swaps its output in, and what the next build or load does.

A real ``nlue build`` runs in a subprocess whose swap step hook (``nlue.data.swap._swap_step``) kills
it with SIGKILL at one step. Then: ``<out>/nlue`` is a whole build (the previous one or the new one)
wherever the file system exchanges two paths in one step, and the next load through nlue or the next
build finishes the swap, says so, and leaves exactly the new build, its report and its rejects.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from nlue.cli import main
from nlue.data import swap
from nlue.data.access import load_task
from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.data.staging import owner_marker
from nlue.data.swap import card_digest, journal_path
from nlue.errors import NlueError
from nlue.registry.tasks import TASKS

from .conftest import SENTENCES

# The build's entry point with the hook replaced; where to die comes from the environment.
_KILLED_BUILD = """
import os, signal, sys
from nlue.data import swap
if os.environ.get("KILL_WITHOUT_EXCHANGE"):
    swap._exchange = lambda first, second: False
def step(name):
    if name == os.environ["KILL_AT_STEP"]:
        os.kill(os.getpid(), signal.SIGKILL)
swap._swap_step = step
from nlue.cli import main
sys.exit(main(sys.argv[1:]))
"""
OUTPUT = ["nlue", "nlue.rejects.jsonl", "nlue.report.json"]


def _train(path: Path, rows: int, write_csv) -> Path:
    return write_csv(path, ["text", "label"], [(f"{SENTENCES[i % len(SENTENCES)]} {i}", i % 2) for i in range(rows)])


def _build_args(train: Path, out: Path) -> list[str]:
    return ["build", "--task", "sa", "--train", str(train), "--out", str(out), "--quiet"]


def _killed_build(train: Path, out: Path, step: str, exchange: bool) -> None:
    env = {**os.environ, "KILL_AT_STEP": step, "PYTHONPATH": os.pathsep.join(sys.path)}
    if not exchange:
        env["KILL_WITHOUT_EXCHANGE"] = "1"
    done = subprocess.run([sys.executable, "-c", _KILLED_BUILD, *_build_args(train, out)], env=env, timeout=300)
    assert done.returncode == -signal.SIGKILL, f"the build was not killed at {step!r}"


def _report_digest(out: Path) -> str:
    return json.loads((out / "nlue.report.json").read_text(encoding="utf-8"))["card_sha256"]


CASES = [
    ("journal", True, "load"),
    ("repo exchanged", True, "build"),
    ("previous repo retired", True, "load"),
    ("nlue.rejects.jsonl moved in", True, "build"),
    ("nlue.report.json moved in", True, "load"),
    ("previous repo retired", False, "load"),  # two renames: the moment the output folder is missing
    ("repo moved in", False, "build"),
]


@pytest.mark.parametrize(("step", "exchange", "recover_by"), CASES)
def test_build_killed_between_the_renames_is_finished_by_the_next_load_or_build(
    tmp_path: Path, write_csv, caplog, step: str, exchange: bool, recover_by: str
) -> None:
    if exchange and swap._RENAMEAT2 is None:
        pytest.skip("this system cannot exchange two paths in one step")
    old_train, new_train = _train(tmp_path / "old.csv", 12, write_csv), _train(tmp_path / "new.csv", 20, write_csv)
    reference = tmp_path / "reference"
    assert main(_build_args(new_train, reference)) == 0
    new_card = card_digest(reference / "nlue")
    out = tmp_path / "out"
    assert main(_build_args(old_train, out)) == 0
    old_card = card_digest(out / "nlue")

    _killed_build(new_train, out, step, exchange)

    assert journal_path(out, "nlue").exists()
    if exchange:  # the promise at every instant: the output folder is a whole build, old or new
        assert card_digest(out / "nlue") in (old_card, new_card)
        assert datasets.load_dataset(str(out / "nlue"), "sa")["train"].num_rows > 0
    with caplog.at_level(logging.WARNING):
        if recover_by == "load":
            loaded = load_task(str(out / "nlue"), TASKS["sa"])
            assert loaded["train"].num_rows + loaded["validation"].num_rows == 20
        else:
            assert main(_build_args(new_train, out)) == 0
    assert any("was stopped while it moved its output into place" in r.getMessage() for r in caplog.records)
    assert sorted(os.listdir(out)) == OUTPUT  # no journal, no staging or retired folder left
    assert card_digest(out / "nlue") == _report_digest(out) == new_card


def test_first_build_killed_before_its_repo_moved_in(tmp_path: Path, write_csv, caplog) -> None:
    train = _train(tmp_path / "new.csv", 20, write_csv)
    out = tmp_path / "out"
    _killed_build(train, out, "repo moved in", exchange=True)  # no previous output: one rename
    with caplog.at_level(logging.WARNING):
        load_task(str(out / "nlue"), TASKS["sa"])
    assert any("now finished" in r.getMessage() for r in caplog.records)
    assert sorted(os.listdir(out)) == OUTPUT


def test_a_live_swap_is_waited_for_then_refused(tmp_path: Path, write_csv, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    journal_path(out, "nlue").write_text(
        json.dumps({**owner_marker(), "staging": ".nlue.staging-x", "retired": ".nlue.old-x"}),
        encoding="utf-8",
    )  # this process is alive: its swap is under way
    monkeypatch.setattr(swap, "WAIT_FOR_LIVE_SWAP_SECONDS", 0.2)
    train = _train(tmp_path / "t.csv", 12, write_csv)
    with pytest.raises(NlueError, match="another build is moving its output"):
        build_repo([TaskSources(TASKS["sa"], {"train": [train]})], out, BuildOptions(show_progress=False))
    assert journal_path(out, "nlue").exists() and not (out / "nlue").exists()


def test_a_report_beside_another_build_is_named(tmp_path: Path, write_csv, caplog) -> None:
    out = tmp_path / "out"
    assert main(_build_args(_train(tmp_path / "a.csv", 12, write_csv), out)) == 0
    kept = (out / "nlue.report.json").read_bytes()
    assert main(_build_args(_train(tmp_path / "b.csv", 14, write_csv), out)) == 0
    (out / "nlue.report.json").write_bytes(kept)  # as a copy by hand, or a tool older than the journal, leaves it
    with caplog.at_level(logging.WARNING):
        load_task(str(out / "nlue"), TASKS["sa"])
    assert any("describes another build" in r.getMessage() for r in caplog.records)
