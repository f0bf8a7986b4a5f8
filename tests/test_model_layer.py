"""The model layer: one factory, one declaration of the model options, typed descriptions, declared capabilities."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import textwrap
from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.lm import backends
from nlue.lm.backends import BACKENDS, LANGUAGE_MODEL, WORD_PREDICTOR, Backend, choose_backend
from nlue.lm.description import Capabilities, ModelDescription
from nlue.lm.factory import load_model, require
from nlue.lm.spec import ModelSpec


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from nlue.lm.tiny import save_tiny_causal_lm, save_tiny_encoder

    root = tmp_path_factory.mktemp("layer")
    return {"causal": save_tiny_causal_lm(root / "gpt2", "gpt2"), "masked": save_tiny_encoder(root / "bert")}


def test_the_backend_is_chosen_from_the_model_and_the_endpoint(folders: dict[str, Path]) -> None:
    assert (
        choose_backend(ModelSpec("served", endpoint="http://127.0.0.1:1/v1"), LANGUAGE_MODEL).name
        == "openai-compatible"
    )
    assert choose_backend(ModelSpec(str(folders["causal"])), LANGUAGE_MODEL).name == "transformers"
    assert choose_backend(ModelSpec(str(folders["masked"])), LANGUAGE_MODEL).name == "masked-lm"
    assert choose_backend(ModelSpec("baseline:bigram"), WORD_PREDICTOR).name == "ngram"
    assert choose_backend(ModelSpec("baseline:tiny-mlm"), WORD_PREDICTOR).name == "tiny-mlm"
    assert choose_backend(ModelSpec(str(folders["masked"])), WORD_PREDICTOR).name == "fill-mask"
    with pytest.raises(
        NlueError, match="unknown baseline 'baseline:nope' here; baselines this command takes: baseline:"
    ):
        choose_backend(ModelSpec("baseline:nope"), WORD_PREDICTOR)
    with pytest.raises(
        NlueError, match="--backend 'fill-mask' cannot serve here; choose one of: auto, openai-compatible"
    ):
        choose_backend(ModelSpec("x", backend="fill-mask"), LANGUAGE_MODEL)
    with pytest.raises(NlueError, match="--concurrency must be at least 1"):
        ModelSpec("x", concurrency=0)


def test_descriptions_are_typed_and_say_what_the_model_can_do(folders: dict[str, Path]) -> None:
    causal = load_model(ModelSpec(str(folders["causal"]), show_progress=False)).describe()
    masked = load_model(ModelSpec(str(folders["masked"]), show_progress=False)).describe()
    assert isinstance(causal, ModelDescription) and causal.capabilities.modes() == ["generate", "loglik"]
    assert masked.capabilities.modes() == ["loglik"] and not masked.capabilities.exact_loglikelihood
    saved = json.loads(json.dumps(masked.to_dict()))
    assert saved["backend"] == "masked-lm" and saved["capabilities"]["generate"] is False
    served = Capabilities(generate=True, loglikelihood=True, chat=True, prompt_logprobs=False)
    assert served.modes() == ["generate"] and "no log-probabilities of the prompt" in served.missing_for("loglik")


def test_a_mode_the_model_cannot_run_is_refused_with_what_would_work(folders: dict[str, Path]) -> None:
    masked = load_model(ModelSpec(str(folders["masked"]), show_progress=False))
    with pytest.raises(
        NlueError, match=r"cannot run the test in --mode generate: it does not generate text; it can run"
    ):
        require(masked, "generate", "the test")
    assert require(masked, "loglik").loglikelihood


def _model_options(parser: argparse.ArgumentParser) -> dict[str, str]:
    seen = {}
    for action in parser._actions:
        for option in action.option_strings:
            if option in ("--model", "--endpoint", "--backend", "--api-key-env", "--concurrency", "--timeout",
                          "--max-retries", "--device", "--dtype", "--journal", "--cache-dir", "--no-cache"):  # fmt: skip
                seen[option] = action.help.split("(")[0]
    return seen


def _sub(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def test_every_command_that_calls_a_language_model_declares_the_same_options_once() -> None:
    from nlue.evals.llm import cli as llm_cli
    from nlue.idioms import cli as idioms_cli
    from nlue.translate import cli as translate_cli
    from nlue.translate import review_cli

    parsers = {
        "llm mcq": _sub(llm_cli.build_parser(), "mcq"),
        "llm nlue": _sub(llm_cli.build_parser(), "nlue"),
        "idioms eval": _sub(idioms_cli.build_parser(), "eval"),
        "translate": translate_cli.build_parser(),
        "translate backtranslate": _sub(review_cli.build_parser(), "backtranslate"),
    }
    found = {name: _model_options(parser) for name, parser in parsers.items()}
    endpoint_help = {options["--endpoint"] for options in found.values()}
    assert len(endpoint_help) == 1 and all(
        {"--endpoint", "--backend", "--max-retries"} <= set(o) for o in found.values()
    )
    assert {options["--api-key-env"] for options in found.values()} == {found["llm mcq"]["--api-key-env"]}


def test_a_new_backend_is_one_module_and_its_registration(
    sample_build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backend nlue has never seen, added as a module and one line, runs a benchmark through the CLI."""
    from nlue.cli import main

    (tmp_path / "echo_backend.py").write_text(textwrap.dedent('''
        from nlue.lm.base import Generation
        from nlue.lm.description import Capabilities, ModelDescription

        class Echo:
            name = "echo:positive"

            def describe(self):
                return ModelDescription("echo", self.name, "echo", Capabilities(generate=True, chat=True))

            def generate(self, requests):
                return [Generation("positive", None, 1, "stop") for _ in requests]

            def loglikelihood(self, requests):
                raise AssertionError("not asked")

        def from_spec(spec, **context) -> Echo:
            return Echo()
    '''), encoding="utf-8")  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(
        BACKENDS, "echo", Backend("echo", LANGUAGE_MODEL, "echo_backend:from_spec", "a test", lambda s: False)
    )
    results = tmp_path / "results"
    assert main(["llm", "nlue", "--model", "echo", "--backend", "echo", "--tasks", "sa", "--dataset",
                 str(sample_build.repo_dir), "--results-dir", str(results), "--bootstrap", "0", "-q"]) == 0  # fmt: skip
    saved = json.loads((results / "echo__en-0shot-generate" / "sa.json").read_text(encoding="utf-8"))
    assert saved["hyperparameters"]["model"]["backend"] == "echo" and saved["metrics"]["invalid_rate"] == 0.0
    assert "NLUE tasks by generation" in capsys.readouterr().out  # auto chose generation: the model cannot score
    sys.modules.pop("echo_backend", None)


