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
  serve``, OpenAI's chat models) is found by :meth:`OpenAICompatibleLM.probe`, one small request
  before a run, and the command refuses the mode at once, naming the mode or server that works.
* Requests run in threads, at most ``concurrency`` at a time (default 10); the first few go alone,
  so that a server that gains nothing from more in flight is measured and said once
  (:mod:`nlue.lm.http_pace`). Each try of a request has ``timeout`` seconds for its whole answer,
  however slowly it arrives (:mod:`nlue.lm.http_deadline`). Each is tried up to 1 + ``max_retries``
  times (:mod:`nlue.lm.http_retry`; each retry logged
  once with its cause and counted in the description); after ``max_consecutive_failures``
  failed requests in a row, or when every request failed, the run stops with a
  :class:`~nlue.errors.ServiceError` that says what failed and how many answers the cache keeps. Answers go into
  the answer cache as they arrive (:mod:`nlue.lm.answer_cache`, committed each), so a killed run resumes with
  nothing lost or asked twice.
* The API key is read from the environment variable the user names (``OPENAI_API_KEY`` by
  default) and only handed to the client: it is never logged, journalled or described, and is
  masked in any server message that quotes it and in any answer that echoes it (as are the
  credentials an endpoint URL holds, which are never stored either: :mod:`nlue.lm.http_endpoint`).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any, Literal

from nlue.errors import NlueError, ServiceError
from nlue.lm.answer_cache import AnswerCache
from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.cost import UsageMeter
from nlue.lm.description import LOGLIK, Capabilities, ModelDescription, run_locally_advice
from nlue.lm.http_bodies import CHAT, generation_body, loglikelihood_body, read_generation, read_loglikelihood
from nlue.lm.http_deadline import deadline, http_client
from nlue.lm.http_endpoint import parse_endpoint, read_api_key
from nlue.lm.http_pace import PaceWatch
from nlue.lm.http_retry import Failure, MalformedResponse, RetryLog, RetryPolicy, ServerLimitation, classify
from nlue.lm.journal import JournalledCall, open_journal
from nlue.lm.progress import WarningTally, progress_bar
from nlue.text.safe import redact

