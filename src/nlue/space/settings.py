"""Where the Space finds its models, results and data, and the limits it serves under.

Every setting has a default that fits the README's main job run from the repository root
(checkpoints under ``build/models``, results under ``build/results``, the embedded sample
data), and an environment variable that overrides it, so that a deployed Space is
configured from its Settings page without editing code:

==========================  ===========================================================
``NLUE_SPACE_MODELS``       a models file (``.yaml``/``.yml``/``.json``) or a folder scanned
                            for checkpoints (default: ``build/models``)
``NLUE_SPACE_RESULTS``      folder of results files (default: ``$NLUE_RESULTS_DIR``, else
                            ``build/results``) or a sweep's folder (``build/sweep/<name>``);
                            several separated by ``:`` (``os.pathsep``); or ``<org>/<repo>``,
                            alone: a Hub dataset repo of results, mirrored at start and
                            refreshed (``NLUE_SPACE_RESULTS_REFRESH_MINUTES``, default 30)
``NLUE_SPACE_DATASET``      dataset for the data browser: Hub id or folder (default: sample);
                            several separated by ``:`` (NLUE's build and your task's, say:
                            each config is read from the first that has it; ``sample``
                            names the embedded sample)
``NLUE_SPACE_MAX_CHARS``    longest text accepted in one input field (default: 1000)
``NLUE_SPACE_CONCURRENCY``  GMET model calls served at once, across all visitors (default: 2)
``NLUE_SPACE_MAX_BATCH``    most "Try a model" requests run in one forward pass (default: 8 on
                            a CPU, 32 with a GPU)
``NLUE_SPACE_QUEUE_SIZE``   most requests waiting in the queue before new ones are refused
                            (default: 16 rounds of the prediction pool, 256 on a CPU)
==========================  ===========================================================

The limits without a variable of their own are sized from the machine (:class:`Machine`):
the batch size from whether a GPU is there, the prediction pool (twice the batch: one batch
running, the next gathering) and the queue (16 such pools) from the batch size, and the
data events' concurrency from the CPU cores the process may use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nlue.errors import NlueError
from nlue.results import DEFAULT_RESULTS as DEFAULT_RESULTS_DIR
from nlue.results import default_results_dir
from nlue.results_folders import ResultsFolder, resolve_folders

DEFAULT_MODELS = Path("build/models")
DEFAULT_RESULTS = DEFAULT_RESULTS_DIR  # where every command writes results by default ($NLUE_RESULTS_DIR first)

ENV_MODELS = "NLUE_SPACE_MODELS"
ENV_RESULTS = "NLUE_SPACE_RESULTS"
ENV_DATASET = "NLUE_SPACE_DATASET"
ENV_MAX_CHARS = "NLUE_SPACE_MAX_CHARS"
ENV_CONCURRENCY = "NLUE_SPACE_CONCURRENCY"
ENV_MAX_BATCH = "NLUE_SPACE_MAX_BATCH"
ENV_QUEUE_SIZE = "NLUE_SPACE_QUEUE_SIZE"

# On 2 cores a base-size batch of 8 runs 2.8x the one-by-one rate (benchmarks/space_latency.py); a larger batch
# makes each visitor wait for more work. A GPU's pass over a few dozen short sentences costs little more than
# over one, so it batches more (a common choice; no GPU was at hand to measure it).
CPU_BATCH = 8
GPU_BATCH = 32
QUEUE_ROUNDS = 16  # the queue holds this many full prediction pools: seconds of waiting, not minutes


def prediction_pool(batch_size: int) -> int:
    """Predictions let into the handler at once: one batch running, the next one gathering."""
    return 2 * batch_size


def queue_places(batch_size: int) -> int:
    """The queue's default size: ``QUEUE_ROUNDS`` full prediction pools."""
    return QUEUE_ROUNDS * prediction_pool(batch_size)


@dataclass(frozen=True)
class Machine:
    """What the Space's limits are sized from: the CPU cores this process may use, and whether a GPU is there."""

    cores: int
    gpu: bool

    @classmethod
    def detect(cls) -> Machine:
        """This machine, found without importing torch (the Space sets OpenMP's wait policy before torch loads)."""
        try:
            cores = len(os.sched_getaffinity(0))  # a container's CPU set, not the host's
        except AttributeError:  # not on Linux
            cores = os.cpu_count() or 1
        return cls(cores=max(1, cores), gpu=any(Path("/dev").glob("nvidia[0-9]*")))

    def batch_size(self) -> int:
        return GPU_BATCH if self.gpu else CPU_BATCH

    def model_concurrency(self) -> int:
        """GMET calls at once: on a CPU each call's forward passes use every core, and a second keeps them busy
        while the first is in Python; a GPU has room for a few."""
        return 4 if self.gpu else 2

    def data_concurrency(self) -> int:
        """Data and leaderboard events at once: CPU-bound pandas and Arrow work, one per core (at least 4)."""
        return max(4, self.cores)


