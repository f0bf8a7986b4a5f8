"""The HTTP backend against servers and models that misbehave, and the secrets it must keep (issue 29).

Each against the scripted server of :mod:`tests.lm_fault_server` on loopback: NaN and infinite
log-probabilities (a server fault, retried, then a failed request), an answer that trickles in (cut at
``--timeout``), credentials in the endpoint URL (used to connect, never stored), a model that echoes the
API key (kept out of every answer), a missing key (said before the first request), the pace advice
(given only where the run measured it), and the advice for log-likelihoods (a command that works).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from nlue.errors import NlueError, ServiceError
from nlue.lm.base import GenerationRequest, LoglikelihoodRequest
from nlue.lm.http import OpenAICompatibleLM
from nlue.lm.http_pace import PaceWatch
from tests.answer_store import cache_text, count_answers
from tests.lm_fault_server import FaultServer, token_logprob, tokens_of


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault_server = FaultServer().start()
    yield fault_server
    fault_server.stop()


def _lm(url: str, **options) -> OpenAICompatibleLM:
    settings = {"timeout": 1.0, "backoff_base": 0.01, "show_progress": False, **options}
    return OpenAICompatibleLM("tiny", url, **settings)


REQUEST = LoglikelihoodRequest("क ख ग", " घ ङ")


def _expected_logprob() -> float:
    tokens = tokens_of(REQUEST.context + REQUEST.continuation)
    return sum(token_logprob(tokens[i - 1], tokens[i]) for i in range(3, len(tokens)))


@pytest.mark.parametrize("fault", ["nan", "inf"])
def test_non_finite_log_probabilities_are_retried_then_a_failed_request(server: FaultServer, fault: str) -> None:
    """issue 29, item 4: NaN or infinite log-probabilities are a server fault, never scored."""
    server.state.script = [fault]
    lm = _lm(server.base_url)
    (result,) = lm.loglikelihood([REQUEST])
    assert result.logprob == pytest.approx(_expected_logprob())  # the retry's answer, not the NaN
    assert lm.retries.summary()["retries_by_cause"] == {"non-finite": 1}
    server.state.rules = {"घ": fault}  # every answer to it: the request fails, and the run says so
    persistent = _lm(server.base_url, max_retries=2)
    with pytest.raises(ServiceError, match=r"1 of 1 loglikelihood requests .* failed after 2 retries .*log-prob"):
        persistent.loglikelihood([REQUEST])
    summary = persistent.retries.summary()
    assert summary["retries_by_cause"] == {"non-finite": 2}
    assert summary["failed_requests_by_cause"] == {"non-finite": 1}


def test_a_local_model_that_gives_nan_is_refused_and_nothing_is_kept(tiny_lms, tmp_path: Path) -> None:
    """issue 29, item 4: a local model's NaN log-probabilities are refused, not scored or journalled."""
    import torch

    from nlue.lm.local import LocalCausalLM

    journal = tmp_path / "answers.sqlite"
    lm = LocalCausalLM(tiny_lms["gpt2"], device="cpu", journal=journal, show_progress=False)
    with torch.no_grad():
        lm.model.get_output_embeddings().weight[3].fill_(float("nan"))  # one logit NaN: every log-softmax is
    with pytest.raises(NlueError, match=r"NaN or infinite log-probability for 2 of 2 requests .*--dtype float32"):
        lm.loglikelihood([LoglikelihoodRequest("नेपाल", " सुन्दर"), LoglikelihoodRequest("काठमाडौं", " शहर")])
    assert count_answers(journal) == 0


