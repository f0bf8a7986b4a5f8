"""`nlue export lm-eval` through the command line a user types.

Every YAML it writes must be one lm_eval can load: a task the dataset has no config for is
left out (without ``--tasks``) or refused (named in ``--tasks``). That lm_eval then runs every
file written is `tests/test_lm_eval_export_runs.py`.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from nlue.cli import main


def _written(folder: Path) -> dict[str, dict]:
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))}


def test_export_writes_tasks_and_groups_with_a_path_lm_eval_can_resolve(
    sample_build, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = sample_build.repo_dir
    monkeypatch.chdir(repo.parent)
    code = main(["export", "lm-eval", "--out", "tasks", "--dataset", repo.name, "--tasks", "sa", "wg"])
    assert code == 0
    written = _written(repo.parent / "tasks")
    # One file per task and prompt language it has, and one group per benchmark and language.
    assert set(written) == {"nlue_sa_en", "nlue_sa_ne", "nlue_wg_en", "nlue_wg_ne", "nlue_nlue_en", "nlue_nlue_ne"}
    assert written["nlue_nlue_ne"]["task"] == ["nlue_sa_ne", "nlue_wg_ne"]
    sa = written["nlue_sa_ne"]
    assert sa["dataset_path"] == str(repo.resolve())  # absolute: lm_eval may run elsewhere
    assert sa["dataset_name"] == "sa" and sa["output_type"] == "multiple_choice"
    assert "label" not in sa["doc_to_text"]  # the prompt never shows the answer
    assert "lm_eval --model hf" in capsys.readouterr().out


def test_the_readme_first_form_exports_only_the_tasks_the_dataset_has(
    sample_build, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nlue.evals.export.lm_eval")
    assert main(["export", "lm-eval", "--out", str(tmp_path), "--dataset", str(sample_build.repo_dir)]) == 0
    written = _written(tmp_path)
    tasks = {name for name, config in written.items() if "group" not in config}
    assert not any(name.startswith("nlue_mcq") for name in written)  # the NLUE build has no exam configs
    folders = {p.name for p in sample_build.repo_dir.iterdir() if p.is_dir()}
    assert len(tasks) == 20 and {written[name]["dataset_name"] for name in tasks} <= folders
    groups = {name: config["task"] for name, config in written.items() if "group" in config}
    assert set(groups) == {"nlue_nlue_en", "nlue_nlue_ne"} and set().union(*groups.values()) == tasks
    out = capsys.readouterr().out
    assert "wrote 22 files" in out and "has no config for them: mcq_ne, mcq_ur" in out  # said, not silent
    assert "has no such config: mcq_ne, mcq_ur" in caplog.text


def test_the_exam_export_is_the_same_with_or_without_tasks(exam_build, tmp_path: Path) -> None:
    dataset = ["--dataset", str(exam_build.repo_dir), "--languages", "en", "ne", "ur"]
    assert main(["export", "lm-eval", "--out", str(tmp_path / "all"), *dataset]) == 0
    assert main(["export", "lm-eval", "--out", str(tmp_path / "named"), *dataset, "--tasks", "mcq_ne", "mcq_ur"]) == 0
    assert _written(tmp_path / "all") == _written(tmp_path / "named")  # the exams guide's form, no NLUE task
    assert set(_written(tmp_path / "all")) == {
        "nlue_mcq_ne_en", "nlue_mcq_ne_ne", "nlue_mcq_ur_en", "nlue_mcq_ur_ur", "nlue_mcq_en", "nlue_mcq_ne", "nlue_mcq_ur",
    }  # fmt: skip


def test_a_task_the_dataset_lacks_is_refused_by_name(
    sample_build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["export", "lm-eval", "--out", str(tmp_path / "t"), "--dataset", str(sample_build.repo_dir)]
    assert main([*argv, "--tasks", "sa", "mcq_ur"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nlue export: error: ") and "has no config for mcq_ur, so" in err
    assert "its configs: cola, cr, gmet, mnli" in err  # what the dataset does have
    assert not (tmp_path / "t").exists()


def test_a_dataset_with_none_of_the_tasks_is_an_error_naming_its_configs(
    nediom_build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "lm-eval", "--out", str(tmp_path / "t"), "--dataset", str(nediom_build.repo_dir)]) == 2
    assert "its configs: nediom" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_a_language_no_chosen_task_has_is_an_error_not_an_empty_export(
    sample_build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["export", "lm-eval", "--out", str(tmp_path / "t"), "--dataset", str(sample_build.repo_dir)]
    assert main([*argv, "--languages", "ur"]) == 2
    assert "has a prompt in ur; their prompt languages: en, ne" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_the_default_languages_say_which_other_prompts_the_tasks_have(
    exam_build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "lm-eval", "--out", str(tmp_path), "--dataset", str(exam_build.repo_dir)]) == 0
    out = capsys.readouterr().out
    assert "no prompt in that language: nlue_mcq_ur_ne" in out and "--languages en ne ur" in out


def test_a_hub_id_whose_configs_cannot_be_read_exports_what_was_asked_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # Offline (the conftest's HF_HUB_OFFLINE): the Hub cannot say which configs "someone/nlue" has.
    assert main(["export", "lm-eval", "--out", str(tmp_path), "--dataset", "someone/nlue", "--tasks", "sa"]) == 0
    assert "could not read the configs of someone/nlue" in caplog.text
    assert "not checked" in capsys.readouterr().out
    assert set(_written(tmp_path)) == {"nlue_sa_en", "nlue_sa_ne", "nlue_nlue_en", "nlue_nlue_ne"}


def test_files_an_earlier_export_left_in_the_folder_are_warned_about(
    sample_build, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    argv = ["export", "lm-eval", "--out", str(tmp_path), "--dataset", str(sample_build.repo_dir), "--tasks"]
    assert main([*argv, "sa", "wg"]) == 0
    assert main([*argv, "sa"]) == 0  # lm_eval --include_path would still find nlue_wg_*: say so
    assert "also holds nlue_wg_en.yaml, nlue_wg_ne.yaml, not written by this export" in caplog.text


def test_a_task_that_is_not_scored_by_log_likelihood_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "lm-eval", "--out", str(tmp_path / "t"), "--tasks", "gmet"]) == 2
    assert "'gmet' is not a task this command takes" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()
