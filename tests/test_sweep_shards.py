"""`nlue sweep --shard K/N` and `--collect` (issue 31, item 1): one grid cut into jobs that share an output folder.

The partition is checked on its own; the claims with a holder process that is alive, then killed; and a
sharded run end to end through the docs' Slurm job-array script: four tiny masked LMs' GMET cells as two
array tasks into one folder, one killed and run again, then collected, against the same grid unsharded.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from nlue.cli_support import EXIT_INPUT
from nlue.errors import NlueError
from nlue.evals.sweep.grid import Cell, Cost
from nlue.evals.sweep.run import SweepState
from nlue.evals.sweep.shards import parse_shard, partition, shard_cells, work
from tests.sweep_processes import start_sweep, sweep_env

MODELS = ("mlm-a", "mlm-b", "mlm-c", "mlm-d")
SLURM_SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "examples" / "sweep-shards" / "slurm-array.sh"


def _finished(process: subprocess.Popen, code: int = 0) -> str:
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == code, stderr[-3000:] + stdout[-3000:]
    return stdout


def _cell(model: str, task: str, requests: int = 0, trainings: int = 0) -> Cell:
    argv = ("llm", "nlue", "--model", model, "--tasks", task)
    return Cell(model, "llm nlue", task, argv, model, "runs[0]", task, Cost(trainings=trainings, requests=requests))


# ------------------------------------------------------------------ the partition
def test_every_cell_is_in_exactly_one_shard_and_a_results_group_is_never_split() -> None:
    cells = [_cell(m, t, requests=r) for m, r in (("a", 900), ("b", 40), ("c", 40), ("d", 10), ("e", 700))
             for t in ("sa", "rte", "stsb")]  # fmt: skip
    cells.append(_cell("f", "sa", trainings=2))
    for count in (1, 2, 3, 5, 8):
        shards = partition(cells, count)
        assert len(shards) == count
        ids = [c.id for shard in shards for c in shard]
        assert sorted(ids) == sorted(c.id for c in cells) and len(set(ids)) == len(cells)
        for shard in shards:
            assert shard == [c for c in cells if c in shard]  # the grid's order
        groups = {c.results_name: {i for i, s in enumerate(shards) if any(x.results_name == c.results_name for x in s)}
                  for c in cells}  # fmt: skip
        assert all(len(where) == 1 for where in groups.values())
    # Largest group first, each to the least loaded shard: a (2,700), e (2,100) and the fine-tuning f (2,000)
    # one each, then b (120) to f's shard, c (120) to e's, d (30) to f's again.
    loads = [sum(work(c) for c in shard) for shard in partition(cells, 3)]
    assert loads == [2700, 2100 + 120, 2000 + 120 + 30]


def test_the_partition_is_the_same_in_every_process() -> None:
    """What a Slurm array's jobs rely on: each computes the same shards from the same grid, in a new process."""
    cells = [_cell(f"m{i}", t, requests=(i * 37) % 11) for i in range(9) for t in ("sa", "rte")]
    here = [[c.id for c in shard_cells(cells, k, 4)] for k in range(1, 5)]
    program = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from tests.test_sweep_shards import _cell
        from nlue.evals.sweep.shards import shard_cells
        cells = [_cell(f"m{{i}}", t, requests=(i * 37) % 11) for i in range(9) for t in ("sa", "rte")]
        print(json.dumps([[c.id for c in shard_cells(cells, k, 4)] for k in range(1, 5)]))
    """)
    there = subprocess.run([sys.executable, "-c", program], env={**sweep_env(), "PYTHONHASHSEED": "123"},
                           capture_output=True, text=True, check=True, timeout=120).stdout  # fmt: skip
    assert here == yaml.safe_load(there)


@pytest.mark.parametrize("text", ["", "3", "0/3", "4/3", "1/0", "a/b", "1/3/4", "-1/3"])
def test_a_shard_that_is_not_k_of_n_is_refused(text: str) -> None:
    with pytest.raises(NlueError, match="--shard"):
        parse_shard(text)
    assert parse_shard(" 2 / 3 ") == (2, 3)


# ------------------------------------------------------------------ claims
def _roster(folder: Path, dataset: Path, models: dict[str, Path], out: Path) -> Path:
    roster = {"name": "shards", "out": str(out), "datasets": {"nlue": str(dataset)},
              "defaults": {"limit": 2, "bootstrap_resamples": 0},
              "models": [{"name": n, "id": str(p), "kind": "masked-lm"} for n, p in models.items()],
              "runs": [{"run": "gmet"}]}  # fmt: skip
    path = folder / "shards.yaml"
    path.write_text(yaml.safe_dump(roster), encoding="utf-8")
    return path


def _hold(claim: Path) -> subprocess.Popen:
    """Another job holding a results group: a process with the group's claim locked, until it is killed."""
    program = (f"import fcntl, os, sys, time\nfd = os.open({str(claim)!r}, os.O_RDWR | os.O_CREAT)\n"
               "fcntl.flock(fd, fcntl.LOCK_EX)\nos.write(fd, b'elsewhere pid %d: group' % os.getpid())\n"
               "print('held', flush=True)\ntime.sleep(600)\n")  # fmt: skip
    holder = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_group_held_by_a_live_job_is_passed_over_and_taken_over_once_it_dies(tmp_path: Path, sample_build) -> None:
    """Two cells whose models are empty folders (each fails at once): the first's group is held by another
    process, so the sweep passes over it and runs the second; once the holder is killed, the rerun takes it."""
    models = {name: tmp_path / name for name in ("empty-a", "empty-b")}
    for folder in models.values():
        folder.mkdir()
    out = tmp_path / "out"
    roster = _roster(tmp_path, sample_build.repo_dir, models, out)
    claim = SweepState(out).claim_path("empty-a")
    claim.parent.mkdir(parents=True)
    holder = _hold(claim)
    try:
        stdout = _finished(start_sweep(str(roster), "--start", "spawn", "-q", cwd=tmp_path), 1)
        assert "1 failed, 0 not run, 1 running elsewhere" in stdout
        assert "running elsewhere empty-a · gmet" in stdout and f"(elsewhere pid {holder.pid}: group)" in stdout
        assert len(list((out / "sweep" / "failed").glob("*.json"))) == 1  # empty-b's
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    stdout = _finished(start_sweep(str(roster), "--start", "spawn", "-q", cwd=tmp_path), 1)
    assert "2 failed, 0 not run" in stdout and "running elsewhere" not in stdout


