"""`nlue sweep --shard K/N` and `--collect` (issue 31, item 1): one grid cut into jobs that share an output folder.

The partition is checked on its own; the claims with a holder process that is alive, then killed; and a
12-cell grid (tiny masked LMs' GMET cells, tiny causal LMs' llm nlue cells) run end to end through the docs'
recipes, each against the same grid unsharded: the Slurm job-array script as three array tasks into one folder,
one killed inside a cell and run again, then collected; the Ray script on a local two-node cluster, a worker
killed inside a cell and its task run again by Ray.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import socket
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
from nlue.evals.sweep.run import STALE_SECONDS, SweepState
from nlue.evals.sweep.shards import parse_shard, partition, shard_cells, work
from tests.ray_local import RAY_ON_LOOPBACK
from tests.sweep_processes import results_of, start_sweep, sweep_env

MASKED = ("mlm-a", "mlm-b", "mlm-c", "mlm-d")
CAUSAL = ("clm-a", "clm-b")
RECIPES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "sweep-shards"
SLURM_SCRIPT, RAY_SCRIPT = RECIPES / "slurm-array.sh", RECIPES / "ray_shards.py"
K8S_JOB = RECIPES / "k8s-indexed-job.yaml"


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
def _roster(folder: Path, dataset: Path, masked: dict[str, Path], out: Path, causal: dict[str, Path] | None = None,
            ) -> Path:  # fmt: skip
    """GMET on the masked LMs; with causal LMs, also llm nlue on sa by log-likelihood and generation, 0 and 1 shot."""
    roster = {"name": "shards", "out": str(out), "datasets": {"nlue": str(dataset)},
              "defaults": {"limit": 2, "bootstrap_resamples": 0},
              "models": [{"name": n, "id": str(p), "kind": "masked-lm"} for n, p in masked.items()]
                        + [{"name": n, "id": str(p), "kind": "causal-lm"} for n, p in (causal or {}).items()],
              "runs": [{"run": "gmet"}]}  # fmt: skip
    if causal:
        roster["runs"].append({"run": "llm nlue", "tasks": ["sa"], "prompt_languages": ["en"],
                               "modes": ["loglik", "generate"], "shots": [0, 1], "max_new_tokens": 4})  # fmt: skip
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
        dry = _finished(start_sweep(str(roster), "--dry-run", cwd=tmp_path))  # who runs what, by the claim
        assert f"running: empty-a held by elsewhere pid {holder.pid}: group (heartbeat" in dry
        assert [line.split()[1] for line in dry.splitlines() if line.startswith(("1 ", "2 "))] == ["running", "failed"]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    # The holder named another host and its heartbeat is fresh: the rerun takes the group (its lock is free) and
    # says that either that job has just died or the locks here do not reach across machines.
    rerun = start_sweep(str(roster), "--start", "spawn", "-q", cwd=tmp_path)
    stdout, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 1 and "2 failed, 0 not run" in stdout and "running elsewhere" not in stdout
    assert "its lock was free, yet its claim names a job that was alive a moment ago" in stderr
    assert SweepState(out).live_claim("empty-a") == "" and claim.read_text(encoding="utf-8") == ""  # let go


def test_a_claim_names_its_job_while_it_runs_and_its_heartbeat_tells_a_live_job_from_a_dead_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """issue 31, item 1 (a claim taken over after its heartbeat stops): the claim file names the job holding it and
    is emptied when let go; a claim whose lock is free but which names a job with a fresh heartbeat (another
    host's: locks that do not reach across machines, as on an NFS mount without them) is reported, and one whose
    heartbeat stopped (older than STALE_SECONDS, or a process of this host that has ended) is taken silently."""
    state = SweepState(tmp_path)
    with state.claim("model-a") as fd:
        assert fd is not None
        assert state.holder("model-a") == f"{socket.gethostname()} pid {os.getpid()}: model-a"
        assert state.live_claim("model-a").endswith("(heartbeat 0 s ago)")
    assert state.holder("model-a") == "" and state.live_claim("model-a") == ""

    claim = state.claim_path("model-a")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    for holder, age, reported in (("other-host pid 4242: model-a", 5, True),
                                  ("other-host pid 4242: model-a", STALE_SECONDS + 5, False),
                                  (f"{socket.gethostname()} pid {gone}: model-a", 5, False)):  # fmt: skip
        claim.write_text(holder + "\n", encoding="utf-8")
        os.utime(claim, (time.time() - age, time.time() - age))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="nlue.evals.sweep.run"), state.claim("model-a") as fd:
            assert fd is not None  # the lock is free: the group is taken either way
        warned = "locks on this file system do not reach across machines" in caplog.text
        assert warned == reported, (holder, age, caplog.text)
        assert holder in caplog.text if reported else True


def test_a_running_cell_refreshes_its_claims_heartbeat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 31, item 1: while a cell runs, the sweep calls its heartbeat every HEARTBEAT_SECONDS (here 20 ms)."""
    from nlue.evals.sweep import cells

    monkeypatch.setattr(cells, "HEARTBEAT_SECONDS", 0.02)
    beats = []
    code = cells.run_cell(["sweep", "--list"], tmp_path / "cell.log", "spawn", heartbeat=lambda: beats.append(1))
    assert code == 0 and len(beats) >= 3


# ------------------------------------------------------------------ shards end to end
@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory, sample_build) -> tuple[Path, Path]:
    """The roster of the end-to-end tests, 12 cells in 6 results groups (4 tiny masked LMs' GMET cells, 2 tiny
    causal LMs' llm nlue cells in 2 modes and 2 shots), and the folder of its run unsharded (the roster's out)."""
    pytest.importorskip("transformers")
    from nlue.lm.tiny import save_tiny_causal_lm, save_tiny_encoder

    folder = tmp_path_factory.mktemp("grid")
    masked = {name: save_tiny_encoder(folder / name, "roberta", seed=i) for i, name in enumerate(MASKED)}
    causal = {name: save_tiny_causal_lm(folder / name, seed=10 + i) for i, name in enumerate(CAUSAL)}
    whole = folder / "whole"
    roster = _roster(folder, sample_build.repo_dir, masked, whole, causal)
    with pytest.MonkeyPatch.context() as patch:  # its answers in a cache of its own, which a test reuses
        patch.setenv("NLUE_ANSWER_CACHE", str(folder / "cache"))
        stdout = _finished(start_sweep(str(roster), "-q", cwd=folder))
    assert "12 cells: 12 ran" in stdout
    found = results_of(whole)
    assert len(found) == 12 and sum("sa/raw_outputs.jsonl" in r[3] for r in found.values()) == 4  # generations'
    return roster, whole


