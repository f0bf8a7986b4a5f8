"""Reading an OpenAI-compatible server's answers: the choice, its text, and echoed prompt log-probabilities.

Anything not shaped as expected raises :class:`~nlue.lm.http_retry.MalformedResponse` (retried), or
:class:`~nlue.lm.http_retry.ServerLimitation` when the server lacks what the request needs. NaN or
infinite log-probabilities (which JSON cannot hold, yet Python's parser takes) are a server fault:
:class:`~nlue.lm.http_retry.NonFiniteLogprobs`, retried, and a request that keeps getting them fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from nlue.errors import NlueError
from nlue.lm.http_retry import MalformedResponse, NonFiniteLogprobs, ServerLimitation


def first_choice(response: Any) -> Any:
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse("the response has no choices")
    return choices[0]


def message_text(choice: Any) -> str | None:
    message = getattr(choice, "message", None)
    if message is None:
        return None
    return message.content or ""  # a server may send null content for an empty answer


def echoed_loglikelihood(response: Any, text: str, boundary: int, limitation: Callable[[str], str]) -> dict[str, Any]:
    """``{"logprob", "is_greedy"}`` of the echoed prompt's tokens from character ``boundary`` on."""
    choice = first_choice(response)
    logprobs = getattr(choice, "logprobs", None)
    if logprobs is None or not getattr(logprobs, "token_logprobs", None):
        raise ServerLimitation(limitation("its answer carried no logprobs"))
    offsets, values, tops = logprobs.text_offset, logprobs.token_logprobs, logprobs.top_logprobs
    if offsets is None or tops is None:
        raise ServerLimitation(limitation("its logprobs lack text_offset or top_logprobs"))
    if len(offsets) != len(values) or len(tops) != len(values):
        raise MalformedResponse("logprobs lists of different lengths")
    prompt = [i for i, offset in enumerate(offsets) if offset < len(text)]  # the generated token starts after
    if not prompt or offsets[0] != 0:
        raise ServerLimitation(limitation("it did not echo the prompt's tokens"))
    start = next((i for i in prompt if offsets[i] >= boundary), None)
    if start is None:
        raise MalformedResponse("no echoed token covers the continuation")
    if offsets[start] > boundary and start > 0:
        start -= 1  # that token straddles the context's end: it holds the continuation's first characters
    picked = prompt[prompt.index(start) :]
    if any(values[i] is None for i in picked):
        raise NlueError(
            "the continuation's first token has no log-probability (an empty context?): over HTTP the context "
            "needs at least one token before the continuation"
        )
    used = [values[i] for i in picked] + [v for i in picked for v in (tops[i] or {}).values()]
    odd = [v for v in used if isinstance(v, float) and not math.isfinite(v)]
    if odd:
        raise NonFiniteLogprobs(f"the continuation's log-probabilities include {odd[0]!r}, which no model gives")
    greedy = all(tops[i] and values[i] >= max(tops[i].values()) for i in picked)
    return {"logprob": float(sum(values[i] for i in picked)), "is_greedy": bool(greedy)}
