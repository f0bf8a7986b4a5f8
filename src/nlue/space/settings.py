"""Where the Space finds its models, results and data, and the limits it serves under.

Every setting has a default that fits the README's main job run from the repository root
(checkpoints under ``build/models``, results under ``build/results``, the embedded sample
data), and an environment variable that overrides it, so that a deployed Space is
configured from its Settings page without editing code:

==========================  ===========================================================
``NLUE_SPACE_MODELS``       a models file (``.yaml``/``.yml``/``.json``) or a folder scanned
                            for checkpoints (default: ``build/models``)
``NLUE_SPACE_RESULTS``      folder of results files (default: ``build/results``)
``NLUE_SPACE_DATASET``      dataset for the data browser: Hub id or folder (default: sample)
``NLUE_SPACE_MAX_CHARS``    longest text accepted in one input field (default: 1000)
``NLUE_SPACE_CONCURRENCY``  GMET model calls served at once, across all visitors (default: 2)
``NLUE_SPACE_MAX_BATCH``    most "Try a model" requests run in one forward pass (default: 8)
==========================  ===========================================================
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from nlue.errors import NlueError

DEFAULT_MODELS = Path("build/models")
DEFAULT_RESULTS = Path("build/results")

ENV_MODELS = "NLUE_SPACE_MODELS"
ENV_RESULTS = "NLUE_SPACE_RESULTS"
ENV_DATASET = "NLUE_SPACE_DATASET"
ENV_MAX_CHARS = "NLUE_SPACE_MAX_CHARS"
ENV_CONCURRENCY = "NLUE_SPACE_CONCURRENCY"
ENV_MAX_BATCH = "NLUE_SPACE_MAX_BATCH"


@dataclass(frozen=True)
class SpaceSettings:
    """Everything the Space reads at start-up; nothing here touches the network."""

    models: Path = DEFAULT_MODELS
    results_dir: Path = DEFAULT_RESULTS
    dataset: str | None = None  # None: the embedded sample data
    max_chars: int = 1000
    max_top_k: int = 20
    model_concurrency: int = 2  # GMET calls at once; each runs its own forward passes on the shared cores
    # Predictions are micro-batched per model (nlue.space.batching): up to max_batch_size requests share a
    # forward pass. Twice that many may be inside the handler, so that the next batch gathers while one runs.
    max_batch_size: int = 8
    data_concurrency: int = 4
    queue_size: int = 256  # waiting requests beyond this are refused with "queue full"; a few KB each
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
        results_dir: str | Path | None = None,
        dataset: str | None = None,
        default_models: str | Path = DEFAULT_MODELS,
        default_results: str | Path = DEFAULT_RESULTS,
    ) -> SpaceSettings:
        """Explicit arguments first, then the ``NLUE_SPACE_*`` variables, then the defaults."""
        env = os.environ
        return cls(
            models=Path(models or env.get(ENV_MODELS) or default_models),
            results_dir=Path(results_dir or env.get(ENV_RESULTS) or default_results),
            dataset=dataset or env.get(ENV_DATASET) or None,
            max_chars=_int_env(ENV_MAX_CHARS, cls.max_chars),
            model_concurrency=_int_env(ENV_CONCURRENCY, cls.model_concurrency),
            max_batch_size=_int_env(ENV_MAX_BATCH, cls.max_batch_size),
        )

    @property
    def predict_concurrency(self) -> int:
        """Requests of the "Try a model" tab let into the handler at once: one batch running, the next one gathering."""
        return 2 * self.max_batch_size


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise NlueError(f"environment variable {name} must be a whole number, got {raw!r}") from None
