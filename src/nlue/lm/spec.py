"""What a user asked for: which model, where it runs and how it is called, before anything is loaded.

A :class:`ModelSpec` comes from the command line (:func:`nlue.lm.options.model_spec_from_args`),
the Space's model list or a Python caller, and goes to :func:`nlue.lm.factory.load_model`, which
picks the backend. It holds no secret: an API key is named by the variable that holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nlue.errors import NlueError

AUTO = "auto"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_CONCURRENCY = 10  # the UrduMMLU paper's concurrent API requests
DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_RETRIES = 5  # the paper's


@dataclass(frozen=True)
class ModelSpec:
    """A model to load: a folder or Hub id, a served name with ``endpoint``, or ``baseline:<name>``."""

    model: str
    endpoint: str | None = None  # base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1
    backend: str = AUTO  # a registered backend's name; auto: chosen from the model and the endpoint
    api_key_env: str = DEFAULT_API_KEY_ENV
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    device: str | None = None
    dtype: str = AUTO
    batch_size: int | None = None  # None: the backend's own default
    journal: Any = None  # a Journal, or a path to open one at; None: no journal
    prompt_price_per_1k: float | None = None
    completion_price_per_1k: float | None = None
    show_progress: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)  # a backend's own (a translator's languages, ...)

    def __post_init__(self) -> None:
        if not self.model or not str(self.model).strip():
            raise NlueError("--model is empty; give a local folder, a Hub id, or a served model's name")
        if self.concurrency < 1 or self.max_retries < 0 or self.timeout <= 0:
            raise NlueError(
                f"--concurrency must be at least 1, --max-retries at least 0 and --timeout positive "
                f"(got {self.concurrency}, {self.max_retries}, {self.timeout})"
            )
        if self.batch_size is not None and self.batch_size < 1:
            raise NlueError(f"--batch-size must be at least 1, got {self.batch_size}")
        if isinstance(self.journal, str):
            object.__setattr__(self, "journal", Path(self.journal))

    @property
    def is_baseline(self) -> bool:
        """A ``baseline:<name>`` model: built here, never downloaded."""
        return str(self.model).startswith("baseline:")

    def with_options(self, **options: Any) -> ModelSpec:
        """The same spec with more backend options."""
        return replace(self, options={**self.options, **options})
