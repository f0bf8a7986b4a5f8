"""The OpenAI-compatible HTTP backend, against real servers on loopback.

* ``transformers serve`` with a tiny Llama-style model built here: chat generation for real,
  and log-likelihood refused with the error that names the server's limitation;
* the scripted server of :mod:`tests.lm_fault_server` (vLLM-shaped echo+logprobs): parsing,
  HTTP 500/429/400/401, timeouts, malformed and cut-short bodies, dropped connections,
  Retry-After, the consecutive-failure stop, the concurrency limit, the key kept secret, and
  a run killed with SIGKILL that resumes with nothing lost or asked twice.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlue.errors import NlueError, ServiceError
from nlue.lm.base import ChatMessage, GenerationRequest, LoglikelihoodRequest
from nlue.lm.http import OpenAICompatibleLM
from nlue.lm.http_retry import RetryPolicy, retry_after_seconds
from tests.answer_store import cache_text, count_answers, stored
from tests.lm_fault_server import FaultServer, reply_for, token_is_greedy, token_logprob, tokens_of


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault_server = FaultServer().start()
    yield fault_server
    fault_server.stop()


def _lm(server: FaultServer, **options) -> OpenAICompatibleLM:
    settings = {"timeout": 1.0, "backoff_base": 0.01, "show_progress": False, **options}
    return OpenAICompatibleLM("tiny", server.base_url, **settings)


def _expected(context: str, continuation: str, first: int) -> tuple[float, bool]:
    """Sum over the scripted tokens from index ``first`` on (the test names where the continuation starts)."""
    tokens = tokens_of(context + continuation)
    pairs = [(tokens[i - 1], tokens[i]) for i in range(first, len(tokens))]
    return sum(token_logprob(*p) for p in pairs), all(token_is_greedy(*p) for p in pairs)


def test_loglikelihood_from_echoed_prompt_logprobs(server: FaultServer) -> None:
    cases = [
        (LoglikelihoodRequest("क ख ग", " घ ङ"), 3),  # a clean token boundary
        (LoglikelihoodRequest("क ख ", "ग"), 2),  # the trailing space belongs to the continuation (lm-eval)
        (LoglikelihoodRequest("क ख", "ग घ"), 1),  # " खग" straddles the boundary: it counts for the continuation
    ]
    results = _lm(server).loglikelihood([request for request, _ in cases])
    for (request, first), result in zip(cases, results, strict=True):
        logprob, greedy = _expected(request.context, request.continuation, first)
        assert result.logprob == pytest.approx(logprob) and result.is_greedy == greedy
    sent = server.state.asked("/v1/completions")[0]
    assert sent["echo"] is True and sent["logprobs"] == 1 and sent["max_tokens"] == 1 and sent["temperature"] == 0
    with pytest.raises(NlueError, match="no log-probability"):
        _lm(server).loglikelihood([LoglikelihoodRequest("", "क ख")])


@pytest.mark.parametrize("fault", ["500", "429", "malformed", "badshape", "truncated", "drop", "sleep:3"])
def test_each_fault_is_retried_and_the_answer_kept(server: FaultServer, fault: str) -> None:
    request = LoglikelihoodRequest("क ख ग", " घ ङ")
    server.state.script = [fault, fault]
    result = _lm(server, timeout=0.5).loglikelihood([request])[0]
    assert result.logprob == pytest.approx(_expected(request.context, request.continuation, 3)[0])
    assert [r.fault for r in server.state.records] == [fault, fault, "ok"]


def test_retry_after_is_obeyed(server: FaultServer) -> None:
    server.state.script = ["429:0.5"]
    _lm(server, backoff_base=0.001).generate([GenerationRequest(prompt="नमस्ते")])
    first, second = server.state.records
    assert second.started - first.started >= 0.5


def test_backoff_grows_with_jitter_and_retry_after_forms_are_read() -> None:
    import random

    policy, rng = RetryPolicy(backoff_base=1.0, backoff_max=8.0), random.Random(0)
    for retry, ceiling in enumerate([1, 2, 4, 8, 8]):
        waits = {policy.delay(retry, None, rng) for _ in range(20)}
        assert all(ceiling / 2 <= w <= ceiling for w in waits) and len(waits) > 1
    assert 3.0 <= policy.delay(0, 3.0, rng) <= 3.3
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert 0 <= retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) <= 0.0 + 1e-9
    assert retry_after_seconds({}) is None


def test_a_request_is_tried_six_times_then_the_run_says_what_failed(server: FaultServer) -> None:
    server.state.script = ["500"] * 6
    # a server error is not the user's input: a ServiceError (exit 1)
    with pytest.raises(ServiceError, match=r"1 of 1 generate requests .* failed after 5 retries \(first: .*HTTP 500"):
        _lm(server).generate([GenerationRequest(prompt="नमस्ते")])
    assert len(server.state.records) == 6


def test_five_consecutive_failures_stop_the_run_and_the_rerun_asks_only_the_rest(
    server: FaultServer, tmp_path: Path
) -> None:
    journal = tmp_path / "answers.sqlite"
    prompts = [f"राम्रो {i}" for i in range(10)] + [f"BAD {i}" for i in range(10)] + [f"पछि {i}" for i in range(10)]
    requests = [GenerationRequest(prompt=p, max_new_tokens=8) for p in prompts]
    server.state.rules = {"BAD": "500"}
    with pytest.raises(ServiceError) as caught:
        _lm(server, concurrency=1, journal=journal).generate(requests)
    message = str(caught.value)
    assert "stopped after 5 consecutive failed requests, each tried 6 times; last error:" in message
    assert (
        "HTTP 500" in message
        and f"10 of 30 distinct requests are answered and kept in the answer cache {journal}" in message
    )
    assert "ask only the 20 others" in message
    assert len(server.state.records) == 10 + 5 * 6  # the other BAD requests were never sent
    assert count_answers(journal) == 10
    server.state.rules = {}
    before = len(server.state.records)
    results = _lm(server, concurrency=3, journal=journal).generate(requests)
    assert len(server.state.records) - before == 20
    assert [r.text for r in results] == [reply_for(p) for p in prompts]


def test_a_failed_generation_can_come_back_as_an_error_and_is_not_journalled(
    server: FaultServer, tmp_path: Path
) -> None:
    journal = tmp_path / "answers.sqlite"
    requests = [GenerationRequest(prompt=p) for p in ["क", "BAD ख", "ग"]]
    server.state.rules = {"BAD": "400"}
    with pytest.raises(NlueError, match=r"1 of 3 generate requests .* HTTP 400"):
        _lm(server, journal=journal).generate(requests)
    results = _lm(server, journal=journal, failed_generations="return").generate(requests)
    assert [r.finish_reason for r in results] == ["stop", "error", "stop"]
    assert "HTTP 400" in (results[1].error or "") and results[1].text == ""
    assert count_answers(journal) == 2


def test_the_api_key_is_sent_but_never_logged_journalled_or_shown(
    server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-nlue-test-0123456789abcdef"
    monkeypatch.setenv("NLUE_TEST_API_KEY", secret)
    caplog.set_level(logging.DEBUG)
    journal = tmp_path / "answers.sqlite"
    lm = _lm(server, api_key_env="NLUE_TEST_API_KEY", journal=journal)
    lm.generate([GenerationRequest(prompt="नमस्ते")])
    lm.loglikelihood([LoglikelihoodRequest("क ख", " ग")])
    server.state.script = ["401"]
    with pytest.raises(NlueError) as caught:
        lm.generate([GenerationRequest(prompt="अर्को"), GenerationRequest(prompt="अझै")])
    assert "HTTP 401" in str(caught.value) and "$NLUE_TEST_API_KEY" in str(caught.value)
    assert all(r.authorization == f"Bearer {secret}" for r in server.state.records)
    assert len(server.state.records) <= 4  # 401 stops the run at once: no retries
    shown = [str(caught.value), caplog.text, cache_text(journal), json.dumps(lm.describe().to_dict())]
    assert all(secret not in text for text in shown)


def test_concurrency_is_limited(server: FaultServer) -> None:
    server.state.delay = 0.05
    requests = [GenerationRequest(prompt=f"प्रश्न {i}") for i in range(24)]
    _lm(server, concurrency=4).generate(requests)
    assert 2 <= server.state.max_in_flight <= 4
    server.state.max_in_flight = 0
    _lm(server).generate([GenerationRequest(prompt=f"अर्को {i}") for i in range(30)])
    assert 5 <= server.state.max_in_flight <= 10  # the default, as in UrduMMLU's runs


def test_generation_usage_and_cost(server: FaultServer) -> None:
    lm = _lm(server, prompt_price_per_1k=1.0, completion_price_per_1k=2.0)
    chat = (ChatMessage("system", "छोटो उत्तर"), ChatMessage("user", "नेपालको राजधानी"))
    results = lm.generate(
        [GenerationRequest(messages=chat, max_new_tokens=2), GenerationRequest(prompt="क ख ग", stop=("ग",))]
    )
    assert results[0].finish_reason == "length" and results[0].completion_tokens == 2
    assert results[1].text == reply_for("क ख ग")[: reply_for("क ख ग").index("ग")]
    assert [m.to_dict() for m in chat] in [body["messages"] for body in server.state.asked()]
    usage = lm.describe().settings["usage"]
    prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
    assert prompt == 4 + 3 and completion == 2 + results[1].completion_tokens
    assert usage["estimated_cost"] == pytest.approx((prompt * 1.0 + completion * 2.0) / 1000)
    assert "tokens" in lm.usage.postfix() and "est. cost" in lm.usage.postfix()


KILLED_RUN = """
import sys
from nlue.lm.base import GenerationRequest
from nlue.lm.http import OpenAICompatibleLM
lm = OpenAICompatibleLM("tiny", sys.argv[1], concurrency=4, journal=sys.argv[2], show_progress=False)
lm.generate([GenerationRequest(prompt=f"प्रश्न {i}") for i in range(120)])
"""


def test_a_run_killed_mid_way_resumes_with_nothing_lost_or_asked_twice(server: FaultServer, tmp_path: Path) -> None:
    journal = tmp_path / "answers.sqlite"
    server.state.delay = 0.03
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, server.base_url, str(journal)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        if count_answers(journal) >= 30:
            break
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    time.sleep(0.1)  # requests in flight reach the server's records
    kept = {entry["request"]["prompt"] for entry in stored(journal)}
    assert 30 <= len(kept) < 120, "the run must be killed mid-way"
    before = len(server.state.records)
    prompts = [f"प्रश्न {i}" for i in range(120)]
    results = _lm(server, concurrency=4, journal=journal).generate([GenerationRequest(prompt=p) for p in prompts])
    asked_again = [r.body["messages"][0]["content"] for r in server.state.records[before:]]
    assert not kept & set(asked_again) and len(asked_again) == len(set(asked_again))  # nothing asked twice
    assert kept | set(asked_again) == set(prompts)  # nothing lost
    keys = [entry["key"] for entry in stored(journal)]
    assert len(keys) == len(set(keys)) == 120
    assert [r.text for r in results] == [reply_for(p) for p in prompts]


# -- a real OpenAI-compatible server: transformers serve ----------------------------------------------


def test_transformers_serve_chat_generation_matches_the_local_backend(transformers_serve, one_torch_thread) -> None:
    from nlue.lm.local import LocalCausalLM

    url, model = transformers_serve
    chats = [(ChatMessage("user", text),) for text in ["नमस्ते", "नेपालको राजधानी कहाँ हो?", "आजको मौसम"]]
    requests = [GenerationRequest(messages=chat, max_new_tokens=6) for chat in chats]
    served = OpenAICompatibleLM(str(model), url, concurrency=3, timeout=60, show_progress=False).generate(requests)
    local = LocalCausalLM(model, show_progress=False).generate(requests)
    assert [g.text for g in served] == [g.text for g in local]
    assert [g.prompt_tokens for g in served] == [g.prompt_tokens for g in local]
    assert all(g.finish_reason == "length" and g.completion_tokens == 6 for g in served)


def test_transformers_serve_log_likelihood_names_the_servers_limitation(transformers_serve) -> None:
    url, model = transformers_serve
    lm = OpenAICompatibleLM(str(model), url, timeout=60, show_progress=False)
    with pytest.raises(NlueError, match=r"does not support echo\+logprobs.*vLLM does"):
        lm.loglikelihood([LoglikelihoodRequest("नेपालको राजधानी", " काठमाडौं")])


def test_nlue_llm_mcq_runs_against_transformers_serve(transformers_serve, exam_build, tmp_path: Path) -> None:
    # The "done when": the exam command end to end against a real OpenAI-compatible server on loopback.
    from nlue.cli import main

    url, model = transformers_serve
    results = tmp_path / "results"
    code = main(["llm", "mcq", "--endpoint", url, "--model", str(model), "--dataset", str(exam_build.repo_dir),
                 "--task", "mcq_ne", "--limit", "3", "--max-new-tokens", "8", "--bootstrap-resamples", "20",
                 "--results-dir", str(results), "--no-chart", "-q"])  # fmt: skip
    assert code == 0
    (saved,) = results.glob("*/mcq_ne.json")
    rows = [json.loads(line) for line in (saved.parent / "mcq_ne" / "raw_outputs.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(row["category"] != "api_error" for row in rows)  # every request was answered
    metrics = json.loads(saved.read_text(encoding="utf-8"))["metrics"]
    if metrics["invalid_rate"] == 1.0:  # nothing parsed: no accuracy over parseable items (null, with its reason)
        assert metrics["accuracy_parseable"] is None
    else:
        assert 0.0 <= metrics["accuracy_all_items"] <= metrics["accuracy_parseable"]
