"""`nlue export lm-eval` through the command line a user types."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nlue.cli import main


def test_export_writes_tasks_and_groups_with_a_path_lm_eval_can_resolve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "built").mkdir()
    monkeypatch.chdir(tmp_path)
    code = main(["export", "lm-eval", "--out", "tasks", "--dataset", "built", "--tasks", "sa", "mcq_ur"])
    assert code == 0
    written = sorted(p.name for p in (tmp_path / "tasks").iterdir())
    # One file per task and prompt language it has, and one group per benchmark and language.
    assert "nlue_sa_en.yaml" in written and "nlue_sa_ne.yaml" in written and "nlue_nlue_ne.yaml" in written
    assert any(name.startswith("nlue_mcq_ur_") for name in written)
    sa = yaml.safe_load((tmp_path / "tasks" / "nlue_sa_ne.yaml").read_text(encoding="utf-8"))
    assert sa["dataset_path"] == str((tmp_path / "built").resolve())  # absolute: lm_eval may run elsewhere
    assert sa["dataset_name"] == "sa" and sa["output_type"] == "multiple_choice"
    assert "label" not in sa["doc_to_text"]  # the prompt never shows the answer
    assert "lm_eval --model hf" in capsys.readouterr().out


def test_a_task_that_is_not_scored_by_log_likelihood_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "lm-eval", "--out", str(tmp_path / "t"), "--tasks", "gmet"]) == 2
    assert "invalid choice: 'gmet'" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()
