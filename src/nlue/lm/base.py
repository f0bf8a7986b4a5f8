"""What every language-model backend takes and returns: requests, results, and the ``LanguageModel`` protocol.

Two request kinds, as in lm-evaluation-harness:

* :class:`LoglikelihoodRequest` ``(context, continuation)`` -> :class:`Loglikelihood`
  ``(logprob, is_greedy)``: the sum of the continuation's token log-probabilities given the
  context, and whether greedy decoding from the context would produce exactly those tokens
  (lm-eval's ``loglikelihood`` definition, trailing spaces of the context included in the
  continuation);
* :class:`GenerationRequest` (a prompt, or chat messages; stop sequences; a token cap) ->
  :class:`Generation` (the text, cut before the first stop sequence, token counts and why
  it ended).

Both are frozen dataclasses whose :meth:`to_dict` is what the journal keys on, so a request
asked again, in this run or the next, is answered from the journal instead of the model.
Backends: :class:`nlue.lm.local.LocalCausalLM` (transformers) and
:class:`nlue.lm.http.OpenAICompatibleLM` (any OpenAI-compatible server).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from nlue.errors import NlueError
from nlue.lm.description import ModelDescription

Role = Literal["system", "user", "assistant"]
FinishReason = Literal["stop", "length", "error"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score ``continuation`` after ``context`` (plain text; apply a chat template beforehand if wanted)."""

    context: str
    continuation: str

    def __post_init__(self) -> None:
        if not self.continuation:
            raise NlueError(f"a log-likelihood request needs a non-empty continuation (context {self.context[:60]!r})")

    def to_dict(self) -> dict[str, str]:
        return {"context": self.context, "continuation": self.continuation}


@dataclass(frozen=True)
class Loglikelihood:
    logprob: float
    is_greedy: bool

    def to_dict(self) -> dict[str, Any]:
        return {"logprob": self.logprob, "is_greedy": self.is_greedy}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Loglikelihood:
        return cls(logprob=float(data["logprob"]), is_greedy=bool(data["is_greedy"]))


@dataclass(frozen=True)
class GenerationRequest:
    """Greedy generation from ``prompt`` (raw text) or ``messages`` (a chat, formatted by the chat template).

    Exactly one of the two is given. ``stop``: the text is cut before the first of these
    strings; ``max_new_tokens``: the token cap.
    """

    prompt: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    stop: tuple[str, ...] = ()
    max_new_tokens: int = 256

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.messages is None):
            raise NlueError("a generation request takes either a prompt or chat messages, not both or neither")
        if self.messages is not None:
            messages = tuple(m if isinstance(m, ChatMessage) else ChatMessage(**m) for m in self.messages)
            if not messages:
                raise NlueError("a chat generation request needs at least one message")
            object.__setattr__(self, "messages", messages)
        object.__setattr__(self, "stop", tuple(self.stop))
        if any(not s for s in self.stop):
            raise NlueError(f"stop sequences must be non-empty strings, got {self.stop!r}")
        if self.max_new_tokens < 1:
            raise NlueError(f"max_new_tokens must be at least 1, got {self.max_new_tokens}")

    @property
    def is_chat(self) -> bool:
        return self.messages is not None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"stop": list(self.stop), "max_new_tokens": self.max_new_tokens}
        if self.messages is not None:
            data["messages"] = [m.to_dict() for m in self.messages]
        else:
            data["prompt"] = self.prompt
        return data


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: FinishReason
    error: str | None = field(default=None)  # only for finish_reason "error" (a request that kept failing)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "error" or v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Generation:
        return cls(
            text=data["text"],
            prompt_tokens=data.get("prompt_tokens"),
            completion_tokens=data.get("completion_tokens"),
            finish_reason=data["finish_reason"],
            error=data.get("error"),
        )


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the first occurrence of any stop sequence, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


@runtime_checkable
class LanguageModel(Protocol):
    """A causal language model, local or behind a server; results come back in request order."""

    @property
    def name(self) -> str:
        """A short identifier (``hf:<model>``, ``openai:<model>``), also the journal's model key."""
        ...

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]: ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]: ...

    def describe(self) -> ModelDescription:
        """What the model is and can do, as a results file records it (no secrets)."""
        ...
