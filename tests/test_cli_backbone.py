"""One command-line backbone: the same exit codes and messages, and both option spellings, everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.cli_support import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_SYSTEM, run_command
from nlue.errors import NlueError


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
    ],
)
def test_every_sub_command_reports_bad_input_the_same_way(
    argv: list[str], command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    assert err.startswith(f"nlue {command}: error: ") and "Traceback" not in err


def test_failures_map_to_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    def raising(exc: BaseException):
        def action() -> int:
            raise exc

        return action

    assert run_command("x", raising(NlueError("bad row"))) == EXIT_INPUT
    assert run_command("x", raising(ValueError("bad value"))) == EXIT_INPUT
    assert run_command("x", raising(OSError("disk full"))) == EXIT_SYSTEM
    assert run_command("x", raising(KeyboardInterrupt())) == EXIT_INTERRUPTED
    assert run_command("x", raising(ModuleNotFoundError("no", name="gradio"))) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "nlue x: error: bad row" in err and "nlue x: error: disk full" in err
    assert "gradio is not installed; pip install 'nlue[space]'" in err and "nlue x: interrupted" in err


@pytest.mark.parametrize("spelling", ["--bootstrap-resamples", "--bootstrap_resamples", "--bootstrap"])
@pytest.mark.parametrize("results", ["--results-dir", "--results_dir"])
def test_gmet_takes_both_spellings_and_writes_results_beside_out(
    spelling: str, results: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs" / "gmet" / "bigram"
    assert main(["gmet", "--model", "baseline:bigram", "--out", str(out), spelling, "0", "--quiet"]) == 0
    saved = json.loads((tmp_path / "runs" / "gmet" / "results" / "baseline__bigram" / "gmet.json").read_text())
    assert "accuracy_ci_low" not in saved["metrics"]  # 0 resamples reached the scorer
    assert not (tmp_path / "results").exists()  # nothing in the current folder
    other = tmp_path / "elsewhere"
    assert main(["gmet", "--model", "baseline:bigram", "--out", str(out), results, str(other), "--quiet"]) == 0
    assert (other / "baseline__bigram" / "gmet.json").is_file()


def test_argparse_sub_commands_take_both_spellings(sample_build, tmp_path: Path, capsys) -> None:
    for spelling in ("--max-shard-mb", "--max_shard_mb"):
        assert main(["build", "--out", str(tmp_path / spelling), "--configs", "sa", spelling, "64"]) == 0
    assert main(["tasks", "--gmet_categories"]) == 0
    assert "Family" in capsys.readouterr().out
