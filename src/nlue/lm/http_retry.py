"""What to do when a request to an OpenAI-compatible server fails: retry, give up on it, or stop the run.

* retried (up to ``max_retries`` more tries): HTTP 408, 409, 429 and 5xx, timeouts, refused or
  dropped connections, bodies that are not JSON, cut short, or not shaped like a response;
* given up at once (the request fails, the run goes on): other 4xx, e.g. 400 for a prompt
  too long for the model;
* the run stops at once: 401/403 (the key is refused: every request would be) and 404 (no
  such model or endpoint), and a server that lacks what the request kind needs.

Waits grow exponentially with jitter (half fixed, half random, so many clients do not retry
in step), capped at ``backoff_max``; a ``Retry-After`` (or ``retry-after-ms``) header is
obeyed instead when the server sends one.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from dataclasses import dataclass
from typing import Any

RETRYABLE_STATUS = frozenset({408, 409, 429})
FATAL_STATUS = frozenset({401, 403, 404})


class ServerLimitation(Exception):
    """The server cannot do what this request kind needs (e.g. no prompt log-probabilities); the run stops."""


class MalformedResponse(Exception):
    """A 200 answer whose body is not the response expected; retried like a server error."""


@dataclass(frozen=True)
class Failure:
    description: str  # what failed, for logs and the final message (never holds the API key)
    retryable: bool
    fatal: bool = False
    retry_after: float | None = None


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
        return Failure(str(exc), retryable=False, fatal=True)
    if isinstance(exc, openai.APITimeoutError):
        return Failure(f"{where} timed out", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f": {type(cause).__name__}: {cause}" if cause else ""
        return Failure(f"{where}: connection failed or dropped{detail}", retryable=True)
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
            return Failure(f"{text} ({hint})", retryable=False, fatal=True)
        retryable = status in RETRYABLE_STATUS or status >= 500
        return Failure(text, retryable=retryable, retry_after=retry_after_seconds(exc.response.headers))
    if isinstance(exc, MalformedResponse | openai.APIResponseValidationError | json.JSONDecodeError):
        return Failure(f"{where}: malformed response body ({exc})", retryable=True)
    return Failure(f"{where}: {type(exc).__name__}: {exc}", retryable=False)


def _short_body(exc: Any) -> str:
    try:
        text = exc.response.text
    except Exception:  # a body that cannot be read adds nothing
        return ""
    text = " ".join(str(text).split())
    return f": {text[:200]}" if text else ""
