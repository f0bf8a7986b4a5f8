"""One command-line backbone: the same exit codes and messages, and both option spellings, everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.cli_support import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_SYSTEM,
    TRACEBACK_VARIABLE,
    run_command,
)
from nlue.errors import NlueError, ServiceError


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["build", "--source", "no/such/folder", "--out", "{tmp}/b"], "build"),
        (["push", "{tmp}/missing", "--repo-id", "me/x", "--dry-run"], "push"),
        (["evaluate", "--model", "{tmp}/m", "--task", "squad", "--results-dir", "{tmp}/r"], "evaluate"),
        (["gmet", "--model", "baseline:nope", "--out", "{tmp}/g"], "gmet"),
        (["train", "--model", "{tmp}/m", "--task", "squad", "--output_dir", "{tmp}/t"], "train"),
        (["search", "--model", "{tmp}/m", "--task", "gmet", "--output_dir", "{tmp}/s"], "search"),
        (["baseline", "--tasks", "squad", "--results-dir", "{tmp}/r"], "baseline"),
        (["tasks", "--no-such-option"], "tasks"),  # an unknown option is the sub-command's usage error
        (["space", "--port", "0"], "space"),
        (["quickstart", "--out", "{tmp}/a-file", "--no-train"], "quickstart"),
        # the logging flags go before or after the sub-command's name, whatever its parser
        (["-v", "train", "--model", "{tmp}/m", "--task", "squad", "--output_dir", "{tmp}/t"], "train"),
        (["search", "-q", "--model", "{tmp}/m", "--task", "squad", "--output_dir", "{tmp}/s"], "search"),
        (["-q", "build", "-v", "--configs", "squad", "--out", "{tmp}/b"], "build"),
        (["-v", "gmet", "-q", "--model", "baseline:nope", "--out", "{tmp}/g"], "gmet"),
    ],
)
def test_every_sub_command_reports_bad_input_the_same_way(
    argv: list[str], command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    # One shape: `nlue <command>: error: <what>` (after argparse's usage line for a usage error).
    assert err.startswith((f"nlue {command}: error: ", f"usage: nlue {command} ")), err
    assert f"\nnlue {command}: error: " in f"\n{err}" and "Traceback" not in err


def test_failures_map_to_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    def raising(exc: BaseException):
        def action() -> int:
            raise exc

        return action

    assert run_command("x", raising(NlueError("bad row"))) == EXIT_INPUT
    assert run_command("x", raising(OSError("disk full"))) == EXIT_SYSTEM
    assert run_command("x", raising(ServiceError("the server stopped answering"))) == EXIT_SYSTEM
    assert run_command("x", raising(KeyboardInterrupt())) == EXIT_INTERRUPTED
    assert run_command("x", raising(ModuleNotFoundError("no", name="gradio"))) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "nlue x: error: bad row" in err and "nlue x: error: disk full" in err
    assert "nlue x: error: the server stopped answering" in err
    assert "gradio is not installed; pip install 'nlue[space]'" in err and "nlue x: interrupted" in err


def _library_failure() -> int:
    """A library's own ValueError, as transformers' StopStringCriteria raised on a Devanagari-only vocabulary."""
    "क".index("a")  # ValueError: substring not found, raised inside a builtin we did not write
    return 0


@pytest.mark.parametrize(
    "exc", [ValueError("substring not found"), KeyError("logits"), TypeError("bad"), ModuleNotFoundError("x", name="x")]
)
def test_a_library_exception_or_our_bug_is_an_internal_error_not_bad_input(
    exc: BaseException, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)

    def action() -> int:
        raise exc

    assert run_command("llm", action) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.startswith("nlue llm: internal error: ") and "error: " not in err.split("internal error")[0]
    assert type(exc).__name__ in err and "raised in " in err and f"{TRACEBACK_VARIABLE}=1" in err
    assert "Traceback" not in err and "not a problem with your input" in err


def test_an_internal_error_says_where_it_was_raised_and_shows_the_traceback_on_request(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    assert run_command("llm", _library_failure) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "ValueError: substring not found" in err and "test_cli_backbone.py" in err and "(_library_failure)" in err
    monkeypatch.setenv(TRACEBACK_VARIABLE, "1")
    assert run_command("llm", _library_failure) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "internal error" in err


@pytest.mark.parametrize("spelling", ["--bootstrap-resamples", "--bootstrap_resamples", "--bootstrap"])
@pytest.mark.parametrize("results", ["--results-dir", "--results_dir"])
def test_gmet_takes_both_spellings_and_writes_results_where_the_space_reads(
    spelling: str, results: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NLUE_RESULTS_DIR", raising=False)
    out = tmp_path / "runs" / "gmet" / "bigram"
    assert main(["gmet", "--model", "baseline:bigram", "--out", str(out), spelling, "0", "--quiet"]) == 0
    saved = json.loads((tmp_path / "build" / "results" / "baseline__bigram" / "gmet.json").read_text())
    assert "accuracy_ci_low" not in saved["metrics"]  # 0 resamples reached the scorer
    assert not (tmp_path / "runs" / "gmet" / "results").exists()  # one default folder for every command
    monkeypatch.setenv("NLUE_RESULTS_DIR", str(tmp_path / "mine"))  # which the environment can move
    assert main(["gmet", "--model", "baseline:bigram", "--out", str(out), spelling, "0", "--quiet"]) == 0
    assert (tmp_path / "mine" / "baseline__bigram" / "gmet.json").is_file()
    other = tmp_path / "elsewhere"
    assert main(["gmet", "--model", "baseline:bigram", "--out", str(out), results, str(other), "--quiet"]) == 0
    assert (other / "baseline__bigram" / "gmet.json").is_file()


def test_argparse_sub_commands_take_both_spellings(sample_build, tmp_path: Path, capsys) -> None:
    for spelling in ("--max-shard-mb", "--max_shard_mb"):
        assert main(["build", "--out", str(tmp_path / spelling), "--configs", "sa", spelling, "64"]) == 0
    assert main(["tasks", "--gmet_categories"]) == 0
    assert "Family" in capsys.readouterr().out


def test_python_m_nlue_space_runs_on_the_same_backbone(capsys: pytest.CaptureFixture[str]) -> None:
    from nlue.space.serve import main as space_main

    assert space_main(["--port=70000"]) == EXIT_INPUT
    assert capsys.readouterr().err.startswith("nlue space: error: --port must be a TCP port")
    assert space_main(["--results_dir", "x", "--no-such-option"]) == EXIT_INPUT


@pytest.mark.parametrize("spelling", ["--bootstrap-resamples", "--bootstrap_resamples", "--bootstrap"])
def test_bootstrap_resamples_has_one_name_in_every_parser(spelling: str) -> None:
    from nlue.cli import build_parser
    from nlue.cli_support import accept_both_spellings
    from nlue.gmet.cli import build_parser as gmet_parser

    evaluate = accept_both_spellings(build_parser()).parse_args(["evaluate", "--model", "m", spelling, "7"])
    assert evaluate.bootstrap_resamples == 7
    gmet = accept_both_spellings(gmet_parser()).parse_args(["--model", "m", spelling, "7"])
    assert gmet.bootstrap_resamples == 7
    pytest.importorskip("transformers")
    from nlue.training.args import DataArguments, ModelArguments, RecipeArguments, parse

    _, _, recipe = parse((ModelArguments, DataArguments, RecipeArguments), ["--model", "m", "--task", "sa",
                                                                             spelling, "7"], "nlue train")  # fmt: skip
    assert recipe.bootstrap_resamples == 7


@pytest.mark.parametrize("spelling", ["--results-name", "--results_name", "--name"])
def test_the_results_name_option_agrees_across_commands(spelling: str) -> None:
    from nlue.cli import build_parser
    from nlue.cli_support import accept_both_spellings
    from nlue.gmet.cli import build_parser as gmet_parser

    assert accept_both_spellings(build_parser()).parse_args(["evaluate", "--model", "m", spelling, "x"]).name == "x"
    assert accept_both_spellings(gmet_parser()).parse_args(["--model", "m", spelling, "x"]).name == "x"
    space = accept_both_spellings(build_parser()).parse_args(["space", "--results_dir", "r"])
    assert [str(p) for p in space.results] == [
        "r"
    ]  # nlue space's folder option has the others' name (--results still works)


def test_trainer_scripts_exit_like_nlue_train(tmp_path: Path) -> None:
    import subprocess
    import sys

    pytest.importorskip("transformers")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "trainers" / "train.py"), "--model", "m", "--task", "squad", "-v"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == EXIT_INPUT, done.stderr[-2000:]
    assert "nlue train: error: unknown NLUE task 'squad'" in done.stderr and "Traceback" not in done.stderr