def test_a_prompt_cut_for_every_item_is_one_warning_and_a_count(folders: dict[str, Path], caplog) -> None:
    from nlue.lm.base import GenerationRequest
    from nlue.lm.local import LocalCausalLM

    lm = LocalCausalLM(folders["causal"], show_progress=False, batch_size=8)
    long = "नेपाल " * 400  # well past the tiny model's window of 256 tokens
    caplog.set_level(logging.WARNING)
    lm.generate([GenerationRequest(prompt=f"{long}{i}", max_new_tokens=2) for i in range(12)])
    cut = [r.getMessage() for r in caplog.records if "cut" in r.getMessage()]
    assert (
        len(cut) == 2
        and cut[0].startswith("prompt of ")
        and cut[1] == "prompts cut to fit the model's window: 12 in all"
    )


def test_the_factory_is_light_to_import() -> None:
    import subprocess

    code = "import sys, nlue.lm.factory, nlue.lm.options; print('torch' in sys.modules, 'openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    assert backends.model_family.__wrapped__("no/such/folder") is None  # an unreadable config decides nothing


@pytest.mark.parametrize("command", ["evaluate", "train", "baseline", "gmet"])
def test_every_evaluator_says_sample_data_on_the_sample(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nlue.cli import main
    from nlue.lm.tiny import save_tiny_classifier, save_tiny_encoder

    monkeypatch.chdir(tmp_path)
    argv = {
        "evaluate": lambda: ["evaluate", "--model", str(save_tiny_classifier(tmp_path / "clf")), "--task", "sa",
                             "--bootstrap", "0"],
        "train": lambda: ["train", "--model", str(save_tiny_encoder(tmp_path / "enc")), "--task", "sa",
                          "--output_dir", str(tmp_path / "run"), "--max_steps", "1", "--bootstrap_resamples", "0",
                          "--disable_tqdm", "true"],
        "baseline": lambda: ["baseline", "--tasks", "sa", "--bootstrap", "0"],
        "gmet": lambda: ["gmet", "--model", "baseline:unigram", "--limit", "10", "--bootstrap", "0"],
    }[command]()  # fmt: skip
    assert main([*argv, "-q"]) == 0
    assert "SAMPLE" in capsys.readouterr().out
