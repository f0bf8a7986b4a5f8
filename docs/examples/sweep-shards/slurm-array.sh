#!/usr/bin/env bash
# One Slurm job-array task per shard of a roster's grid, all writing into one shared folder:
#   sbatch --array=0-2 docs/examples/sweep-shards/slurm-array.sh my-roster.yaml /shared/sweeps/mine
# then, once every task has ended:
#   nlue sweep my-roster.yaml --out /shared/sweeps/mine --collect
#SBATCH --job-name=nlue-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=04:00:00
#SBATCH --output=nlue-sweep-%A_%a.log
set -euo pipefail
roster="$1"
out="$2"
# Slurm numbers the array's tasks from --array's first index; nlue's shards from 1.
shard=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0} + 1))
count="${SLURM_ARRAY_TASK_COUNT:?run this script with sbatch --array}"
# A task that dies (preempted, out of time) leaves its results groups free; running the array again
# (or just that task) finishes them, and skips every cell already done.
exec nlue sweep "$roster" --out "$out" --shard "$shard/$count" --quiet
