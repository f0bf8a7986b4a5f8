"""issue 31, item 2: one cache of model answers, seen from the command line.

A rerun of `nlue llm` sends no request (counted by the model's own forward passes, and at a counting proxy in
front of a real `transformers serve`) and writes byte-identical predictions; another model, other parameters or
another endpoint are asked afresh; --no-cache asks everything and keeps nothing; `nlue cache report` and
`nlue cache prune` show and remove what runs stored.
"""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlue.cli import main
from tests.answer_store import count_answers

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _predictions(results: Path) -> dict[str, bytes]:
    """Every per-item file of every run under ``results``: what a rerun must give byte for byte."""
    return {str(p.relative_to(results)): p.read_bytes() for p in sorted(results.rglob("*.jsonl"))}


def _answers_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("answers: "))


@pytest.fixture
def forward_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each forward pass of every local causal LM the commands load (what 'asking the model' costs)."""
    from nlue.lm.local import LocalCausalLM

    calls: list[int] = []
    original = LocalCausalLM.__init__

    def counted(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        forward = self.model.forward
        self.model.forward = lambda *a, **k: calls.append(1) or forward(*a, **k)

    monkeypatch.setattr(LocalCausalLM, "__init__", counted)
    return calls


def test_a_rerun_of_a_local_model_asks_nothing_and_writes_the_same_predictions(
    sample_build, tiny_lms, tmp_path: Path, capsys: pytest.CaptureFixture[str], answer_cache: Path, forward_calls
) -> None:
    """issue 31, item 2: a rerun (into a new results folder, as for a new report) sends 0 requests."""
    argv = ["llm", "nlue", "--model", str(tiny_lms["gpt2"]), "--dataset", str(sample_build.repo_dir), "--tasks", "sa",
            "--mode", "loglik", "--limit", "4", "--bootstrap", "0", "-q"]  # fmt: skip
    assert main([*argv, "--results-dir", str(tmp_path / "first")]) == 0
    first = _answers_line(capsys.readouterr().out)
    asked = int(first.split()[1])
    assert asked > 0 and forward_calls and first.endswith(f"0 from the cache ({answer_cache})")
    forward_calls.clear()
    assert main([*argv, "--results-dir", str(tmp_path / "again")]) == 0
    assert _answers_line(capsys.readouterr().out) == f"answers: 0 asked, {asked} from the cache ({answer_cache})"
    assert forward_calls == []  # the model computed nothing
    assert _predictions(tmp_path / "first") == _predictions(tmp_path / "again") != {}
    # other decoding parameters, or another model: asked afresh, beside the answers already kept
    assert main([*argv, "--results-dir", str(tmp_path / "other"), "--model", str(tiny_lms["llama"])]) == 0
    assert _answers_line(capsys.readouterr().out).startswith(f"answers: {asked} asked, 0 from the cache")
    generate = [*argv, "--mode", "generate", "--max-new-tokens", "3", "--results-dir", str(tmp_path / "gen")]
    assert main(generate) == 0
    assert _answers_line(capsys.readouterr().out).startswith("answers: 4 asked, 0 from the cache")
    assert main([*generate[:-4], "--max-new-tokens", "5", "--results-dir", str(tmp_path / "gen5")]) == 0
    assert _answers_line(capsys.readouterr().out).startswith("answers: 4 asked, 0 from the cache")
    stored = count_answers(answer_cache)
    forward_calls.clear()
    assert main([*argv, "--results-dir", str(tmp_path / "fresh"), "--no-cache"]) == 0
    line = _answers_line(capsys.readouterr().out)
    assert line.startswith(f"answers: {asked} asked, 0 from the cache (--no-cache") and "cannot be resumed" in line
    assert forward_calls and count_answers(answer_cache) == stored  # asked everything, kept nothing
    assert _predictions(tmp_path / "first") == _predictions(tmp_path / "fresh")


def test_report_and_prune(sample_build, tiny_lms, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """issue 31, item 2: `nlue cache report` shows rows per model and kind; prune removes what it says, VACUUMed."""
    cache_dir = tmp_path / "cache"
    argv = ["llm", "nlue", "--dataset", str(sample_build.repo_dir), "--tasks", "sa", "--limit", "2", "--bootstrap",
            "0", "--results-dir", str(tmp_path / "r"), "--cache-dir", str(cache_dir), "-q"]  # fmt: skip
    assert main([*argv, "--model", str(tiny_lms["gpt2"]), "--mode", "loglik"]) == 0
    assert main([*argv, "--model", str(tiny_lms["llama"]), "--mode", "generate", "--max-new-tokens", "2"]) == 0
    capsys.readouterr()
    assert main(["cache", "report", "--cache-dir", str(cache_dir)]) == 0
    report = capsys.readouterr().out
    gpt2, llama = f"hf:{tiny_lms['gpt2']}", f"hf:{tiny_lms['llama']}"
    assert f"answer cache: {cache_dir / 'answers.sqlite'}" in report
    assert any(line.startswith(gpt2) and "loglikelihood" in line for line in report.splitlines())
    assert any(line.startswith(llama) and "generate  " in line for line in report.splitlines())
    total = count_answers(cache_dir / "answers.sqlite")
    assert f"total: {total} answers" in report and "2 model(s)" in report
    assert main(["cache", "prune", "--cache-dir", str(cache_dir), "--model", gpt2, "--dry-run"]) == 0
    assert "would remove" in capsys.readouterr().out and count_answers(cache_dir / "answers.sqlite") == total
    assert main(["cache", "prune", "--cache-dir", str(cache_dir), "--kind", "generate"]) == 0
    assert "removed 2 answers" in capsys.readouterr().out
    assert count_answers(cache_dir / "answers.sqlite") == total - 2
    assert main(["cache", "prune", "--cache-dir", str(cache_dir), "--older-than", "1"]) == 0  # all used just now
    assert "nothing to prune" in capsys.readouterr().out
    assert main(["cache", "prune", "--cache-dir", str(cache_dir)]) == 2  # says what to prune, never all by default
    assert main(["cache", "report", "--cache-dir", str(tmp_path / "none")]) == 2


class _CountingProxy(http.server.ThreadingHTTPServer):
    """Loopback HTTP proxy that forwards every request to ``target`` and counts the model requests."""

    def __init__(self, target: str) -> None:
        self.target, self.asked = target.rstrip("/"), 0
        super().__init__(("127.0.0.1", 0), _Forward)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Forward(http.server.BaseHTTPRequestHandler):
    def _forward(self) -> None:
        proxy: _CountingProxy = self.server  # type: ignore[assignment]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        if self.command == "POST":
            proxy.asked += 1
        path = self.path.removeprefix("/v1")
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization", "accept")}
        request = urllib.request.Request(proxy.target + path, data=body, headers=headers, method=self.command)
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                status, payload, kind = answer.status, answer.read(), answer.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            status, payload, kind = error.code, error.read(), error.headers.get("Content-Type", "")
        self.send_response(status)
        self.send_header("Content-Type", kind or "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _forward

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy(transformers_serve) -> Iterator[_CountingProxy]:
    server = _CountingProxy(transformers_serve[0])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_rerun_against_a_real_server_sends_no_request(
    transformers_serve, proxy: _CountingProxy, sample_build, tmp_path: Path, capsys, answer_cache: Path
) -> None:
    """issue 31, item 2: `transformers serve` behind a counting proxy: the rerun sends 0 requests and writes the
    same predictions; the same model at the server's own address (another endpoint) is asked afresh."""
    url, model = transformers_serve
    argv = ["llm", "nlue", "--model", str(model), "--dataset", str(sample_build.repo_dir), "--tasks", "sa",
            "--mode", "generate", "--limit", "2", "--max-new-tokens", "4", "--concurrency", "1", "--bootstrap", "0",
            "-q"]  # fmt: skip
    assert main([*argv, "--endpoint", proxy.url, "--results-dir", str(tmp_path / "first")]) == 0
    assert _answers_line(capsys.readouterr().out) == f"answers: 2 asked, 0 from the cache ({answer_cache})"
    assert proxy.asked == 2
    assert main([*argv, "--endpoint", proxy.url, "--results-dir", str(tmp_path / "again")]) == 0
    assert _answers_line(capsys.readouterr().out) == f"answers: 0 asked, 2 from the cache ({answer_cache})"
    assert proxy.asked == 2  # the server saw nothing of the rerun
    assert _predictions(tmp_path / "first") == _predictions(tmp_path / "again") != {}
    assert main([*argv, "--endpoint", url, "--results-dir", str(tmp_path / "direct")]) == 0
    assert _answers_line(capsys.readouterr().out).startswith("answers: 2 asked, 0 from the cache")