def test_a_trickling_answer_is_cut_at_the_timeout_on_every_try(server: FaultServer) -> None:
    """issue 29, item 16: --timeout is a deadline for each try, not a wait for the next byte."""
    server.state.rules = {"धीरे": "trickle:0.2"}  # a byte every 0.2 s: a per-read timeout of 1 s never trips
    lm = _lm(server.base_url, timeout=1.0, max_retries=1)
    started = time.monotonic()
    with pytest.raises(ServiceError, match=r"timed out"):
        lm.generate([GenerationRequest(prompt="धीरे")])
    elapsed = time.monotonic() - started
    first, second = server.state.records
    assert 0.9 <= second.started - first.started < 1.6  # the first try was cut at its deadline
    assert elapsed < 2.0 + 0.8  # two tries of 1 s each, and a short backoff
    assert lm.retries.summary()["retries_by_cause"] == {"timeout": 1}
    server.state.rules = {}
    assert lm.generate([GenerationRequest(prompt="फेरि")])[0].text  # the client goes on working after a cut


def test_credentials_in_the_endpoint_url_are_used_to_connect_and_never_stored(
    server: FaultServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """issue 29, item 18: user:password and ?api_key= in --endpoint reach the server, not a file or a log."""
    caplog.set_level(logging.DEBUG)
    port = server.server_address[1]
    password, query_key = "pa55-w0rd-s3cret", "qk-0123456789abcdef"
    url = f"http://nlue-user:{password}@127.0.0.1:{port}/v1?api_key={query_key}&api-version=2024-01"
    journal = tmp_path / "answers.sqlite"
    lm = _lm(url, journal=journal)
    lm.generate([GenerationRequest(prompt="नमस्ते")])
    (record,) = server.state.records
    assert record.path == "/v1/chat/completions"
    assert record.authorization == "Basic " + base64.b64encode(f"nlue-user:{password}".encode()).decode()
    assert parse_qs(record.query) == {"api_key": [query_key], "api-version": ["2024-01"]}
    described = lm.describe().to_dict()
    assert described["base_url"] == f"http://127.0.0.1:{port}/v1?api_key=***&api-version=2024-01"
    server.state.script = ["500"] * 2
    with pytest.raises(ServiceError) as caught:
        _lm(url, max_retries=1).generate([GenerationRequest(prompt="अर्को")])
    assert f"127.0.0.1:{port}/v1" in str(caught.value)
    from nlue.cli_support import LOG_FORMAT, TerminalSafeFormatter

    # every log line as the command line writes it (httpx logs each request's full URL, query and all)
    logged = [TerminalSafeFormatter(LOG_FORMAT).format(record) for record in caplog.records]
    assert any("api_key=***" in line for line in logged)
    kept = [json.dumps(described), cache_text(journal), str(caught.value), *logged]
    assert not [text for text in kept if password in text or query_key in text or "nlue-user" in text]
    with pytest.raises(NlueError, match=r"http:// or https:// URL with a host.*got 'localhost:8000/v1'"):
        _lm("localhost:8000/v1")


def test_an_answer_that_echoes_the_api_key_keeps_none_of_it(
    server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 29, item 19: a model that repeats the key it was sent: the key is in no answer and no journal."""
    secret = "sk-nlue-echo-0123456789abcdef"
    monkeypatch.setenv("NLUE_ECHO_KEY", secret)
    server.state.rules = {"ECHO": "echo-auth"}
    journal = tmp_path / "answers.sqlite"
    (answer,) = _lm(server.base_url, api_key_env="NLUE_ECHO_KEY", journal=journal).generate(
        [GenerationRequest(prompt="ECHO नमस्ते", max_new_tokens=64)]
    )
    assert server.state.records[0].authorization == f"Bearer {secret}"  # sent, and echoed by the "model"
    assert "(you sent Bearer ***)" in answer.text and secret not in answer.text
    assert secret not in cache_text(journal)


def test_a_named_key_variable_that_is_unset_is_a_warning_before_the_first_request(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """issue 29, item 23: --api-key-env NOPE_KEY unset is a warning; the default unset on loopback stays info."""
    monkeypatch.delenv("NOPE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    caplog.set_level(logging.INFO)

    def said(url: str, **options) -> dict[int, list[str]]:
        caplog.clear()
        _lm(url, **options)
        return {level: [r.getMessage() for r in caplog.records if r.levelno == level] for level in (20, 30)}

    named = said(server.base_url, api_key_env="NOPE_KEY")
    assert len(named[logging.WARNING]) == 1 and "$NOPE_KEY (named by --api-key-env) is not set" in named[30][0]
    assert not server.state.records  # said when the model is built, before any request
    assert said(server.base_url)[logging.WARNING] == []  # a server of one's own needs no key
    assert said("http://10.1.2.3:8000/v1")[logging.WARNING] == []
    hosted = said("https://api.example.com/v1")[logging.WARNING]
    assert len(hosted) == 1 and "no API key in $OPENAI_API_KEY for https://api.example.com/v1" in hosted[0]
    monkeypatch.setenv("NOPE_KEY", "sk-set-0123456789")
    assert said(server.base_url, api_key_env="NOPE_KEY")[logging.WARNING] == []


def _watched(caplog: pytest.LogCaptureFixture, lone: float, busy: float) -> tuple[PaceWatch, list[str]]:
    """A pace watch fed a run's latencies (10 in flight): ``lone`` seconds alone, ``busy`` with the pool full."""
    watch = PaceWatch(10, timeout=120.0)
    caplog.clear()
    for _ in range(3):
        watch.record(lone, 1)
    for _ in range(30):
        watch.record(busy, 10)
    return watch, [r.getMessage() for r in caplog.records if r.name == "nlue.lm.http_pace"]


def test_the_pace_advice_is_given_only_where_the_run_measured_no_gain(caplog: pytest.LogCaptureFixture) -> None:
    """issue 29, item 21: answers 7x slower with 10 in flight, yet 1.4x as many per second: no --concurrency 1 advice."""
    watch, said = _watched(
        caplog, lone=0.1, busy=0.7
    )  # what a batching server on a CPU does; the old rule said "same speed"
    assert said == []
    pace = watch.summary()
    assert pace["looks_serial"] is False
    assert pace["answers_per_s_in_flight"] == pytest.approx(10 / 0.7, abs=1e-3) and pace["answers_per_s_alone"] == 10
    watch, said = _watched(caplog, lone=0.1, busy=1.02)  # one at a time: 10 in flight, each waits for the 9 ahead
    assert len(said) == 1 and watch.summary()["looks_serial"] is True
    assert "answered 9.80 requests/s" in said[0] and "0.98x the 10.00/s of the 3 sent alone" in said[0]
    assert "--concurrency 1 is about as fast" in said[0]


def test_the_advice_for_log_likelihoods_is_a_command_that_works(
    server: FaultServer, sample_build, tiny_lms, tmp_path: Path, capsys, caplog: pytest.LogCaptureFixture
) -> None:
    """issue 29, item 22: the server cannot give log-likelihoods; the advised local command runs (no `hf:<model>`)."""
    from nlue.cli import main

    caplog.set_level(logging.INFO)
    server.state.rules = {'"echo"': "nologprobs"}  # a server without prompt log-probabilities
    common = ["llm", "nlue", "--mode", "loglik", "--tasks", "sa", "--dataset", str(sample_build.repo_dir),
              "--limit", "2", "--bootstrap", "0", "--results-dir", str(tmp_path), "-q"]  # fmt: skip
    assert main([*common, "--endpoint", server.base_url, "--model", str(tiny_lms["llama"])]) == 2
    err = capsys.readouterr().err
    advised = re.search(r"the same command without `--endpoint`, with `(--model [^`]+)`", err)
    assert advised, err
    probe = [r.getMessage() for r in caplog.records if r.getMessage().startswith("probe:")]
    assert probe and all("hf:" not in line and advised[1] in line for line in [err, *probe])
    assert main([*common, *shlex.split(advised[1])]) == 0
    assert list(tmp_path.glob("*/sa.json"))
