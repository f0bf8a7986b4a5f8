"""The `nlue` command line: help, tasks, push dry run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.registry.tasks import TASK_NAMES, TASKS


def test_help_reads_well() -> None:
    done = subprocess.run([sys.executable, "-m", "nlue.cli", "--help"], capture_output=True, text=True, check=True)
    for command in ("tasks", "build", "push", "quickstart"):
        assert command in done.stdout
    assert "examples:" in done.stdout


def test_tasks_prints_the_registry(capsys) -> None:
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    for name in TASK_NAMES:
        assert f"\n{name} " in out
    assert "entailment, neutral, contradiction" in out


def test_tasks_json_and_categories(capsys) -> None:
    assert main(["tasks", "--json"]) == 0
    registry = json.loads(capsys.readouterr().out)
    assert list(registry) == list(TASKS)  # every benchmark's tasks, NLUE's first in the paper's order
    assert list(registry)[: len(TASK_NAMES)] == list(TASK_NAMES)
    assert {registry[name]["benchmark"] for name in TASK_NAMES} == {"nlue"}
    assert registry["mnli"]["label_names"] == ["entailment", "neutral", "contradiction"]
    assert main(["tasks", "--gmet-categories"]) == 0
    listing = capsys.readouterr().out
    assert "Nepal Specific (3):" in listing and " 1  Family" in listing and "75  Festivals of Nepal" in listing


def test_push_dry_run_lists_exact_files_and_card(sample_build, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")

    def no_network(*args, **kwargs):
        raise AssertionError("a dry run must not reach the Hub")

    monkeypatch.setattr("huggingface_hub.HfApi.create_repo", no_network)
    monkeypatch.setattr("huggingface_hub.HfApi.upload_folder", no_network)
    repo = sample_build.repo_dir
    assert main(["push", str(repo), "--repo-id", "someone/nlue", "--dry-run"]) == 0
    out = capsys.readouterr().out
    # Every file but the build's hidden marker (.nlue-build.json: what tells a later build this folder is one).
    files = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file() and p.name[0] != ".")
    plan = out.split("\n\n", 1)[0]  # the file list; what the Hub-read files say comes after it
    listed = [line.split()[0] for line in plan.splitlines() if line.startswith("  ")]
    assert listed == files and (repo / ".nlue-build.json").is_file()
    assert "dataset repo someone/nlue" in out and "card header (README.md):" in out
    assert "config_name: qnli" in out and "nothing was uploaded" in out
    assert "hf_secret_token_value" not in out


def test_push_refuses_bad_repo_id_and_missing_card(tmp_path, capsys) -> None:
    (tmp_path / "repo").mkdir()
    assert main(["push", str(tmp_path / "repo"), "--repo-id", "x/y", "--dry-run"]) == 2
    assert "has no README.md card" in capsys.readouterr().err
    (tmp_path / "repo" / "README.md").write_text("---\n---\n", encoding="utf-8")
    assert main(["push", str(tmp_path / "repo"), "--repo-id", "nlue", "--dry-run"]) == 2
    assert "should look like 'owner/name'" in capsys.readouterr().err


def test_build_argument_errors(tmp_path, capsys) -> None:
    assert main(["build", "--task", "sa", "--out", str(tmp_path)]) == 2
    assert "--task needs at least one of --train" in capsys.readouterr().err
    assert main(["build", "--configs", "sa,squad", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "argument --configs: 'squad'" in err and "is not a config this command takes; valid: sa, cola" in err


def test_publish_script_dry_run(tmp_path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "dataset_scripts" / "publish_nlue.py"
    spec = importlib.util.spec_from_file_location("publish_nlue", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code = module.main(["--out", str(tmp_path / "b"), "--repo-id", "org/nlue", "--dry-run"])
    assert code == 0
    out = capsys.readouterr().out
    assert "dataset repo org/nlue" in out and "gmet/test-00000-of-00001.parquet" in out
    card = (tmp_path / "b" / "nlue" / "README.md").read_text(encoding="utf-8")
    assert 'load_dataset("org/nlue", "sa")' in card


def test_push_dry_run_of_a_metric_space(capsys) -> None:
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "metrics" / "gmet_combined"
    assert main(["push", str(folder), "--repo-id", "org/gmet_combined", "--repo-type", "space", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "space repo org/gmet_combined" in out and "gmet_combined.py" in out and "sdk: gradio" in out


@pytest.mark.parametrize(
    "command", ["tasks", "build", "push", "train", "search", "evaluate", "gmet", "space", "quickstart"]
)
def test_every_command_has_working_help(command: str, capsys) -> None:
    try:
        code = main([command, "--help"])
    except SystemExit as exit_info:  # argparse and HfArgumentParser exit after printing help
        code = exit_info.code
    assert code == 0
    out = capsys.readouterr().out
    assert "usage:" in out and "--" in out


def test_quickstart_runs_end_to_end_on_the_sample(tmp_path: Path, capsys) -> None:
    # Command 1 of the README: build the NLUE sample, load every config back, score the baselines.
    # (Other benchmarks registered beside NLUE build into repos of their own and must not be asked for here.)
    assert main(["quickstart", "--out", str(tmp_path / "build"), "--no-train"]) == 0
    out = capsys.readouterr().out
    loaded = [line for line in out.splitlines() if line.strip().startswith("load_dataset(")]
    assert [line.split("'")[3] for line in loaded] == list(TASK_NAMES)
    assert "Done." in out and (tmp_path / "build" / "nlue" / "README.md").is_file()
