"""One Ray task per shard of a roster's grid, all writing into one shared folder, then the whole grid's summary.

    python ray_shards.py my-roster.yaml /shared/sweeps/mine --shards 8 --address auto
    python ray_shards.py my-roster.yaml /shared/sweeps/mine --shards 8 --address auto -- --limit 50

Each task runs ``nlue sweep ROSTER --out OUT --shard K/N`` in a process of its own on whichever node Ray
gives it, with the Python (and so the nlue) of that node's Ray worker. A task whose worker dies (a node
lost, an out-of-memory kill) is run again by Ray (``--retries``), and so is one whose sweep was killed by a
signal; the rerun skips every cell already done and takes over the groups the dead job held. A cell that
fails is not retried (its shard exits 1 and the collection names it). Once every task has ended this runs
``nlue sweep ROSTER --out OUT --collect`` here and exits with its status: 0 when every cell is done.

Without ``--address`` (and no ``RAY_ADDRESS``) Ray starts a cluster on this machine for the run, even where
this machine is part of one (``--address auto`` joins that).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Callable

import ray


class ShardKilled(RuntimeError):
    """The shard's sweep ended by a signal (killed, out of memory): worth running again."""


def _die_with_worker() -> Callable[[], object] | None:
    """What the shard's process calls before it starts: have the kernel kill it when the Ray worker that started
    it dies (Linux), so that no orphan goes on holding its groups. Looked up here, before the fork: between
    fork and exec in a process with threads (a Ray worker has many) only such a plain call is safe."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def sweep_command(roster: str, out: str, shard: int, count: int, extra: list[str]) -> list[str]:
    """The shard's ``nlue sweep`` command line, with this process's Python."""
    return [sys.executable, "-m", "nlue.cli", "sweep", roster, "--out", out, "--shard", f"{shard}/{count}",
            "--quiet", *extra]  # fmt: skip


@ray.remote(num_cpus=1)
def run_shard(roster: str, out: str, shard: int, count: int, extra: list[str]) -> tuple[int, int, str]:
    """Shard ``shard`` of ``count``: (shard, exit code, the end of its output)."""
    command = sweep_command(roster, out, shard, count, extra)
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=_die_with_worker())
    if done.returncode < 0:
        raise ShardKilled(f"shard {shard}/{count} killed by signal {-done.returncode}")
    return shard, done.returncode, (done.stdout + done.stderr)[-2000:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roster", help="the roster YAML (a path every node can read) or a shipped roster's name")
    parser.add_argument("out", help="the sweep's output folder, on a file system every node shares")
    parser.add_argument("--shards", type=int, default=4, help="how many shards (Ray tasks) to cut the grid into")
    parser.add_argument("--address", default=os.environ.get("RAY_ADDRESS") or "local",
                        help="the Ray cluster to join: HOST:PORT, or 'auto' for the one this node is part of; "
                        "default: RAY_ADDRESS, else 'local', a cluster started here for the run")  # fmt: skip
    parser.add_argument("--cpus-per-shard", type=float, default=1, help="CPUs Ray reserves for each shard's task")
    parser.add_argument("--gpus-per-shard", type=float, default=0, help="GPUs Ray reserves for each shard's task")
    parser.add_argument("--retries", type=int, default=2, help="how often a shard whose job died is run again")
    parser.epilog = "Options after -- go to every nlue sweep: -- --limit 50 --models xlmr mbert"
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.sweep_args = argv[cut + 1 :]
    if args.shards < 1:
        parser.error("--shards must be at least 1")

    # A cluster started here for the run needs no dashboard; one joined keeps its own settings.
    local = {"include_dashboard": False} if args.address == "local" else {}
    ray.init(address=args.address, log_to_driver=False, **local)
    try:
        task = run_shard.options(num_cpus=args.cpus_per_shard, num_gpus=args.gpus_per_shard,
                                 max_retries=args.retries, retry_exceptions=[ShardKilled])  # fmt: skip
        pending = [task.remote(args.roster, args.out, k, args.shards, args.sweep_args)
                   for k in range(1, args.shards + 1)]  # fmt: skip
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            try:
                shard, code, tail = ray.get(ready[0])
            except (ray.exceptions.RayError, ShardKilled) as exc:  # out of retries
                print(f"a shard did not finish: {exc}", file=sys.stderr)
                continue
            print(f"shard {shard}/{args.shards}: exit {code}", flush=True)
            if code != 0:
                print(tail, file=sys.stderr)
    finally:
        ray.shutdown()
    collect = [sys.executable, "-m", "nlue.cli", "sweep", args.roster, "--out", args.out, "--collect", *args.sweep_args]
    return subprocess.run(collect).returncode


if __name__ == "__main__":
    sys.exit(main())