def _answers_lines(out: Path) -> list[str]:
    """The `answers: N asked, M from the cache` line of every cell that asked a model, from the cells' logs."""
    logs = sorted((out / "sweep" / "logs").glob("*.log"))
    return [
        line for log in logs for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("answers:")
    ]


def test_the_same_sweep_again_sends_no_request(
    tmp_path: Path, grid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 31, items 1 and 2 (done when): the 12-cell sweep run again, into another folder with the cache of its
    first (unsharded) run, sends 0 requests: each of its 8 LLM cells says `answers: 0 asked` where the first run's
    asked, and the results are the same. (GMET's masked-LM fill-ins are local computation, not requests.)"""
    roster, whole = grid
    monkeypatch.setenv("NLUE_ANSWER_CACHE", str(whole.parent / "cache"))  # the unsharded run's answers
    again = tmp_path / "again"
    _finished(start_sweep(str(roster), "--out", str(again), "-q", cwd=tmp_path))
    asked = _answers_lines(whole)
    assert len(asked) == 8 and not any(line.startswith("answers: 0 asked") for line in asked), asked
    reused = _answers_lines(again)
    assert len(reused) == 8 and all(line.startswith("answers: 0 asked") for line in reused), reused
    assert results_of(again) == results_of(whole)


def _array_task(roster: Path, out: Path, task: int, count: int, cwd: Path) -> subprocess.Popen:
    """One task of the documented Slurm job array, run here as Slurm would run it: the script with the array's
    variables set (its #SBATCH lines are comments to bash)."""
    env = {**sweep_env(), "SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_MIN": "0",
           "SLURM_ARRAY_TASK_COUNT": str(count), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    return subprocess.Popen(["bash", str(SLURM_SCRIPT), str(roster), str(out)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _kill_inside_a_cell(process: subprocess.Popen, deadline: float) -> None:
    """SIGKILL a sweep once it has a cell's process running: the cell cannot be done, since only the sweep writes
    its marker, after the cell's process ended (and that process dies with the sweep)."""
    import psutil

    sweep = psutil.Process(process.pid)  # the array script execs nlue sweep: the same process
    while not sweep.children() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sweep.children(), "the shard ended before it ran a cell"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)


def test_three_shards_into_one_folder_one_killed_and_rerun_collect_to_the_unsharded_results(
    tmp_path: Path, grid: tuple[Path, Path]
) -> None:
    """issue 31, item 1: a 12-cell sweep as 3 shards, the docs' Slurm array script run as 3 local array tasks at
    once into one folder, one SIGKILLed inside a cell and run again; collected, the results (scores and per-item
    predictions byte for byte) equal the same grid's run unsharded."""
    roster, whole = grid
    shared = tmp_path / "shared"
    dry = _finished(start_sweep(str(roster), "--out", str(shared), "--shard", "2/3", "--dry-run", cwd=tmp_path))
    assert "2/3 <- this job" in dry and "6 models, 5 cells, out" in dry  # a GMET and an llm nlue group
    tasks = [_array_task(roster, shared, task, 3, tmp_path) for task in range(3)]
    _kill_inside_a_cell(tasks[1], time.monotonic() + 300)
    outputs = [_finished(tasks[0]), _finished(tasks[2])]
    assert "(shard 1/3)" in outputs[0] and "(shard 3/3)" in outputs[1] and "--collect" in outputs[0]
    unfinished = _finished(start_sweep(str(roster), "--out", str(shared), "--collect", cwd=tmp_path), 1)
    assert "cells not done yet" in unfinished
    _finished(_array_task(roster, shared, 1, 3, tmp_path))  # the killed task, run again
    summary = _finished(start_sweep(str(roster), "--out", str(shared), "--collect", cwd=tmp_path))
    assert "12 cells: 0 ran, 12 skipped (done before), 0 failed, 0 not run" in summary
    assert all(name in summary for name in (*MASKED, *CAUSAL))
    assert (shared / "results" / "summary.md").is_file()
    assert results_of(shared) == results_of(whole)

    # Jobs that ran into folders of their own: gathered into a third. Every cell is done in both, with the same
    # numbers and per-item predictions, so each is taken once.
    gathered = tmp_path / "gathered"
    stdout = _finished(start_sweep(str(roster), "--out", str(gathered), "--collect", "--from", str(shared), "--from",
                              str(whole), cwd=tmp_path))  # fmt: skip
    assert f"gathered 12 done cells into {gathered}" in stdout and "12 skipped (done before)" in stdout
    assert results_of(gathered) == results_of(whole)
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


# ------------------------------------------------------------------ the Ray recipe
def _worker_of(shard: str, deadline: float) -> int:
    """The pid of the Ray worker running ``nlue sweep ... --shard SHARD``, once that sweep runs a cell."""
    import psutil

    while time.monotonic() < deadline:
        for process in psutil.Process().children(recursive=True):  # the cluster's processes are this test's
            with contextlib.suppress(psutil.Error):
                command = process.cmdline()
                if "sweep" in command and shard in command and process.children():
                    return process.ppid()
        time.sleep(0.05)
    raise AssertionError(f"no sweep of shard {shard} ran a cell")


def test_the_ray_recipe_on_a_two_node_cluster_collects_to_the_unsharded_results(
    tmp_path: Path, grid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 31, item 1: the docs' Ray script on a local cluster of two nodes (a head and a worker node, one CPU
    each): one Ray task per shard into one folder; the worker running shard 2 is SIGKILLed inside a cell and Ray
    runs the task again; the script's collection exits 0 with the results of the grid run unsharded."""
    pytest.importorskip("ray", reason="the Ray recipe needs ray (pip install ray)")
    from ray.cluster_utils import Cluster

    roster, whole = grid
    shared = tmp_path / "shared"
    for key, value in {**sweep_env(), **RAY_ON_LOOPBACK}.items():
        monkeypatch.setenv(key, value)  # the cluster's workers start with this environment
    # One CPU a node, and none of the processes a run here has no use for: the dashboard, the autoscaler's
    # monitor, the log monitor (the script does not show the workers' output).
    small = {"num_cpus": 1, "object_store_memory": 80 * 2**20, "include_log_monitor": False,
             "node_ip_address": "127.0.0.1"}  # fmt: skip
    cluster = Cluster(initialize_head=True, head_node_args={**small, "include_dashboard": False, "no_monitor": True})
    try:
        cluster.add_node(**small)
        cluster.wait_for_nodes()
        script = subprocess.Popen([sys.executable, str(RAY_SCRIPT), str(roster), str(shared), "--shards", "3",
                                   "--address", cluster.address], cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            os.kill(_worker_of("2/3", time.monotonic() + 120), signal.SIGKILL)
            stdout, stderr = script.communicate(timeout=240)  # about 25 s here
            assert script.returncode == 0, stderr[-3000:] + stdout[-3000:]
        finally:
            script.kill()
            script.wait(timeout=60)
    finally:
        cluster.shutdown()
    assert all(f"shard {k}/3: exit 0" in stdout for k in (1, 2, 3))
    assert "12 cells: 0 ran, 12 skipped (done before), 0 failed, 0 not run" in stdout
    assert results_of(shared) == results_of(whole)


# ------------------------------------------------------------------ the Kubernetes recipe
def test_the_kubernetes_indexed_job_runs_shard_k_of_n_in_pod_k(tmp_path: Path) -> None:
    """issue 31, item 1: the docs' Indexed Job (no Kubernetes here, so not applied to a cluster): it parses as a
    batch/v1 Indexed Job of N pods, and each pod's command, run by sh as the pod runs it with its
    JOB_COMPLETION_INDEX, is ``nlue sweep ROSTER --out OUT --shard K/N`` (K = index + 1), valid for nlue sweep's
    parser, with the roster and the folder on the shared volume and the collection the header names."""
    from nlue.evals.sweep.cli import build_parser

    text = K8S_JOB.read_text(encoding="utf-8")
    job = yaml.safe_load(text)
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"], spec["completionMode"]) == ("batch/v1", "Job", "Indexed")
    count = spec["completions"]
    assert spec["parallelism"] == count and count > 1
    (container,) = spec["template"]["spec"]["containers"]
    assert container["command"] == ["/bin/sh", "-c"] and len(container["args"]) == 1
    stand_in = tmp_path / "nlue"  # prints the arguments it is given, one a line
    stand_in.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n', encoding="utf-8")
    stand_in.chmod(0o755)
    mounts = [m["mountPath"] for m in container["volumeMounts"]]
    for index in range(count):
        env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}", "JOB_COMPLETION_INDEX": str(index)}
        argv = subprocess.run(["/bin/sh", "-c", container["args"][0]], env=env, capture_output=True, text=True,
                              check=True, timeout=30).stdout.splitlines()  # fmt: skip
        args = build_parser().parse_args(argv[1:])
        assert argv[0] == "sweep" and args.shard == f"{index + 1}/{count}" and not args.collect
        assert all(any(str(p).startswith(f"{m}/") for m in mounts) for p in (args.roster, args.out))
        assert f"nlue sweep {args.roster} --out {args.out} --collect" in text
    guide = (RECIPES.parents[1] / "guides" / "compare.md").read_text(encoding="utf-8")
    assert '--8<-- "sweep-shards/k8s-indexed-job.yaml"' in guide  # the page shows this very file
    assert "--shard $((JOB_COMPLETION_INDEX + 1))/N" in guide
