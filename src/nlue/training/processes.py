"""Training in several processes (torchrun, accelerate launch): the settings a launched process needs, and the
checks that it really trains as one of a group.

A launcher starts every process with ``WORLD_SIZE`` (torchrun, accelerate's multi-process launcher) or MPI's
size variables (mpirun) in its environment. On a machine with no GPU, transformers and accelerate set up a
process group but leave the model unwrapped unless told to use the CPU: each process then trains a model of
its own on its share of the data, no gradient is exchanged, and the first process saves a model that saw half
the data. :func:`settle_cpu_processes` turns on the CPU path (gloo, or MPI where torch has it) before the
devices are set up, and :func:`check_processes` refuses a run whose processes would not exchange gradients.

The effective batch (items behind one optimizer step) is the per-device batch times the processes times the
gradient accumulation steps: :func:`effective_batch`. Two processes at batch B and one at 2B see the same
items per step (the training sampler deals consecutive batches to the processes in turn).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from nlue.errors import NlueError

logger = logging.getLogger(__name__)

# Where launchers put the size of the group: torchrun and accelerate's launchers, then MPI's (the order
# accelerate reads them in).
_SIZE_VARIABLES = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
_RANK_VARIABLES = ("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")


def _first_int(names: tuple[str, ...], environ: Any) -> int | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def launched_processes(environ: Any = None) -> int:
    """How many processes the launcher started in this run (1 when none did)."""
    return _first_int(_SIZE_VARIABLES, os.environ if environ is None else environ) or 1


def process_label(environ: Any = None) -> str:
    """`` (process R of N)`` for a launched process, so that a failing one says which it is; else empty."""
    environ = os.environ if environ is None else environ
    size = launched_processes(environ)
    if size <= 1:
        return ""
    return f" (process {_first_int(_RANK_VARIABLES, environ) or 0} of {size})"


def _has_accelerator() -> bool:
    import torch

    accelerator = getattr(torch, "accelerator", None)  # torch >= 2.6: CUDA, XPU, MPS, ...
    return bool(accelerator.is_available()) if accelerator is not None else torch.cuda.is_available()


def settle_cpu_processes(args: Any) -> None:
    """Before transformers sets up the devices: a launched process on a machine without a GPU trains on the CPU
    as one of the group (``use_cpu``; accelerate then picks gloo, or MPI where torch was built with it)."""
    if launched_processes() > 1 and not args.use_cpu and not _has_accelerator():
        args.use_cpu = True
        logger.debug("no GPU here: the %d processes train on the CPU and exchange gradients over gloo or MPI",
                     launched_processes())  # fmt: skip
    elif launched_processes() == 1 and _one_process_of_many_asked():
        logger.warning(
            "accelerate launch --cpu started this one process only (without --mpirun_hostfile it starts one, "
            "whatever --num_processes says); for several CPU processes on one machine use torchrun "
            "--nproc_per_node N or accelerate launch --multi_gpu --num_processes N (docs: the training guide)"
        )


def _one_process_of_many_asked() -> bool:
    """accelerate's single-process launcher, asked for several CPU processes: it sets the rendezvous address
    (only when --num_processes > 1) and the CPU flag, but no group size."""
    return os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("true", "1") and "MASTER_ADDR" in os.environ


def check_processes(args: Any) -> None:
    """Refuse a launched run in which the processes would not train one model together."""
    launched = launched_processes()
    if launched <= 1:
        return
    from accelerate.utils import DistributedType

    state = args.distributed_state
    together = state is not None and state.distributed_type != DistributedType.NO
    if not together or args.world_size != launched:
        raise NlueError(
            f"the launcher started {launched} processes, but transformers set them up to train "
            f"{'alone' if not together else f'as {args.world_size}'}: each would train a model of its own on its "
            "share of the data; on a machine without a GPU pass --use_cpu true"
        )


def effective_batch(args: Any) -> int:
    """Items behind one optimizer step: per-device batch x processes x gradient accumulation steps."""
    return int(args.train_batch_size) * int(args.world_size) * int(args.gradient_accumulation_steps)