@dataclass(frozen=True)
class SpaceSettings:
    """Everything the Space reads at start-up; nothing here touches the network."""

    models: Path = DEFAULT_MODELS
    results_dir: Path = DEFAULT_RESULTS  # a local folder, or the local mirror of results_repo
    results_repo: str | None = None  # a Hub dataset repo of results (nlue.space.results_source)
    more_results: tuple[Path, ...] = ()  # further local results or sweep folders, shown beside results_dir
    dataset: str | None = None  # None: the embedded sample data
    more_datasets: tuple[str, ...] = ()  # further datasets for the browser (a user's task's build), after dataset
    max_chars: int = 1000
    max_top_k: int = 20
    # The limits' defaults are a 2-core CPU machine's; from_env sizes them for the machine it runs on.
    model_concurrency: int = 2  # GMET calls at once; each runs its own forward passes on the shared cores
    # Predictions are micro-batched per model (nlue.space.batching): up to max_batch_size requests share a
    # forward pass. Twice that many may be inside the handler, so that the next batch gathers while one runs.
    max_batch_size: int = CPU_BATCH
    data_concurrency: int = 4
    queue_size: int = queue_places(CPU_BATCH)  # waiting requests beyond this are refused; a few KB each
    max_cached_models: int = 6

    def __post_init__(self) -> None:
        names = ("max_chars", "max_top_k", "model_concurrency", "max_batch_size", "data_concurrency", "queue_size")
        for name in names:
            if getattr(self, name) < 1:
                raise NlueError(f"Space setting {name} must be at least 1, got {getattr(self, name)}")

    @classmethod
    def from_env(
        cls,
        models: str | Path | None = None,
        results_dir: str | Path | Sequence[str | Path] | None = None,
        dataset: str | Sequence[str] | None = None,
        default_models: str | Path = DEFAULT_MODELS,
        default_results: str | Path | None = None,
        machine: Machine | None = None,
    ) -> SpaceSettings:
        """Explicit arguments first, then the ``NLUE_SPACE_*`` variables, then defaults sized for ``machine``.

        ``results_dir`` (or ``NLUE_SPACE_RESULTS``, ``:``-separated) may name several folders; a Hub
        results repo only alone.
        """
        env = os.environ
        machine = machine or Machine.detect()
        batch = _int_env(ENV_MAX_BATCH, machine.batch_size())
        from nlue.space.results_source import looks_like_repo, mirror_folder

        named = _results_values(results_dir) or _results_values(env.get(ENV_RESULTS))
        values = named or [str(default_results or default_results_dir())]
        repos = [v for v in values if named and looks_like_repo(v)]
        if repos and len(values) > 1:
            raise NlueError(f"results: the Hub results repo {repos[0]} is read alone; give it without other folders "
                            f"(got {', '.join(values)})")  # fmt: skip
        repo = repos[0] if repos else None
        datasets = _results_values(dataset) or _results_values(env.get(ENV_DATASET))  # the same list rule
        return cls(
            models=Path(models or env.get(ENV_MODELS) or default_models),
            results_dir=mirror_folder(repo) if repo else Path(values[0]),
            results_repo=repo,
            more_results=tuple(Path(v) for v in values[1:]),
            dataset=datasets[0] if datasets and datasets[0] != "sample" else None,
            more_datasets=tuple(datasets[1:]),
            max_chars=_int_env(ENV_MAX_CHARS, cls.max_chars),
            model_concurrency=_int_env(ENV_CONCURRENCY, machine.model_concurrency()),
            max_batch_size=batch,
            data_concurrency=machine.data_concurrency(),
            queue_size=_int_env(ENV_QUEUE_SIZE, queue_places(batch)),
        )

    @property
    def results_folders(self) -> list[ResultsFolder]:
        """The folders the boards read (sweep folders as their results/); one that is not there reads as empty."""
        return resolve_folders([self.results_dir, *self.more_results], missing_ok=True)

    @property
    def datasets(self) -> tuple[str | None, ...]:
        """The data browser's datasets, in order (None: the embedded sample)."""
        return (self.dataset, *self.more_datasets)

    @property
    def predict_concurrency(self) -> int:
        """Requests of the "Try a model" tab let into the handler at once (:func:`prediction_pool`)."""
        return prediction_pool(self.max_batch_size)


def _results_values(value: str | Path | Sequence[str | Path] | None) -> list[str]:
    """The results folders (or repo), or datasets, one option or variable names: a list, or a ``:``-separated text."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v for v in value.split(os.pathsep) if v]
    if isinstance(value, Path):
        return [str(value)]
    return [str(v) for v in value if str(v)]


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise NlueError(f"environment variable {name} must be a whole number, got {raw!r}") from None
