"""What to do when a request to an OpenAI-compatible server fails: retry, give up on it, or stop the run.

* retried (up to ``max_retries`` more tries): HTTP 408, 409, 429 and 5xx, timeouts, refused or
  dropped connections, bodies that are not JSON, cut short, or not shaped like a response, and
  log-probabilities that are NaN or infinite (a server fault: never scored);
* given up at once (the request fails, the run goes on): other 4xx, e.g. 400 for a prompt
  too long for the model;
* the run stops at once: 401/403 (the key is refused: every request would be) and 404 (no
  such model or endpoint), and a server that lacks what the request kind needs.

Waits grow exponentially with jitter (half fixed, half random, so many clients do not retry
in step), capped at ``backoff_max``; a ``Retry-After`` (or ``retry-after-ms``) header is
obeyed instead when the server sends one.

Every retry is logged once, with its cause (``timeout``, ``http-429``, ``http-5xx``,
``connection``, ``malformed``, ...), and counted by :class:`RetryLog`, whose totals go into the
results file: a run that was slowed by retries says so.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from nlue.errors import NlueError

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})
FATAL_STATUS = frozenset({401, 403, 404})


class ServerLimitation(Exception):
    """The server cannot do what this request kind needs (e.g. no prompt log-probabilities); the run stops."""


class MalformedResponse(Exception):
    """A 200 answer whose body is not the response expected; retried like a server error."""


class NonFiniteLogprobs(MalformedResponse):
    """Log-probabilities that are NaN or infinite (JSON has neither; a server that sends them is at fault)."""


@dataclass(frozen=True)
class Failure:
    description: str  # what failed, for logs and the final message (never holds the API key)
    retryable: bool
    fatal: bool = False
    retry_after: float | None = None
    cause: str = "other"  # timeout, http-429, http-5xx, http-4xx, connection, malformed, non-finite, limitation, other
    limitation: bool = False  # the server lacks what the request kind needs (no prompt log-probabilities)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    retry_after_max: float = 300.0

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None:
            wait = min(max(retry_after, 0.0), self.retry_after_max)
            return wait + rng.uniform(0, 0.1 * wait)
        ceiling = min(self.backoff_max, self.backoff_base * 2**retry)
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


def retry_after_seconds(headers: Any) -> float | None:
    """The server's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), if any."""
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(exc: BaseException, where: str, api_key_env: str = "OPENAI_API_KEY") -> Failure:
    """Map an exception from one try at ``where`` (e.g. ``POST /v1/completions``) to what to do next."""
    import openai

    if isinstance(exc, ServerLimitation):
        return Failure(str(exc), retryable=False, fatal=True, cause="limitation", limitation=True)
    if isinstance(exc, NlueError):  # the request itself cannot be asked this way: every other one would fail alike
        return Failure(f"{where}: {exc}", retryable=False, fatal=True, cause="input")
    if isinstance(exc, openai.APITimeoutError):
        return Failure(f"{where} timed out", retryable=True, cause="timeout")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f": {type(cause).__name__}: {cause}" if cause else ""
        return Failure(f"{where}: connection failed or dropped{detail}", retryable=True, cause="connection")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        body = _short_body(exc)
        text = f"{where} answered HTTP {status}{body}"
        if status in FATAL_STATUS:
            hint = {
                401: f"the server refused the API key from ${api_key_env}; set it to a valid key",
                403: f"the API key from ${api_key_env} may not use this model or endpoint",
                404: "check the model name and the base URL (it usually ends in /v1)",
            }[status]
            return Failure(f"{text} ({hint})", retryable=False, fatal=True, cause=f"http-{status}")
        retryable = status in RETRYABLE_STATUS or status >= 500
        cause = "http-5xx" if status >= 500 else f"http-{status}" if status in RETRYABLE_STATUS else "http-4xx"
        return Failure(text, retryable=retryable, retry_after=retry_after_seconds(exc.response.headers), cause=cause)
    if isinstance(exc, NonFiniteLogprobs):
        return Failure(f"{where}: {exc}", retryable=True, cause="non-finite")
    if isinstance(exc, MalformedResponse | openai.APIResponseValidationError | json.JSONDecodeError):
        return Failure(f"{where}: malformed response body ({exc})", retryable=True, cause="malformed")
    return Failure(f"{where}: {type(exc).__name__}: {exc}", retryable=False)


@dataclass
class RetryLog:
    """Every retry of a run: each logged once with its cause when it is decided, and counted by cause."""

    retries: Counter = field(default_factory=Counter)
    failed_requests: Counter = field(default_factory=Counter)  # requests given up after their tries, by cause
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def retry(self, failure: Failure, attempt: int, max_retries: int, delay: float) -> None:
        with self._lock:
            self.retries[failure.cause] += 1
        logger.warning(
            "retry %d of %d in %.1f s (cause: %s): %s", attempt + 1, max_retries, delay, failure.cause,
            failure.description,
        )  # fmt: skip

    def gave_up(self, failure: Failure) -> None:
        with self._lock:
            self.failed_requests[failure.cause] += 1

    def summary(self) -> dict[str, Any]:
        with self._lock:
            return {
                "retries": sum(self.retries.values()),
                "retries_by_cause": dict(sorted(self.retries.items())),
                "failed_requests": sum(self.failed_requests.values()),
                "failed_requests_by_cause": dict(sorted(self.failed_requests.items())),
            }


def _short_body(exc: Any) -> str:
    try:
        text = exc.response.text
    except Exception:  # a body that cannot be read adds nothing
        return ""
    text = " ".join(str(text).split())
    return f": {text[:200]}" if text else ""