# ------------------------------------------------------------------ shards end to end
@pytest.fixture(scope="module")
def masked_lms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("transformers")
    from nlue.lm.tiny import save_tiny_encoder

    folder = tmp_path_factory.mktemp("mlms")
    return {name: save_tiny_encoder(folder / name, "roberta", seed=i) for i, name in enumerate(MODELS)}


def _results(out: Path) -> dict[str, tuple]:
    """The numbers of each results file (what two runs of one cell must agree on; dates and timings differ)."""
    found = {}
    for path in sorted((out / "results").glob("*/*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found[path.relative_to(out / "results").as_posix()] = (data["task"], data["primary_score"], data["metrics"])
    return found


def _array_task(roster: Path, out: Path, task: int, count: int, cwd: Path) -> subprocess.Popen:
    """One task of the documented Slurm job array, run here as Slurm would run it: the script with the array's
    variables set (its #SBATCH lines are comments to bash)."""
    env = {**sweep_env(), "SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_MIN": "0",
           "SLURM_ARRAY_TASK_COUNT": str(count), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    return subprocess.Popen(["bash", str(SLURM_SCRIPT), str(roster), str(out)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_two_shards_into_one_folder_one_killed_and_rerun_collect_to_the_unsharded_results(
    tmp_path: Path, sample_build, masked_lms: dict[str, Path]
) -> None:
    """The docs' Slurm array script as two local array tasks into one folder; the second killed inside a cell and
    run again; collected, the results equal the same grid's run unsharded."""
    whole, shared = tmp_path / "whole", tmp_path / "shared"
    roster = _roster(tmp_path, sample_build.repo_dir, masked_lms, whole)
    _finished(start_sweep(str(roster), "-q", cwd=tmp_path))
    dry = _finished(start_sweep(str(roster), "--out", str(shared), "--shard", "2/2", "--dry-run", cwd=tmp_path))
    assert "2/2 <- this job" in dry and "4 models, 2 cells, out" in dry  # the shard's half of the grid
    first = _array_task(roster, shared, 0, 2, tmp_path)
    second = _array_task(roster, shared, 1, 2, tmp_path)
    deadline = time.monotonic() + 300  # kill the second once it is inside a cell
    while not list((shared / "sweep" / "logs").glob("*.log")) and time.monotonic() < deadline:
        time.sleep(0.2)
    second.send_signal(signal.SIGKILL)
    second.wait(timeout=60)
    out_first = _finished(first)
    assert "(shard 1/2)" in out_first and "--collect" in out_first
    unfinished = _finished(start_sweep(str(roster), "--out", str(shared), "--collect", cwd=tmp_path), 1)
    assert "cells not done yet" in unfinished
    _finished(_array_task(roster, shared, 1, 2, tmp_path))  # the killed task, run again
    summary = _finished(start_sweep(str(roster), "--out", str(shared), "--collect", cwd=tmp_path))
    assert "4 cells: 0 ran, 4 skipped (done before), 0 failed, 0 not run" in summary
    assert all(name in summary for name in MODELS)
    assert (shared / "results" / "summary.md").is_file()
    assert _results(shared) == _results(whole) and len(_results(whole)) == len(MODELS)

    # Jobs that ran into folders of their own: gathered into a third. Every cell is done in both, with the same
    # numbers and per-item predictions, so each is taken once.
    gathered = tmp_path / "gathered"
    stdout = _finished(start_sweep(str(roster), "--out", str(gathered), "--collect", "--from", str(shared), "--from",
                              str(whole), cwd=tmp_path))  # fmt: skip
    assert f"gathered 4 done cells into {gathered}" in stdout and "4 skipped (done before)" in stdout
    assert _results(gathered) == _results(whole)
    assert sorted(p.name for p in (gathered / "results").glob("*/*.predictions.jsonl")) == sorted(
        p.name for p in (whole / "results").glob("*/*.predictions.jsonl")
    )
    # The same cell with another score elsewhere: refused, every such cell named, nothing gathered.
    edited = tmp_path / "edited"
    shutil.copytree(whole, edited)
    changed = sorted((edited / "results").glob("mlm-b*/*.json"))[0]
    data = json.loads(changed.read_text(encoding="utf-8"))
    data["primary_score"] = 0.99
    changed.write_text(json.dumps(data), encoding="utf-8")
    relative = changed.relative_to(edited / "results").as_posix()
    for marker in (edited / "sweep" / "done").glob("*.json"):  # as if that run had written this file
        record = json.loads(marker.read_text(encoding="utf-8"))
        if relative in record["results"]:
            record["stamps"][relative] = [changed.stat().st_mtime_ns, changed.stat().st_size]
            marker.write_text(json.dumps(record), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    process = start_sweep(str(roster), "--out", str(elsewhere), "--collect", "--from", str(whole), "--from", str(edited),
                     cwd=tmp_path)  # fmt: skip
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == EXIT_INPUT, stderr
    assert "1 cells were run twice with different results; nothing was gathered" in stderr
    assert "mlm-b · gmet" in stderr and "other numbers in" in stderr
    assert not list(elsewhere.glob("sweep/done/*.json")) and not list(elsewhere.glob("results/*/*.json"))


def test_collect_refuses_a_shard(tmp_path: Path, sample_build) -> None:
    roster = _roster(tmp_path, sample_build.repo_dir, {"m": tmp_path}, tmp_path / "out")
    process = start_sweep(str(roster), "--collect", "--shard", "1/2", cwd=tmp_path)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == EXIT_INPUT and "--collect runs nothing" in stderr