logger = logging.getLogger(__name__)


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
        journal: AnswerCache | str | os.PathLike[str] | None = None,  # the answer cache (or a path to one)
        show_progress: bool = True,
        batch_api: bool = False,  # send the requests as batches (nlue.lm.batch_api), at the batch price
        batch_price_share: float = 0.5,  # BATCH_PRICE_SHARE
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
        self.endpoint = parse_endpoint(base_url)
        self.base_url = self.endpoint.public  # what may be shown and stored: no credentials
        self.api_key_env = api_key_env
        key = read_api_key(api_key_env, self.endpoint)
        self._secrets = (key, *self.endpoint.secrets)
        self.concurrency = concurrency
        self.timeout = timeout
        self.policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max)
        self.max_consecutive_failures = max_consecutive_failures
        self.seed = seed
        self.generation_endpoint = generation_endpoint
        self.failed_generations = failed_generations
        self.batch_api = batch_api
        if batch_api:  # batches cost a share of the listed prices (half at OpenAI)
            prompt_price_per_1k, completion_price_per_1k = (
                None if price is None else price * batch_price_share
                for price in (prompt_price_per_1k, completion_price_per_1k)
            )
        self.usage = UsageMeter(prompt_price_per_1k, completion_price_per_1k)
        self.journal = journal
        self.show_progress = show_progress
        self._client = openai.OpenAI(
            base_url=self.endpoint.url, api_key=key or "EMPTY", max_retries=0, timeout=timeout,
            default_headers=self.endpoint.headers or None, default_query=self.endpoint.query or None,
            http_client=http_client(timeout),
        )  # fmt: skip
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self.retries = RetryLog()
        self.pace = PaceWatch(concurrency, timeout)
        self._probed: dict[str, bool] = {}  # mode -> whether the server can do it (nlue.lm.description.MODES)

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def describe(self) -> ModelDescription:
        return ModelDescription(
            backend="openai-compatible",
            name=self.name,
            model=self.model,
            capabilities=Capabilities(
                generate=True,
                loglikelihood=True,
                chat=self.generation_endpoint == "chat",
                prompt_logprobs=self._probed.get(LOGLIK),
            ),
            decoding="greedy (temperature 0)",
            settings={
                "base_url": self.base_url,
                "api_key_env": self.api_key_env,
                "generation_endpoint": self.generation_endpoint,
                "temperature": 0.0,
                "seed": self.seed,
                "concurrency": self.concurrency,
                "timeout_s": self.timeout,
                "max_retries": self.policy.max_retries,
                "max_consecutive_failures": self.max_consecutive_failures,
                "usage": self.usage.summary(),
                "retries": self.retries.summary(),
                "pace": self.pace.summary(),
            },
        )

    def probe(self, mode: str) -> Capabilities:
        """What the server can do for ``mode``; for ``loglik``, found by one small request before a run.

        Every OpenAI-compatible server generates, so ``generate`` needs no request (a wrong model name
        or key stops the run at its first request). Log-likelihood needs the prompt's token
        log-probabilities, which many servers do not return (chat APIs, ``transformers serve``): one
        completions request with echo and logprobs tells, once per model, instead of a run of failures.
        """
        if mode == LOGLIK and LOGLIK not in self._probed:
            # What the server can do is cached like an answer, keyed on what answers: a rerun asks nothing.
            journal, owned = open_journal(self.journal)
            try:
                call = JournalledCall(journal, self, "probe", LOGLIK_PARAMS, [{"mode": LOGLIK}])
                if call.pending:
                    call.record([(0, self._probe_loglikelihood())])
                self._probed[LOGLIK] = bool(call.results()[0]["supported"])
            finally:
                if owned and journal is not None:
                    journal.close()
        return self.describe().capabilities

    def _probe_loglikelihood(self) -> dict[str, Any]:
        """One small echo + logprobs request: {"supported": whether the server answered it, "description"}."""
        where = "POST /v1/completions (probe: echo + logprobs)"
        request = LoglikelihoodRequest("Nepal", " is")
        outcome = self._try(self._ask_loglikelihood, request, where, threading.Event(), retries=PROBE_RETRIES)
        if outcome[0] == "ok":
            return {"supported": True, "description": ""}
        if outcome[1].limitation:
            logger.info("probe: %s", outcome[1].description)
            return {"supported": False, "description": outcome[1].description}
        if outcome[1].fatal:
            raise NlueError(f"the server refused the probe request: {outcome[1].description}")
        raise ServiceError(
            f"the server at {self.base_url} did not answer a probe request ({outcome[1].description}); "
            "is it running, and is the URL right (it usually ends in /v1)?"
        )

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    # -- the request kinds ----------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        batch = (
            lambda r: loglikelihood_body(self.model, self.seed, r),
            lambda r, body: read_loglikelihood(_parsed(body, "completions"), r, self._limitation),
        )
        results = self._run("loglikelihood", LOGLIK_PARAMS, requests, self._ask_loglikelihood, "POST /v1/completions",
                            batch)  # fmt: skip
        return [Loglikelihood.from_dict(r) for r in results]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        if self.generation_endpoint == "completions" and any(r.is_chat for r in requests):
            raise NlueError("chat messages need generation_endpoint='chat'; the completions endpoint takes prompts")
        params = {"endpoint": self.generation_endpoint, "temperature": 0.0, "seed": self.seed}
        endpoint = self.generation_endpoint
        batch = (
            lambda r: generation_body(self.model, self.seed, endpoint, r),
            lambda r, body: read_generation(_parsed(body, endpoint), endpoint, r, self._redact),
        )
        results = self._run("generate", params, requests, self._ask_generation, self._generation_route(), batch)
        return [Generation.from_dict(r) for r in results]

    def _ask_loglikelihood(self, request: LoglikelihoodRequest) -> tuple[dict[str, Any], Any]:
        import openai

        body = loglikelihood_body(self.model, self.seed, request)
        try:
            response = self._client.completions.create(**body.json)
        except (openai.BadRequestError, openai.UnprocessableEntityError, openai.NotFoundError) as exc:
            raise ServerLimitation(
                self._limitation(f"it refused them (HTTP {exc.status_code}: {exc.message})")
            ) from exc
        return read_loglikelihood(response, request, self._limitation), getattr(response, "usage", None)

    def _limitation(self, detail: str) -> str:
        return (
            f"the server at {self.base_url} (model {self.model}) does not support echo+logprobs: log-likelihood needs "
            f"/v1/completions with echo=true and logprobs=1 to return the prompt's token log-probabilities, and {detail}. "
            f"Use a server that does (vLLM does), --mode generate, or {run_locally_advice(self.model)}"
        )

    def _ask_generation(self, request: GenerationRequest) -> tuple[dict[str, Any], Any]:
        body = generation_body(self.model, self.seed, self.generation_endpoint, request)
        create = self._client.chat.completions.create if body.url == CHAT else self._client.completions.create
        response = create(**body.json)
        return read_generation(response, self.generation_endpoint, request, self._redact), getattr(
            response, "usage", None
        )

    # -- the runner: threads, retries, journal, failure accounting ----------------------------------

    def _try(
        self,
        ask: Callable[[Any], tuple[dict[str, Any], Any]],
        request: Any,
        where: str,
        stop: threading.Event,
        retries: int | None = None,
    ) -> tuple[Any, ...]:
        """One request with its retries: ``("ok", result, usage)`` or ``("failed", Failure)``; each retry logged."""
        allowed = self.policy.max_retries if retries is None else retries
        for attempt in range(allowed + 1):
            try:
                with deadline(self.timeout):
                    result, usage = ask(request)
                return "ok", result, usage
            except Exception as exc:  # every failure is classified; none escapes a worker thread
                if isinstance(exc, ValueError | KeyError | TypeError | IndexError | AttributeError) and not isinstance(
                    exc, NlueError
                ):
                    exc = MalformedResponse(f"{type(exc).__name__}: {exc}")
                failure = classify(exc, where, self.api_key_env)
                failure = replace(failure, description=self._redact(failure.description))
            if not failure.retryable or attempt == allowed or stop.is_set():
                break
            with self._rng_lock:
                delay = self.policy.delay(attempt, failure.retry_after, self._rng)
            self.retries.retry(failure, attempt, allowed, delay)
            if stop.wait(delay):
                break
        self.retries.gave_up(failure)
        return "failed", failure

    def _generation_route(self) -> str:
        return "POST /v1/chat/completions" if self.generation_endpoint == "chat" else "POST /v1/completions"

    def _run(
        self, kind: str, params: dict[str, Any], requests: Sequence[Any], ask: Callable, where: str, batch: tuple
    ) -> list[dict]:
        journal, owned = open_journal(self.journal)
        try:
            call = JournalledCall(journal, self, kind, params, [r.to_dict() for r in requests])
            if self.batch_api and call.pending:
                failed = self._batches(call, requests, journal, *batch)
            else:
                failed = self._drive(call, requests, ask, where, kind)
            if failed:
                first = failed[min(failed)]
                # Failed generations come back as errors; a caller whose every request failed says so
                # (nlue.evals.llm.label_generation.require_answers), a translation splits the batch and tries again.
                if kind == "generate" and self.failed_generations == "return":
                    logger.warning("%d of %d generation requests failed (first: %s); counted as errors",
                                   len(failed), len(call.pending), first.description)  # fmt: skip
                    errors = {
                        i: Generation("", None, None, "error", f.description).to_dict() for i, f in failed.items()
                    }
                    return call.results(unjournalled=errors)
                message = (
                    f"{len(failed)} of {len(call.pending)} {kind} requests to {self.base_url} failed after "
                    f"{self.policy.max_retries} retries (first: {first.description}). {call.kept()}"
                )
                # Refused requests (a 4xx such as a prompt too long) are the input's; timeouts and 5xx the server's.
                raise ServiceError(message) if any(f.retryable for f in failed.values()) else NlueError(message)
            return call.results()
        finally:
            if owned and journal is not None:
                journal.close()

    def _batches(self, call: JournalledCall, requests: Sequence[Any], journal: Any, body_of: Callable,
                 read: Callable) -> dict:  # fmt: skip
        """The pending requests through the server's batch API (:mod:`nlue.lm.batch_api`)."""
        from nlue.lm.batch_api import BatchRunner, state_path

        if getattr(journal, "path", None) is None:  # --no-cache keeps nothing
            raise NlueError("--batch-api needs the answer cache, where a killed run finds its batches: drop --no-cache")
        runner = BatchRunner(self._client, state_path(journal.path, call.answerer), where=self.base_url,
                             tries=min(self.policy.max_retries, 2))  # fmt: skip
        bodies = {i: body_of(requests[i]) for i in call.pending}
        return runner.run(call, bodies, lambda i, body: read(requests[i], body), self.usage.add)

    def _drive(self, call: JournalledCall, requests: Sequence[Any], ask: Callable, where: str, kind: str) -> dict:
        """Ask every pending request; journal answers as they come; return the failures by request position.

        The first requests of a model go alone, one after another (the pace watch's rate alone,
        :mod:`nlue.lm.http_pace`), then up to ``concurrency`` are in flight.
        """
        stop = threading.Event()
        queue = list(reversed(call.pending))
        failed: dict[int, Failure] = {}
        consecutive = 0
        abort: Failure | None = None
        in_flight: dict[Future, tuple[int, float, int]] = {}  # future -> (request, sent at, in flight when sent)
        with (
            progress_bar(self.show_progress, len(queue), f"{kind} ({self.model})", call.from_journal) as bar,
            ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="nlue-http") as pool,
            WarningTally(logger, "requests failed after their tries") as failures,
        ):
            try:
                while queue or in_flight:
                    room = 1 if self.pace.measuring_alone else self.concurrency
                    while queue and abort is None and len(in_flight) < room:
                        index = queue.pop()
                        future = pool.submit(self._try, ask, requests[index], where, stop)
                        in_flight[future] = (index, time.monotonic(), len(in_flight) + 1)
                    if not in_flight:
                        break
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in done:
                        index, sent, crowd = in_flight.pop(future)
                        outcome = future.result()
                        if outcome[0] == "ok":
                            self.pace.record(time.monotonic() - sent, crowd)
                            call.record([(index, outcome[1])])
                            self.usage.add(outcome[2])
                            consecutive = 0
                            bar.update(1)
                            bar.set_postfix_str(self.usage.postfix(), refresh=False)
                            continue
                        self.pace.skip_lone()
                        failure = outcome[1]
                        failed[index] = failure
                        consecutive += 1
                        failures.warn("request failed after its tries: %s", failure.description)
                        if failure.fatal and abort is None:
                            abort = failure
                        elif consecutive >= self.max_consecutive_failures and abort is None:
                            abort = replace(failure, description=(
                                f"stopped after {consecutive} consecutive failed requests, each tried "
                                f"{self.policy.max_retries + 1} times; last error: {failure.description}"
                            ))  # fmt: skip
                    if abort is not None:
                        stop.set()  # workers stop retrying; answers still arriving are journalled above
            except BaseException:
                stop.set()  # Ctrl-C: what was answered is in the journal already
                raise
        if abort is not None:
            message = f"{abort.description}. {call.kept()}"
            # A refused key, an unknown model or a server that lacks the mode: the user's to fix. An outage is not.
            raise NlueError(message) if abort.fatal else ServiceError(message)
        return failed


