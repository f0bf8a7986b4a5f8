"""Translating through the language-model engine: any backend of :mod:`nlue.lm` that generates.

In practice :class:`nlue.lm.http.OpenAICompatibleLM`: its journal answers every request it
has answered before (so a resumed run asks nothing twice), it runs a round's requests
concurrently, retries what fails on the wire and stops after consecutive failures. It is
built with ``failed_generations="return"``, so that one request that keeps failing (say a
prompt too long for the model) comes back as a failed answer, which the schedule splits,
instead of stopping the run.

Token accounting: the engine's :class:`~nlue.lm.cost.UsageMeter` counts what this run
spent; :attr:`EngineTranslator.tokens` also counts answers read back from the journal, i.e.
what the whole translation has cost so far.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.lm.base import LanguageModel
from nlue.registry.spec import TaskSpec
from nlue.translate.batches import RowOutcome, Unit, UnitFailed
from nlue.translate.prompts import PROMPT_VERSION, ReplyError, batch_request, item_fields, parse_reply

DEFAULT_TOKENS_PER_ROW = 256  # the paper's rows run to about 100 tokens of English; Nepali takes more
DEFAULT_MAX_NEW_TOKENS = 16_384
# How the engine describes a request the server refused (nlue.lm.http_retry.classify): "... answered HTTP 400: ...".
_REFUSED = re.compile(r"answered HTTP (4\d\d)\b")
_RETRYABLE_4XX = {408, 409, 429}


def refused(error: str | None) -> bool:
    """Whether a failed request was refused for what it asked (a 4xx such as a prompt too long for the model),
    as opposed to a server that kept failing (5xx, timeouts, dropped connections)."""
    match = _REFUSED.search(error or "")
    return match is not None and int(match.group(1)) not in _RETRYABLE_4XX


def failure_kind(reason: str) -> str:
    """The report's name for why an answer could not be used."""
    if reason.startswith("count mismatch"):
        return "count mismatch"
    if reason.startswith("not valid JSON"):
        return "invalid JSON"
    return "malformed answer"


class EngineTranslator:
    """Batches as chat requests to a language model; answers parsed strictly."""

    def __init__(
        self,
        lm: LanguageModel,
        tokens_per_row: int = DEFAULT_TOKENS_PER_ROW,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ) -> None:
        if tokens_per_row < 1 or max_new_tokens < 1:
            raise NlueError(f"token caps must be positive, got {tokens_per_row} and {max_new_tokens}")
        self.lm = lm
        self.tokens_per_row = tokens_per_row
        self.max_new_tokens = max_new_tokens
        self.tokens: Counter = Counter()

    @property
    def name(self) -> str:
        return self.lm.name

    def describe(self) -> dict[str, Any]:
        model = self.lm.describe().to_dict()
        return {
            "backend": "engine",
            "name": self.name,
            "usage": model.get("usage"),  # this run's spend, from the engine's meter
            "prompt_version": PROMPT_VERSION,
            "tokens_per_row": self.tokens_per_row,
            "max_new_tokens": self.max_new_tokens,
            "all_answers_tokens": dict(self.tokens),
            "model": model,
        }

    def translate(self, task: TaskSpec, units: Sequence[Unit]) -> list[list[RowOutcome] | UnitFailed]:
        fields = item_fields(task)
        requests = [
            batch_request(
                task, [row.fields for row in unit.rows], unit.attempt,
                min(self.max_new_tokens, 32 + self.tokens_per_row * len(unit.rows)), unit.review,
            )
            for unit in units
        ]  # fmt: skip
        generations = self.lm.generate(requests)
        broken = [g.error for g in generations if g.finish_reason == "error" and not refused(g.error)]
        if broken:
            # A server that keeps failing says nothing about the rows: stop, keep what was answered, resume later.
            raise NlueError(
                f"{len(broken)} of {len(requests)} requests to {self.lm.name} kept failing (first: {broken[0]}); "
                "every answer received is journalled: run the same command again to go on from there"
            )
        outcomes: list[list[RowOutcome] | UnitFailed] = []
        for unit, generation in zip(units, generations, strict=True):
            self.tokens["prompt_tokens"] += generation.prompt_tokens or 0
            self.tokens["completion_tokens"] += generation.completion_tokens or 0
            if generation.finish_reason == "error":
                outcomes.append(UnitFailed("request refused", f"the server refused the request: {generation.error}"))
                continue
            try:
                parsed = parse_reply(generation.text, len(unit.rows), fields)
            except ReplyError as exc:
                reason = str(exc)
                if generation.finish_reason == "length":
                    reason += " (the answer reached the token cap)"
                outcomes.append(UnitFailed(failure_kind(reason), reason))
                continue
            outcomes.append(list(parsed))
        return outcomes