def test_the_servers_capabilities_are_cached_too(
    transformers_serve, proxy: _CountingProxy, sample_build, tmp_path: Path, capsys, answer_cache: Path
) -> None:
    """issue 31, item 2: with --mode auto the first run probes the server for log-likelihoods (transformers serve
    has none, so it generates); the rerun takes that answer from the cache as well and sends 0 requests."""
    _url, model = transformers_serve
    argv = ["llm", "nlue", "--model", str(model), "--dataset", str(sample_build.repo_dir), "--tasks", "sa",
            "--endpoint", proxy.url, "--limit", "2", "--max-new-tokens", "4", "--concurrency", "1", "--bootstrap",
            "0", "-q"]  # fmt: skip
    assert main([*argv, "--results-dir", str(tmp_path / "first")]) == 0
    capsys.readouterr()
    first = proxy.asked
    assert first >= 3  # the probe (its tries) and two generations
    assert main([*argv, "--results-dir", str(tmp_path / "again")]) == 0
    assert _answers_line(capsys.readouterr().out).startswith("answers: 0 asked")
    assert proxy.asked == first
    assert _predictions(tmp_path / "first") == _predictions(tmp_path / "again") != {}


def test_a_masked_lms_scores_are_cached_too(nediom_build, tmp_path: Path, capsys, answer_cache: Path) -> None:
    """issue 31, item 2: a masked LM's pseudo-log-likelihoods (neDIOM's zero-shot protocol) go through the cache
    like every backend's requests: the rerun computes nothing and writes the same predictions."""
    from nlue.lm.tiny import save_tiny_encoder

    masked = save_tiny_encoder(tmp_path / "mlm", "roberta", seed=3)
    argv = ["idioms", "eval", "--model", str(masked), "--dataset", str(nediom_build.repo_dir), "--setting",
            "zero-shot", "--context", "S2", "--mode", "loglik", "--limit", "4", "--bootstrap-resamples", "0", "-q"]  # fmt: skip
    assert main([*argv, "--results-dir", str(tmp_path / "first")]) == 0
    first = _answers_line(capsys.readouterr().out)
    asked = int(first.split()[1])
    assert asked > 0 and first.endswith(f"0 from the cache ({answer_cache})")
    assert main([*argv, "--results-dir", str(tmp_path / "again")]) == 0
    assert _answers_line(capsys.readouterr().out) == f"answers: 0 asked, {asked} from the cache ({answer_cache})"
    assert _predictions(tmp_path / "first") == _predictions(tmp_path / "again") != {}