def _parsed(body: Any, endpoint: str) -> Any:
    """A batch line's response body as the client would have parsed it (``openai``'s own lenient construction)."""
    from openai.types import Completion
    from openai.types.chat import ChatCompletion

    return (ChatCompletion if endpoint == "chat" else Completion).construct(**body)


BATCH_PRICE_SHARE = 0.5  # what a batch costs of the listed price (half at OpenAI)
LOGLIK_PARAMS = {"method": "completions-echo-logprobs"}  # what decides a log-likelihood answer
PROBE_RETRIES = 2  # a probe is one request: a server that is starting up gets two more tries


def from_spec(spec: Any, **context: Any) -> OpenAICompatibleLM:
    """The ``openai-compatible`` backend (:mod:`nlue.lm.backends`): a served model from a :class:`ModelSpec`.

    Failed generations come back as errors (counted as invalid answers, as the exams' protocol counts them)
    unless every request failed; failed log-likelihood requests stop the run.
    """
    options = {"failed_generations": "return", **dict(spec.options), **context}
    return OpenAICompatibleLM(
        spec.model, spec.endpoint, api_key_env=spec.api_key_env, concurrency=spec.concurrency, timeout=spec.timeout,
        max_retries=spec.max_retries, prompt_price_per_1k=spec.prompt_price_per_1k,
        completion_price_per_1k=spec.completion_price_per_1k, journal=spec.journal, show_progress=spec.show_progress,
        **options,
    )  # fmt: skip
