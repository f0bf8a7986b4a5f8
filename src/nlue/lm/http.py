"""The HTTP backend: any OpenAI-compatible server (vLLM, TGI, llama.cpp, ``transformers serve``, hosted APIs).

* Generation: ``/v1/chat/completions`` (chat messages; a plain prompt becomes one user
  message), or ``/v1/completions`` for prompts with ``generation_endpoint="completions"``;
  temperature 0, a fixed seed, the stop list and the token cap sent; the text is also cut
  locally before the first stop sequence, as servers differ.
* Log-likelihood: ``/v1/completions`` with ``echo=true, logprobs=1, max_tokens=1`` (what
  lm-eval's ``local-completions`` sends; vLLM supports it). The continuation's tokens are
  the echoed prompt tokens from the context's end on, found by their character offsets
  (lm-eval's trailing-space rule applied; a token that straddles the boundary counts as the
  continuation's); ``is_greedy`` compares each token's log-probability with the best of its
  ``top_logprobs``. A server that returns no prompt log-probabilities (``transformers
  serve``, OpenAI's chat models) stops the run with an error that says so.
* Requests run in threads, at most ``concurrency`` at a time (default 10). Each is tried up
  to 1 + ``max_retries`` times (:mod:`nlue.lm.http_retry`); after ``max_consecutive_failures``
  failed requests in a row the run stops with an :class:`~nlue.errors.NlueError` that says
  what failed and how many answers the journal keeps. Answers are journalled as they arrive
  (one line, fsync'd, each), so a killed run resumes with nothing lost or asked twice.
* The API key is read from the environment variable the user names (``OPENAI_API_KEY`` by
  default) and only handed to the client: it is never logged, journalled or described, and
  is masked in any server message that quotes it.
"""

from __future__ import annotations

import logging
import os
import random
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Literal

from nlue.errors import NlueError
from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest, cut_at_stop
from nlue.lm.cost import UsageMeter
from nlue.lm.http_retry import Failure, MalformedResponse, RetryPolicy, ServerLimitation, classify
from nlue.lm.journal import Journal, JournalledCall, open_journal
from nlue.lm.progress import progress_bar

logger = logging.getLogger(__name__)

MAX_API_STOP = 4  # OpenAI's limit on stop sequences; the rest are applied locally


