"""`nlue llm`: the exam and NLUE runs from the command line, on tiny local models and on a loopback server.

* ``nlue llm mcq`` on the sample exams with a tiny Llama-style chat model, both prompt
  languages: results, raw JSONL, tables, chart and the gap; run again, it answers from the
  answer cache and asks the model nothing;
* ``--endpoint`` against the scripted OpenAI-compatible server of :mod:`tests.lm_fault_server`:
  a failed request is an ``api_error`` item, the key is sent and never shown or stored;
* ``--show-prompt`` prints prompts without loading a model;
* bad input (unknown task, 2 shots, a missing dataset) exits 2 with a message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.evals.mcq.run import load_exam
from nlue.registry.tasks import get_task
from tests.answer_store import cache_text, count_answers
from tests.lm_fault_server import FaultServer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny_chat_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from nlue.lm.tiny import save_tiny_causal_lm

    return save_tiny_causal_lm(tmp_path_factory.mktemp("lm") / "tiny-llama", "llama", seed=1)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault_server = FaultServer().start()
    yield fault_server
    fault_server.stop()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_mcq_runs_a_tiny_local_model_in_both_languages_and_resumes(
    exam_build, tiny_chat_lm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], answer_cache: Path
) -> None:
    results = tmp_path / "results"
    argv = ["llm", "mcq", "--model", str(tiny_chat_lm), "--dataset", str(exam_build.repo_dir), "--task", "mcq_ne",
            "--prompt-language", "both", "--shots", "1", "--limit", "6", "--max-new-tokens", "8",
            "--bootstrap-resamples", "50", "--results-dir", str(results), "--device", "cpu", "-q"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "accuracy over all items (invalid = wrong; the primary)" in printed and "native - English prompt" in printed
    for name in ("tiny-llama__en-1shot-limit6", "tiny-llama__ne-1shot-limit6"):
        saved = json.loads((results / name / "mcq_ne.json").read_text(encoding="utf-8"))
        assert saved["kind"] == "few-shot" and saved["hyperparameters"]["chat"] is True
        assert saved["hyperparameters"]["max_new_tokens"] == 8 and saved["model"].startswith("hf:")
        assert {"accuracy_all_items", "accuracy_parseable", "invalid_rate", "accuracy_all_items_ci_low"} <= set(
            saved["metrics"]
        )
        folder = results / name / "mcq_ne"
        rows = _lines(folder / "raw_outputs.jsonl")
        assert len(rows) == 6 and all(r["verdict"] in ("correct", "wrong", "invalid") for r in rows)
        assert all(isinstance(r["output"], str) and r["gold_key"] in "ABCD" for r in rows)
        assert (folder / "accuracy_by_domain.png").read_bytes()[:4] == b"\x89PNG"
        assert {"tables.md", "by_domain.csv", "by_subdomain.csv", "by_level.csv"} <= {p.name for p in folder.iterdir()}
    gap = json.loads((results / "tiny-llama__ne-1shot-limit6" / "mcq_ne.json").read_text(encoding="utf-8"))
    assert gap["details"]["prompt_language_gap"]["n_paired"] == 6
    assert (results / "tiny-llama__ne-1shot-limit6" / "mcq_ne" / "prompt_gap.md").is_file()
    assert count_answers(answer_cache) == 12  # 6 items x 2 prompt languages
    assert f"answers: 12 asked, 0 from the cache ({answer_cache})" in printed

    first = _lines(results / "tiny-llama__en-1shot-limit6" / "mcq_ne" / "raw_outputs.jsonl")
    import nlue.lm.local as local

    calls: list[int] = []
    original = local.LocalCausalLM._generate_batch

    def counting(self, prompts, stop, cap):
        calls.append(len(prompts))
        return original(self, prompts, stop, cap)

    local.LocalCausalLM._generate_batch = counting
    try:
        assert main(argv) == 0
    finally:
        local.LocalCausalLM._generate_batch = original
    assert calls == []  # every answer came from the cache
    assert f"answers: 0 asked, 12 from the cache ({answer_cache})" in capsys.readouterr().out
    again = _lines(results / "tiny-llama__en-1shot-limit6" / "mcq_ne" / "raw_outputs.jsonl")
    assert [r["output"] for r in again] == [r["output"] for r in first]
    assert count_answers(answer_cache) == 12


def test_mcq_against_an_openai_compatible_server(
    exam_build,
    server: FaultServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    answer_cache: Path,
) -> None:
    secret = "sk-nlue-cli-test-9f8e7d6c5b4a"
    monkeypatch.setenv("NLUE_CLI_TEST_KEY", secret)
    dataset = str(exam_build.repo_dir)
    items, _ = load_exam(dataset, get_task("mcq_ur"), 0, 5)
    question = items[2]["question"]
    server.state.rules = {json.dumps(question, ensure_ascii=False)[1:-1]: "400", json.dumps(question)[1:-1]: "400"}
    results = tmp_path / "results"
    code = main(["llm", "mcq", "--endpoint", server.base_url, "--model", "served-tiny", "--api-key-env",
                 "NLUE_CLI_TEST_KEY", "--dataset", dataset, "--task", "mcq_ur", "--prompt-language", "native",
                 "--limit", "5", "--bootstrap", "50", "--results-dir", str(results), "--no-chart", "-q"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    folder = results / "served-tiny__ur-0shot-limit5" / "mcq_ur"
    rows = _lines(folder / "raw_outputs.jsonl")
    assert [r["category"] for r in rows] == ["no_key_line", "no_key_line", "api_error", "no_key_line", "no_key_line"]
    assert "HTTP 400" in rows[2]["error"]
    asked = server.state.asked("/v1/chat/completions")
    assert {body["model"] for body in asked} == {"served-tiny"}
    assert all(body["messages"][0]["role"] == "system" and body["temperature"] == 0 for body in asked)
    assert all(record.authorization == f"Bearer {secret}" for record in server.state.records)
    saved = (results / "served-tiny__ur-0shot-limit5" / "mcq_ur.json").read_text(encoding="utf-8")
    assert json.loads(saved)["hyperparameters"]["backend"] == "openai-compatible"
    journal = cache_text(answer_cache)
    assert count_answers(answer_cache) == 4  # the failed request is not kept: a re-run asks it again
    shown = [out, err, saved, journal, (folder / "raw_outputs.jsonl").read_text(encoding="utf-8")]
    assert all(secret not in text for text in shown)


def test_show_prompt_prints_without_loading_a_model(exam_build, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing_model = tmp_path / "no-such-model"
    base = ["llm", "mcq", "--model", str(missing_model), "--dataset", str(exam_build.repo_dir), "--task", "mcq_ne",
            "--results-dir", str(tmp_path / "results"), "--show-prompt"]  # fmt: skip
    assert main([*base, "--chat", "--shots", "3", "--prompt-language", "both"]) == 0
    out = capsys.readouterr().out
    assert out.count("=====") == 4 and "· en prompt · 3-shot · chat messages" in out and "· ne prompt ·" in out
    assert out.count("[assistant]\nAnswer key: ") == 6 and "[system]\nYou are an expert assistant" in out
    assert main([*base, "--mode", "loglik", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("continuations scored: ' A', ' B', ' C', ' D'") == 2 and "plain text" in out
    assert not (tmp_path / "results").exists()  # no run, no results


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--task", "mcq_xx"], "argument --task: invalid choice: 'mcq_xx'"),
        (["--shots", "2"], "argument --shots: invalid choice: 2"),
        (["--dataset", "{tmp}/nowhere"], "cannot load config 'mcq_ne' from"),
        (["--prompt-language", "ur"], "argument --prompt-language: invalid choice"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    exam_build, tmp_path: Path, capsys: pytest.CaptureFixture, change: list[str], message: str
) -> None:
    options = {"--task": "mcq_ne", "--dataset": str(exam_build.repo_dir), "--shots": "0", "--prompt-language": "en"}
    options.update({change[0]: change[1].format(tmp=tmp_path)})
    argv = ["llm", "mcq", "--model", str(tmp_path / "m"), "--show-prompt", "--chat"]
    argv += [token for pair in options.items() for token in pair]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_nlue_tasks_by_log_likelihood_from_the_command_line(
    sample_build, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from nlue.lm.tiny import save_tiny_causal_lm

    model = save_tiny_causal_lm(tmp_path / "tiny-gpt2", "gpt2", seed=3)
    results = tmp_path / "results"
    argv = ["llm", "nlue", "--model", str(model), "--dataset", str(sample_build.repo_dir), "--tasks", "sa", "rte",
            "--prompt-language", "native", "--shots", "1", "--limit", "8", "--bootstrap", "50",
            "--results-dir", str(results), "-q"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("NLUE tasks by log-likelihood (SAMPLE DATA")  # a local model: loglik, the default
    assert "\nsa: macro-F1 " in out and "\nrte: macro-F1 " in out and "acc_norm by characters" in out
    saved = json.loads((results / "tiny-gpt2__ne-1shot-limit8" / "sa.json").read_text(encoding="utf-8"))
    assert saved["kind"] == "few-shot" and saved["dataset"]["items"] == 8
    assert main([*argv[:4], "--tasks", "gmet"]) == 2  # GMET has no label words for a causal LM
    assert "'gmet' is not a task this command takes" in capsys.readouterr().err


def test_llm_is_a_listed_sub_command_with_help(capsys: pytest.CaptureFixture) -> None:
    assert main(["--help"]) == 0
    assert "llm" in capsys.readouterr().out
    assert main(["llm", "--help"]) == 0
    assert "mcq" in capsys.readouterr().out
    for suite in ("mcq", "nlue"):
        assert main(["llm", suite, "--help"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"usage: nlue llm {suite}") and "--results-dir" in out and "--endpoint" in out
    assert main(["llm", "mcq", "--results_dir", "x"]) == 2  # both spellings parse; --model etc. are still missing
    assert "the following arguments are required: --model" in capsys.readouterr().err
