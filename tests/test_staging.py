"""A build killed mid-way leaves its staging folder; the next build removes it, and nothing else."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nlue.data import staging as staging_module
from nlue.data.build import build_repo
from nlue.data.report import BuildOptions, TaskSources
from nlue.data.staging import BUILD_OWNER_MARKER, write_owner_marker
from nlue.errors import NlueError
from nlue.registry.tasks import TASKS

from .conftest import SENTENCES


def _sources(tmp_path: Path, write_csv) -> list[TaskSources]:
    rows = [(f"{SENTENCES[i % len(SENTENCES)]} {i}", i % 2) for i in range(12)]
    train = write_csv(tmp_path / "train.csv", ["text", "label"], rows[:8])
    test = write_csv(tmp_path / "test.csv", ["text", "label"], rows[8:])
    return [TaskSources(TASKS["sa"], {"train": [train], "test": [test]})]


def _dead_pid() -> int:
    """The id of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _fake_folder(out: Path, name: str, marker: dict | None) -> Path:
    folder = out / name
    (folder / "nlue" / "sa").mkdir(parents=True)
    (folder / "nlue" / "sa" / "train-00000-of-00001.parquet").write_bytes(b"half written")
    if marker is not None:
        (folder / BUILD_OWNER_MARKER).write_text(json.dumps(marker), encoding="utf-8")
    return folder


def _marker_of(folder: Path) -> dict:
    return json.loads((folder / BUILD_OWNER_MARKER).read_text(encoding="utf-8"))


def test_next_build_removes_stale_staging_and_keeps_everything_else(tmp_path: Path, write_csv, caplog) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # What a live build of ours writes, then the same marker rewritten for a dead owner.
    live = out / ".nlue.staging-live"
    live.mkdir()
    write_owner_marker(live)
    stale_marker = {**_marker_of(live), "pid": _dead_pid()}
    stale = _fake_folder(out, ".nlue.staging-dead1", stale_marker)
    stale_old = _fake_folder(out, ".nlue.old-dead2", stale_marker)
    # Never ours to touch: no marker, another build name, other dot-folders, a symlink.
    unmarked = _fake_folder(out, ".nlue.staging-x", None)
    other_name = _fake_folder(out, ".other.staging-dead3", stale_marker)
    git = _fake_folder(out, ".git", None)
    hidden_file = out / ".nlue.staging-file"
    hidden_file.write_text("a file, not a folder", encoding="utf-8")
    target = _fake_folder(tmp_path, "elsewhere", stale_marker)
    link = out / ".nlue.staging-link"
    link.symlink_to(target, target_is_directory=True)

    with caplog.at_level(logging.INFO, logger="nlue.data.staging"):
        build_repo(_sources(tmp_path, write_csv), out, BuildOptions(show_progress=False))

    assert not stale.exists() and not stale_old.exists()
    # Exactly what was there and not stale, plus the output; the build's own staging and
    # retired folders are gone, and its marker was not moved into the output.
    kept = [".git", ".nlue.staging-file", ".nlue.staging-link", ".nlue.staging-live", ".nlue.staging-x"]
    assert sorted(os.listdir(out)) == sorted(
        [*kept, ".other.staging-dead3", "nlue", "nlue.rejects.jsonl", "nlue.report.json"]
    )
    assert (unmarked / "nlue" / "sa" / "train-00000-of-00001.parquet").exists()
    assert (target / "nlue" / "sa" / "train-00000-of-00001.parquet").exists()
    assert (live / BUILD_OWNER_MARKER).exists() and other_name.exists() and git.exists() and hidden_file.exists()
    assert BUILD_OWNER_MARKER not in os.listdir(out / "nlue")
    removed = [r.getMessage() for r in caplog.records if "stale" in r.getMessage()]
    assert len(removed) == 2 and any(".nlue.staging-dead1" in m for m in removed)
    assert all(f"pid {stale_marker['pid']}" in m for m in removed)


def test_pid_reused_by_another_process_is_stale(tmp_path: Path, write_csv) -> None:
    out = tmp_path / "out"
    out.mkdir()
    probe = out / ".nlue.staging-probe"
    probe.mkdir()
    write_owner_marker(probe)
    mine = _marker_of(probe)
    probe.rename(out / ".nlue.staging-live")
    if mine.get("process_start") is None:
        pytest.skip("no process start times on this system")
    # Our own pid, alive, but started at another time: the pid was reused after the owner died.
    reused = _fake_folder(out, ".nlue.staging-reused", {**mine, "process_start": "1"})
    build_repo(_sources(tmp_path, write_csv), out, BuildOptions(show_progress=False))
    assert not reused.exists()
    assert (out / ".nlue.staging-live").exists()


def test_other_hosts_folders_wait_for_the_age_limit(tmp_path: Path, write_csv) -> None:
    out = tmp_path / "out"
    out.mkdir()
    other_host = {"tool": "nlue build", "pid": 1, "host": socket.gethostname() + "-elsewhere", "started": time.time()}
    recent = _fake_folder(out, ".nlue.staging-recent", other_host)
    old = _fake_folder(
        out, ".nlue.staging-ancient", {**other_host, "started": time.time() - staging_module.STALE_AFTER_SECONDS - 60}
    )
    broken = _fake_folder(out, ".nlue.staging-broken", None)
    (broken / BUILD_OWNER_MARKER).write_text("{not json", encoding="utf-8")
    build_repo(_sources(tmp_path, write_csv), out, BuildOptions(show_progress=False))
    assert recent.exists() and broken.exists()
    assert not old.exists()


def test_failed_build_keeps_stale_retired_copy(tmp_path: Path, write_csv) -> None:
    """A ``.old-`` folder may hold the only copy of an output whose move was cut short."""
    out = tmp_path / "out"
    out.mkdir()
    probe = out / "probe"
    probe.mkdir()
    write_owner_marker(probe)
    dead = {**_marker_of(probe), "pid": _dead_pid()}
    stale_staging = _fake_folder(out, ".nlue.staging-dead", dead)
    stale_old = _fake_folder(out, ".nlue.old-dead", dead)
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(NlueError, match="empty"):
        build_repo([TaskSources(TASKS["sa"], {"train": [empty]})], out, BuildOptions(show_progress=False))
    assert not stale_staging.exists()
    assert stale_old.exists()
    build_repo(_sources(tmp_path, write_csv), out, BuildOptions(show_progress=False))
    assert not stale_old.exists()
