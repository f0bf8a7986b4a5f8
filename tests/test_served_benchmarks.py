"""Every benchmark on a model behind a real server: `transformers serve` on loopback, as a user runs it.

`transformers serve` gives no prompt log-probabilities, so NLUE and neDIOM run by generation there
(``--mode auto`` finds that out with one probe request), and the exams generate as always. Every run
lands in the one default results folder, where `nlue space` reads, and the Space's boards show it
with its mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlue.cli import main
from tests.lm_fault_server import FaultServer


@pytest.fixture
def fault_server():
    server = FaultServer().start()
    yield server
    server.stop()


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_all_three_benchmarks_by_generation_against_transformers_serve(
    transformers_serve, sample_build, exam_build, nediom_build, tmp_path, monkeypatch, capsys, one_torch_thread
) -> None:
    from nlue.boards.exams import load_exam_board
    from nlue.boards.leaderboard import result_rows
    from nlue.boards.nediom import load_nediom_board

    url, model = transformers_serve
    monkeypatch.chdir(tmp_path)  # no --results-dir: the default folder, the one `nlue space` reads
    monkeypatch.delenv("NLUE_RESULTS_DIR", raising=False)
    served = ["--endpoint", url, "--model", str(model), "--concurrency", "1", "--bootstrap", "50", "-q"]
    assert main(["llm", "nlue", *served, "--dataset", str(sample_build.repo_dir), "--tasks", "sa", "rte",
                 "--limit", "6", "--name", "served"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "NLUE tasks by generation (SAMPLE DATA" in out and "invalid" in out
    assert main(["llm", "mcq", *served, "--dataset", str(exam_build.repo_dir), "--task", "mcq_ne", "--limit", "4",
                 "--name", "served", "--no-chart"]) == 0  # fmt: skip
    assert main(["idioms", "eval", *served, "--dataset", str(nediom_build.repo_dir), "--setting", "zero-shot",
                 "--context", "S2", "--idiom", "with", "--limit", "6", "--name", "served"]) == 0  # fmt: skip
    assert "SAMPLE DATA" in capsys.readouterr().out
    results = tmp_path / "build" / "results"
    for task in ("sa", "rte"):
        saved = _read(results / "served__en-0shot-generate-limit6" / f"{task}.json")
        assert saved["hyperparameters"]["mode"] == "generate" and saved["hyperparameters"]["chat"] is True
        assert (results / "served__en-0shot-generate-limit6" / task / "raw_outputs.jsonl").is_file()
        assert saved["hyperparameters"]["model"]["capabilities"]["prompt_logprobs"] is False  # what the probe found
    exam = _read(results / "served__en-0shot-limit4" / "mcq_ne.json")
    assert exam["hyperparameters"]["mode"] == "generate" and exam["hyperparameters"]["max_new_tokens"] == 256
    (idiom,) = results.glob("served__zero-shot-en-generate-limit6__*/nediom.json")
    assert _read(idiom)["hyperparameters"]["mode"] == "generate"
    # The Space finds every run where it looks by default, each marked with its mode.
    (row,) = [r for r in result_rows(results).rows if r.model == "served__en-0shot-generate-limit6"]
    assert row.kind == "zero-shot · generation" and set(row.task_scores) == {"sa", "rte"}
    assert any(
        r["model"] == "served__en-0shot-limit4" and r["mode"] == "generate" for r in load_exam_board(results).rows
    )
    assert any(r["setting"] == "zero-shot · generation" for r in load_nediom_board(results).rows)


def test_log_likelihood_on_a_server_without_prompt_logprobs_is_refused_before_the_run(
    transformers_serve, sample_build, tmp_path, capsys
) -> None:
    url, model = transformers_serve
    code = main(["llm", "nlue", "--endpoint", url, "--model", str(model), "--mode", "loglik", "--tasks", "sa",
                 "--dataset", str(sample_build.repo_dir), "--results-dir", str(tmp_path), "-q"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("nlue llm: error: ") and "cannot run the NLUE tasks in --mode loglik" in err
    assert "it can run --mode generate" in err and "vLLM" in err and "Traceback" not in err
    assert not list(tmp_path.rglob("*.json"))  # nothing was asked beyond the probe, nothing written


def test_the_probe_is_the_only_request_a_refused_mode_costs(fault_server, sample_build, tmp_path, capsys) -> None:
    fault_server.state.rules = {'"echo"': "nologprobs"}  # a completions server without prompt logprobs
    code = main(["llm", "nlue", "--endpoint", fault_server.base_url, "--model", "m", "--mode", "loglik",
                 "--tasks", "sa", "--dataset", str(sample_build.repo_dir), "--results-dir", str(tmp_path), "-q"])  # fmt: skip
    assert code == 2 and "returns no log-probabilities of the prompt" in capsys.readouterr().err
    assert len(fault_server.state.records) == 1  # one probe, then the refusal: not ten failed requests


@pytest.mark.parametrize("limit", [None, "3"])
def test_a_run_whose_every_request_failed_does_not_exit_0(
    fault_server, exam_build, tmp_path, capsys, caplog, limit
) -> None:
    fault_server.state.rules = {"Subject": "500"}  # every exam item fails; the probe (no subject line) is answered
    argv = ["llm", "mcq", "--endpoint", fault_server.base_url, "--model", "m", "--dataset", str(exam_build.repo_dir),
            "--task", "mcq_ne", "--max-retries", "0", "--results-dir", str(tmp_path), "--no-chart", "-q"]  # fmt: skip
    code = main(argv + (["--limit", limit] if limit else []))
    err = capsys.readouterr().err
    assert code == 1 and "nlue llm: error: " in err and "HTTP 500" in err  # an outage, not bad input (2) nor exit 0
    failed = [r.getMessage() for r in caplog.records if "failed after" in r.getMessage()]
    assert len(failed) == 2 and failed[1].startswith("requests failed after their tries: ")  # first one, then a count
    assert not list(tmp_path.glob("*/mcq_ne.json"))


def test_a_masked_lm_scores_by_pseudo_log_likelihood_and_is_refused_generation(sample_build, tmp_path, capsys):
    from nlue.lm.tiny import save_tiny_encoder

    encoder = save_tiny_encoder(tmp_path / "tiny-bert")
    common = ["llm", "nlue", "--model", str(encoder), "--tasks", "sa", "--dataset", str(sample_build.repo_dir),
              "--limit", "4", "--bootstrap", "0", "--results-dir", str(tmp_path / "results"), "-q"]  # fmt: skip
    assert main([*common, "--mode", "generate"]) == 2
    err = capsys.readouterr().err
    assert "(masked-lm) cannot run the NLUE tasks in --mode generate: it does not generate text" in err
    assert "it can run --mode loglik" in err
    assert main(common) == 0  # auto: log-likelihood, which a masked LM gives as a pseudo-log-likelihood
    saved = _read(tmp_path / "results" / "tiny-bert__en-0shot-limit4" / "sa.json")
    model = saved["hyperparameters"]["model"]
    assert model["backend"] == "masked-lm" and model["capabilities"]["exact_loglikelihood"] is False


@pytest.mark.parametrize("one_at_a_time", [True, False])
def test_a_server_that_answers_one_at_a_time_is_said_once(fault_server, caplog, one_at_a_time: bool) -> None:
    from nlue.lm.base import GenerationRequest
    from nlue.lm.http import OpenAICompatibleLM

    # an answer takes 0.4 s, long beside the client's own time per request (which more in flight overlaps)
    fault_server.state.delay, fault_server.state.one_at_a_time = 0.4, one_at_a_time
    lm = OpenAICompatibleLM("m", fault_server.base_url, concurrency=3, show_progress=False)
    lm.generate([GenerationRequest(prompt=f"प्रश्न {i}") for i in range(11)])
    said = [r.getMessage() for r in caplog.records if "one request at a time" in r.getMessage()]
    assert len(said) == (1 if one_at_a_time else 0)
    if one_at_a_time:
        assert "--concurrency 1 is about as fast" in said[0] and "with 3 requests in flight" in said[0]
    pace = lm.describe().settings["pace"]
    assert pace["looks_serial"] is one_at_a_time and pace["lone_latency_s"] is not None
    first = fault_server.state.records[0].started
    assert all(r.started >= first for r in fault_server.state.records[1:])  # the first requests went alone


def test_each_retry_is_logged_once_with_its_cause_and_counted(fault_server, caplog) -> None:
    from nlue.lm.base import GenerationRequest
    from nlue.lm.http import OpenAICompatibleLM

    fault_server.state.script = ["500", "429:0", "drop", "ok"]
    lm = OpenAICompatibleLM("m", fault_server.base_url, concurrency=1, backoff_base=0.01, show_progress=False)
    (answer,) = lm.generate([GenerationRequest(prompt="नमस्ते")])
    assert answer.finish_reason == "stop"
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("retry ")]
    assert [line.split("(cause: ")[1].split(")")[0] for line in logged] == ["http-5xx", "http-429", "connection"]
    retries = lm.describe().settings["retries"]
    assert retries["retries"] == 3 and retries["retries_by_cause"] == {"connection": 1, "http-429": 1, "http-5xx": 1}