class OpenAICompatibleLM:
    """A model behind an OpenAI-compatible server, through the official ``openai`` client."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 10,
        timeout: float = 120.0,
        max_retries: int = 5,
        max_consecutive_failures: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        seed: int | None = 42,
        generation_endpoint: Literal["chat", "completions"] = "chat",
        failed_generations: Literal["raise", "return"] = "raise",
        prompt_price_per_1k: float | None = None,
        completion_price_per_1k: float | None = None,
        journal: Journal | str | os.PathLike[str] | None = None,
        show_progress: bool = True,
    ) -> None:
        import openai

        if concurrency < 1 or max_consecutive_failures < 1 or max_retries < 0 or timeout <= 0:
            raise NlueError(
                "concurrency and max_consecutive_failures must be at least 1, max_retries at least 0 and timeout "
                f"positive (got {concurrency}, {max_consecutive_failures}, {max_retries}, {timeout})"
            )
        if generation_endpoint not in ("chat", "completions"):
            raise NlueError(f"generation_endpoint must be 'chat' or 'completions', got {generation_endpoint!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        key = os.environ.get(api_key_env)
        if not key:
            logger.info("no API key in $%s; sending a placeholder (fine for local servers)", api_key_env)
        self._secret = key or None
        self.concurrency = concurrency
        self.timeout = timeout
        self.policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max)
        self.max_consecutive_failures = max_consecutive_failures
        self.seed = seed
        self.generation_endpoint = generation_endpoint
        self.failed_generations = failed_generations
        self.usage = UsageMeter(prompt_price_per_1k, completion_price_per_1k)
        self.journal = journal
        self.show_progress = show_progress
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key or "EMPTY", max_retries=0, timeout=timeout)
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "openai-compatible",
            "name": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "generation_endpoint": self.generation_endpoint,
            "decoding": {"temperature": 0.0, "seed": self.seed},
            "concurrency": self.concurrency,
            "timeout_s": self.timeout,
            "max_retries": self.policy.max_retries,
            "max_consecutive_failures": self.max_consecutive_failures,
            "usage": self.usage.summary(),
        }

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    # -- the request kinds ----------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        params = {"method": "completions-echo-logprobs"}
        results = self._run("loglikelihood", params, requests, self._ask_loglikelihood, "POST /v1/completions")
        return [Loglikelihood.from_dict(r) for r in results]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        if self.generation_endpoint == "completions" and any(r.is_chat for r in requests):
            raise NlueError("chat messages need generation_endpoint='chat'; the completions endpoint takes prompts")
        params = {"endpoint": self.generation_endpoint, "temperature": 0.0, "seed": self.seed}
        where = "POST /v1/chat/completions" if self.generation_endpoint == "chat" else "POST /v1/completions"
        results = self._run("generate", params, requests, self._ask_generation, where)
        return [Generation.from_dict(r) for r in results]

    def _ask_loglikelihood(self, request: LoglikelihoodRequest) -> tuple[dict[str, Any], Any]:
        import openai

        text = request.context + request.continuation
        try:
            response = self._client.completions.create(
                model=self.model, prompt=text, max_tokens=1, temperature=0.0, echo=True, logprobs=1,
                **({"seed": self.seed} if self.seed is not None else {}),
            )  # fmt: skip
        except (openai.BadRequestError, openai.UnprocessableEntityError, openai.NotFoundError) as exc:
            raise ServerLimitation(
                self._limitation(f"it refused them (HTTP {exc.status_code}: {exc.message})")
            ) from exc
        boundary = len(request.context.rstrip())  # lm-eval: trailing spaces belong to the continuation
        return echoed_loglikelihood(response, text, boundary, self._limitation), getattr(response, "usage", None)

    def _limitation(self, detail: str) -> str:
        return (
            f"the server at {self.base_url} (model {self.model}) does not support echo+logprobs: log-likelihood needs "
            f"/v1/completions with echo=true and logprobs=1 to return the prompt's token log-probabilities, and {detail}. "
            "Use a server that does (vLLM does), the local backend (hf:<model>), or a generation-based evaluation"
        )

    def _ask_generation(self, request: GenerationRequest) -> tuple[dict[str, Any], Any]:
        common: dict[str, Any] = {"model": self.model, "max_tokens": request.max_new_tokens, "temperature": 0.0}
        if request.stop:
            common["stop"] = list(request.stop[:MAX_API_STOP])
        if self.seed is not None:
            common["seed"] = self.seed
        if self.generation_endpoint == "chat":
            messages = (
                [m.to_dict() for m in request.messages]
                if request.messages
                else [{"role": "user", "content": request.prompt}]
            )
            response = self._client.chat.completions.create(messages=messages, **common)
            choice = _first_choice(response)
            text = _message_text(choice)
        else:
            response = self._client.completions.create(prompt=request.prompt, **common)
            choice = _first_choice(response)
            text = getattr(choice, "text", None)
        if not isinstance(text, str):
            raise MalformedResponse("the choice has no text")
        text, stopped = cut_at_stop(text, request.stop)
        reason = "length" if getattr(choice, "finish_reason", None) == "length" and not stopped else "stop"
        usage = getattr(response, "usage", None)
        result = Generation(
            text=text,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            finish_reason=reason,
        )
        return result.to_dict(), usage

    # -- the runner: threads, retries, journal, failure accounting ----------------------------------

    def _try(self, ask: Callable[[Any], tuple[dict[str, Any], Any]], request: Any, where: str, stop: threading.Event):
        """One request with its retries: ``("ok", result, usage)`` or ``("failed", Failure)``."""
        for attempt in range(self.policy.max_retries + 1):
            try:
                result, usage = ask(request)
                return "ok", result, usage
            except Exception as exc:  # every failure is classified; none escapes a worker thread
                if isinstance(exc, ValueError | KeyError | TypeError | IndexError | AttributeError):
                    exc = MalformedResponse(f"{type(exc).__name__}: {exc}")
                failure = classify(exc, where, self.api_key_env)
                failure = Failure(
                    self._redact(failure.description), failure.retryable, failure.fatal, failure.retry_after
                )
            if not failure.retryable or attempt == self.policy.max_retries or stop.is_set():
                break
            with self._rng_lock:
                delay = self.policy.delay(attempt, failure.retry_after, self._rng)
            logger.debug("try %d failed (%s); retrying in %.2fs", attempt + 1, failure.description, delay)
            if stop.wait(delay):
                break
        return "failed", failure

    def _run(self, kind: str, params: dict[str, Any], requests: Sequence[Any], ask: Callable, where: str) -> list[dict]:
        journal, owned = open_journal(self.journal)
        try:
            call = JournalledCall(journal, self.name, kind, params, [r.to_dict() for r in requests])
            failed = self._drive(call, requests, ask, where, kind)
            if failed:
                first = failed[min(failed)]
                if kind == "generate" and self.failed_generations == "return":
                    logger.warning("%d generation requests failed (first: %s); returned as errors", len(failed), first)
                    errors = {
                        i: Generation("", None, None, "error", f.description).to_dict() for i, f in failed.items()
                    }
                    return call.results(unjournalled=errors)
                raise NlueError(
                    f"{len(failed)} of {len(call.pending)} {kind} requests to {self.base_url} failed after "
                    f"{self.policy.max_retries} retries (first: {first.description}). {self._kept(call, journal)}"
                )
            return call.results()
        finally:
            if owned and journal is not None:
                journal.close()

    def _kept(self, call: JournalledCall, journal: Journal | None) -> str:
        total = len(set(call.keys))
        if journal is None:
            return (
                f"{call.answered} of {total} distinct requests were answered, but no journal was given, so they are not "
                "kept; give a journal to make runs resumable"
            )
        return (
            f"{call.answered} of {total} distinct requests are answered and journalled in {journal.path} "
            f"({call.from_journal} from earlier runs); run the same command again to ask only the "
            f"{total - call.answered} others"
        )

    def _drive(self, call: JournalledCall, requests: Sequence[Any], ask: Callable, where: str, kind: str) -> dict:
        """Ask every pending request; journal answers as they come; return the failures by request position."""
        stop = threading.Event()
        queue = list(reversed(call.pending))
        failed: dict[int, Failure] = {}
        consecutive = 0
        abort: str | None = None
        in_flight: dict[Future, int] = {}
        with (
            progress_bar(self.show_progress, len(queue), f"{kind} ({self.model})", call.from_journal) as bar,
            ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="nlue-http") as pool,
        ):
            try:
                while queue or in_flight:
                    while queue and abort is None and len(in_flight) < self.concurrency:
                        index = queue.pop()
                        in_flight[pool.submit(self._try, ask, requests[index], where, stop)] = index
                    if not in_flight:
                        break
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in done:
                        index = in_flight.pop(future)
                        outcome = future.result()
                        if outcome[0] == "ok":
                            call.record([(index, outcome[1])])
                            self.usage.add(outcome[2])
                            consecutive = 0
                            bar.update(1)
                            bar.set_postfix_str(self.usage.postfix(), refresh=False)
                            continue
                        failure = outcome[1]
                        failed[index] = failure
                        consecutive += 1
                        logger.warning("request failed: %s", failure.description)
                        if failure.fatal and abort is None:
                            abort = failure.description
                        elif consecutive >= self.max_consecutive_failures and abort is None:
                            abort = (
                                f"stopped after {consecutive} consecutive failed requests, each tried "
                                f"{self.policy.max_retries + 1} times; last error: {failure.description}"
                            )
                    if abort is not None:
                        stop.set()  # workers stop retrying; answers still arriving are journalled above
            except BaseException:
                stop.set()  # Ctrl-C: what was answered is in the journal already
                raise
        if abort is not None:
            raise NlueError(f"{abort}. {self._kept(call, call.journal)}")
        return failed


def _first_choice(response: Any) -> Any:
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse("the response has no choices")
    return choices[0]


def _message_text(choice: Any) -> str | None:
    message = getattr(choice, "message", None)
    if message is None:
        return None
    return message.content or ""  # a server may send null content for an empty answer


def echoed_loglikelihood(response: Any, text: str, boundary: int, limitation: Callable[[str], str]) -> dict[str, Any]:
    """``{"logprob", "is_greedy"}`` of the echoed prompt's tokens from character ``boundary`` on."""
    choice = _first_choice(response)
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
    greedy = all(tops[i] and values[i] >= max(tops[i].values()) for i in picked)
    return {"logprob": float(sum(values[i] for i in picked)), "is_greedy": bool(greedy)}
