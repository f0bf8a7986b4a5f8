"""Models loaded on first use, once, and kept: a small thread-safe LRU cache.

Gradio runs handlers in worker threads, so two visitors may ask for the same model at the
same moment; the second waits for the first load instead of loading it twice. Loads are
serialised across all models, not only per model: transformers builds a model on the
``meta`` device by patching module construction process-wide, and two ``from_pretrained``
calls in parallel threads can trip over each other ("Tensor on device meta is not on the
expected device"). Loads are rare; requests for models already loaded never wait on
them. A failed load is not cached: the next request tries again (the error may have
been a passing one, such as a Hub timeout).

Each loaded model carries its own lock. A fast tokenizer is not safe to call from two
threads at once (its padding and truncation settings are shared state), so one model
serves one request at a time; different models run side by side.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    load_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. a fill-mask pipeline built on the model
    lock: threading.Lock = field(default_factory=threading.Lock)


class ModelCache:
    """``get(key)`` returns ``loader(key)``'s result, loaded once and kept (least recently used evicted)."""

    def __init__(self, loader: Callable[[Any], tuple[Any, Any]], max_models: int = 6) -> None:
        self._loader = loader
        self._max_models = max_models
        self._lock = threading.Lock()
        self._models: OrderedDict[Any, LoadedModel] = OrderedDict()
        self._load_lock = threading.Lock()

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            return key in self._models

    def get(self, key: Any) -> LoadedModel:
        with self._lock:
            if key in self._models:
                self._models.move_to_end(key)
                return self._models[key]
        with self._load_lock:
            with self._lock:  # someone else may have finished loading while we waited
                if key in self._models:
                    return self._models[key]
            started = time.perf_counter()
            model, tokenizer = self._loader(key)
            loaded = LoadedModel(model, tokenizer, time.perf_counter() - started)
            logger.info("loaded %s in %.2f s", key, loaded.load_seconds)
            with self._lock:
                self._models[key] = loaded
                while len(self._models) > self._max_models:
                    evicted, _ = self._models.popitem(last=False)
                    logger.info("unloaded %s (cache holds %d models)", evicted, self._max_models)
            return loaded
