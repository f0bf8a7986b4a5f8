"""Token counts and an estimated cost, from the ``usage`` each server response reports.

Prices are the user's (per 1,000 prompt tokens and per 1,000 completion tokens); nothing
is guessed. A server that reports no usage leaves the counts at what was reported, and the
summary says how many responses carried none.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class UsageMeter:
    prompt_price_per_1k: float | None = None
    completion_price_per_1k: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    responses: int = 0
    without_usage: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, usage: Any) -> None:
        """Count one response's ``usage`` (an object or dict with ``prompt_tokens``/``completion_tokens``, or None)."""
        prompt = _field(usage, "prompt_tokens")
        completion = _field(usage, "completion_tokens")
        with self._lock:
            self.responses += 1
            if prompt is None and completion is None:
                self.without_usage += 1
            self.prompt_tokens += prompt or 0
            self.completion_tokens += completion or 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def estimated_cost(self) -> float | None:
        """In the currency of the prices given; None when no price was given."""
        if self.prompt_price_per_1k is None and self.completion_price_per_1k is None:
            return None
        return (
            self.prompt_tokens * (self.prompt_price_per_1k or 0.0)
            + self.completion_tokens * (self.completion_price_per_1k or 0.0)
        ) / 1000

    def postfix(self) -> str:
        """What the progress bar shows after the request rate."""
        if self.responses and self.without_usage == self.responses:
            return "tokens: not reported by the server"
        text = f"{self.total_tokens} tokens"
        cost = self.estimated_cost
        return text if cost is None else f"{text}, ~{cost:.4f} est. cost"

    def summary(self) -> dict[str, Any]:
        return {
            "responses": self.responses,
            "responses_without_usage": self.without_usage,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "estimated_cost": self.estimated_cost,
            "prompt_price_per_1k": self.prompt_price_per_1k,
            "completion_price_per_1k": self.completion_price_per_1k,
        }


def _field(usage: Any, name: str) -> int | None:
    if usage is None:
        return None
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
    return int(value) if isinstance(value, int | float) else None
