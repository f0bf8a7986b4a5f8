"""What the HTTP backend sends for each request kind, and how it reads the answer: one place for both.

The live path (:mod:`nlue.lm.http`, one request at a time through the ``openai`` client) and the batch
path (:mod:`nlue.lm.batch_api`, many requests as lines of a file) build the same body and read the same
answer with these functions, so a batch answers exactly what live requests would have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nlue.lm.base import Generation, GenerationRequest, LoglikelihoodRequest, cut_at_stop
from nlue.lm.http_answers import echoed_loglikelihood, first_choice, message_text
from nlue.lm.http_retry import MalformedResponse

MAX_API_STOP = 4  # OpenAI's limit on stop sequences; the rest are applied locally
COMPLETIONS, CHAT = "/v1/completions", "/v1/chat/completions"


@dataclass(frozen=True)
class Body:
    """A request as sent: the route (``/v1/...``) and its JSON body."""

    url: str
    json: dict[str, Any]


def loglikelihood_body(model: str, seed: int | None, request: LoglikelihoodRequest) -> Body:
    """``/v1/completions`` with echo and one log-probability per token: the prompt's own log-probabilities."""
    body: dict[str, Any] = {"model": model, "prompt": request.context + request.continuation, "max_tokens": 1,
                            "temperature": 0.0, "echo": True, "logprobs": 1}  # fmt: skip
    if seed is not None:
        body["seed"] = seed
    return Body(COMPLETIONS, body)


def read_loglikelihood(response: Any, request: LoglikelihoodRequest, limitation: Callable[[str], str]) -> dict:
    """The continuation's log-likelihood out of an echoed completion (``response`` as the client parses it)."""
    boundary = len(request.context.rstrip())  # lm-eval: trailing spaces belong to the continuation
    return echoed_loglikelihood(response, request.context + request.continuation, boundary, limitation)


def generation_body(model: str, seed: int | None, endpoint: str, request: GenerationRequest) -> Body:
    """Greedy generation: chat messages (a plain prompt as one user message), or a prompt to completions."""
    body: dict[str, Any] = {"model": model, "max_tokens": request.max_new_tokens, "temperature": 0.0}
    if request.stop:
        body["stop"] = list(request.stop[:MAX_API_STOP])
    if seed is not None:
        body["seed"] = seed
    if endpoint == "chat":
        messages = [m.to_dict() for m in request.messages] if request.messages else None
        body["messages"] = messages or [{"role": "user", "content": request.prompt}]
        return Body(CHAT, body)
    body["prompt"] = request.prompt
    return Body(COMPLETIONS, body)


def read_generation(response: Any, endpoint: str, request: GenerationRequest, redact: Callable[[str], str]) -> dict:
    """The generated text, cut before the first stop sequence (servers differ), with its token counts."""
    choice = first_choice(response)
    text = message_text(choice) if endpoint == "chat" else getattr(choice, "text", None)
    if not isinstance(text, str):
        raise MalformedResponse("the choice has no text")
    text, stopped = cut_at_stop(redact(text), request.stop)  # a model that echoes the key keeps none
    reason = "length" if getattr(choice, "finish_reason", None) == "length" and not stopped else "stop"
    usage = getattr(response, "usage", None)
    return Generation(
        text=text,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        finish_reason=reason,
    ).to_dict()
