"""`--batch-api` (issue 31, item 3): a run's requests as batches through an OpenAI-compatible batch API.

Against the fake batch server of tests/fake_batch_server.py on loopback: batch answers equal live answers in
both modes; a run killed while it waits resumes its batch, with nothing lost and nothing sent twice; lines
that failed go again as a smaller batch; an expired batch keeps its answers and sends only the rest; a line
for a request nobody sent is refused and named.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlue.cli import main
from tests.answer_store import count_answers
from tests.fake_batch_server import BatchServer

pytest.importorskip("openai")
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchServer]:
    monkeypatch.setenv("NLUE_BATCH_POLL_SECONDS", "0.05")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    fake = BatchServer().start()
    try:
        yield fake
    finally:
        fake.stop()


def _argv(server: BatchServer, dataset: Path, results: Path, mode: str, *extra: str) -> list[str]:
    return ["llm", "nlue", "--endpoint", server.base_url, "--model", "served-tiny", "--dataset", str(dataset),
            "--tasks", "sa", "--mode", mode, "--limit", "8", "--bootstrap", "0", "--max-new-tokens", "4",
            "--results-dir", str(results), "-q", *extra]  # fmt: skip


def _predictions(results: Path) -> dict[str, bytes]:
    return {str(p.relative_to(results)): p.read_bytes() for p in sorted(results.rglob("*.jsonl"))}


@pytest.mark.parametrize("mode", ["generate", "loglik"])
def test_a_batch_run_answers_as_a_live_run(sample_build, server: BatchServer, tmp_path: Path, mode: str) -> None:
    """issue 31, item 3: the same requests as batch lines (same bodies, read by the same code) give the same
    predictions as live requests, in both modes; every request is in a batch exactly once."""
    dataset = sample_build.repo_dir
    assert main([*_argv(server, dataset, tmp_path / "live", mode, "--cache-dir", str(tmp_path / "c1"))]) == 0
    live_requests = len(server.state.records)
    assert main([*_argv(server, dataset, tmp_path / "batch", mode, "--cache-dir", str(tmp_path / "c2"),
                        "--batch-api")]) == 0  # fmt: skip
    assert _predictions(tmp_path / "live") == _predictions(tmp_path / "batch") != {}
    batched = server.batch.received
    assert sum(batched.values()) > 0 and set(batched.values()) == {1}
    probe = 1 if mode == "loglik" else 0  # the capability probe goes live, once
    assert len(server.state.records) - live_requests == probe
    assert count_answers(tmp_path / "c2" / "answers.sqlite") == count_answers(tmp_path / "c1" / "answers.sqlite")


def test_a_run_killed_while_it_waits_resumes_its_batch(sample_build, server: BatchServer, tmp_path: Path) -> None:
    """issue 31, item 3: SIGKILL while the batch is in progress; the rerun finds the batch by its id (the state
    file beside the cache), takes its answers and sends nothing again: 0 lost, 0 duplicated."""
    server.batch.slow_polls = 10_000  # in progress until the test lets it finish
    argv = _argv(server, sample_build.repo_dir, tmp_path / "r", "generate", "--batch-api")
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    process = subprocess.Popen([sys.executable, "-m", "nlue.cli", *argv], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 120
    while server.batch.polls["batch-1"] < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert server.batch.polls["batch-1"] >= 3, process.communicate(timeout=10)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    sent = dict(server.batch.received)
    server.batch.slow_polls = 0
    assert main(argv) == 0
    assert server.batch.received == sent and set(sent.values()) == {1}  # nothing sent again
    assert len(server.batch.batches) == 1 and sum(server.batch.answered.values()) == len(sent)
    assert len((tmp_path / "r").rglob("raw_outputs.jsonl").__next__().read_text().splitlines()) == 8


def test_failed_lines_go_again_as_a_smaller_batch(sample_build, server: BatchServer, tmp_path: Path) -> None:
    """issue 31, item 3: lines the server failed (HTTP 500 in the error file) are sent again, alone."""
    server.batch.fail_first = 3
    assert main(_argv(server, sample_build.repo_dir, tmp_path / "r", "generate", "--batch-api")) == 0
    sizes = [b["request_counts"]["total"] for b in server.batch.batches.values()]
    assert sizes == [sizes[0], 3] and sizes[0] > 3
    assert sorted(server.batch.received.values()).count(2) == 3  # only the failed ones twice
    assert set(server.batch.answered.values()) == {1}


def test_an_expired_batch_keeps_its_answers_and_sends_only_the_rest(
    sample_build, server: BatchServer, tmp_path: Path
) -> None:
    """issue 31, item 3: a batch that expired with half its lines answered: those kept, the others resent."""
    server.batch.expire_first = True
    assert main(_argv(server, sample_build.repo_dir, tmp_path / "r", "generate", "--batch-api")) == 0
    first, second = (b["request_counts"]["total"] for b in server.batch.batches.values())
    assert second == first - first // 2
    assert set(server.batch.answered.values()) == {1} and sum(server.batch.answered.values()) == first


def test_a_line_for_a_request_nobody_sent_is_refused(
    sample_build, server: BatchServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 31, item 3: answers from outside are untrusted: an output line with a foreign custom_id stops the
    run naming it, and no answer of that batch is taken on its word."""
    server.batch.foreign = True
    assert main(_argv(server, sample_build.repo_dir, tmp_path / "r", "generate", "--batch-api")) != 0
    assert "not-a-request-of-ours" in capsys.readouterr().err


def test_batch_api_needs_an_endpoint_and_the_cache(sample_build, tiny_lms, server: BatchServer, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """issue 31, item 3: --batch-api without --endpoint, or with --no-cache (no place to resume from), exits 2."""
    argv = ["llm", "nlue", "--model", str(tiny_lms["gpt2"]), "--dataset", str(sample_build.repo_dir), "--tasks",
            "sa", "--limit", "2", "--results-dir", str(tmp_path / "r"), "--batch-api", "-q"]  # fmt: skip
    assert main(argv) == 2 and "--endpoint" in capsys.readouterr().err
    assert main([*_argv(server, sample_build.repo_dir, tmp_path / "r", "generate", "--batch-api"), "--no-cache"]) == 2
    assert "--no-cache" in capsys.readouterr().err


def test_the_dry_run_counts_the_requests_and_prints_the_cost_live_and_as_batches(
    sample_build, server: BatchServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 31, item 3: `--dry-run --batch-api` counts the requests a run would send (as many as the batch run
    then sends) and prints the estimated cost at the listed price and at the batch price; it sends nothing and
    writes nothing."""
    prices = ["--prompt-price-per-1k", "0.15", "--completion-price-per-1k", "0.6"]
    argv = _argv(server, sample_build.repo_dir, tmp_path / "r", "generate", "--batch-api", *prices)
    assert main([*argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "requests: 8 (0 log-likelihood, 8 generation)" in out
    live = float(out.split("estimated cost at the listed price: at most ~")[1].split()[0])
    batch = float(out.split("estimated cost as batches (--batch-api, 50% off): at most ~")[1].split()[0])
    assert live > 0 and batch == pytest.approx(live / 2, abs=1e-4)
    assert not (tmp_path / "r").exists() and not server.batch.received and not server.state.records
    assert main(argv) == 0
    assert sum(server.batch.received.values()) == 8  # what the dry run counted
