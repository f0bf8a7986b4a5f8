"""lm-evaluation-harness runs every YAML `nlue export lm-eval` writes, as a user would export them.

The exams guide's first form (docs/guides/exams.md) (``nlue export lm-eval --out DIR --dataset build/nlue``) once wrote the
exam tasks against the NLUE build, which has no exam configs, and lm_eval failed on them while
the tests passed: they ran only tasks picked by hand. Here the export is the command line's, and
lm-eval's ``hf`` backend runs all of it on a tiny model (two items a task): the groups, which
must list every task written and only those, in one call; when that call fails, each task
again alone, so that the failure names its task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from nlue.cli import main

pytest.importorskip("torch")
pytest.importorskip("transformers")
lm_eval = pytest.importorskip("lm_eval")

EXPORTS = {  # the exams guide's two forms (docs/guides/exams.md), the second without --tasks (the same files: tests/test_export_cli.py)
    "nlue": ("sample_build", []),
    "exams": ("exam_build", ["--languages", "en", "ne", "ur"]),
}


@pytest.fixture(scope="module")
def harness_model(tmp_path_factory: pytest.TempPathFactory, one_torch_thread) -> Any:
    from lm_eval.models.huggingface import HFLM

    from nlue.lm.tiny import save_tiny_causal_lm

    folder = save_tiny_causal_lm(tmp_path_factory.mktemp("lm") / "gpt2", "gpt2", seed=3)
    return HFLM(pretrained=str(folder), dtype="float32", device="cpu", batch_size=8)  # loaded once for every run


def _evaluate(model: Any, folder: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(folder), include_defaults=False)  # lm-eval's own tasks: not indexed
    out = lm_eval.simple_evaluate(
        model=model, tasks=names, limit=2, num_fewshot=0, task_manager=manager, bootstrap_iters=0, log_samples=False
    )
    return out["results"]


@pytest.mark.parametrize("export", sorted(EXPORTS))
def test_lm_eval_runs_every_task_and_group_the_export_writes(
    request: pytest.FixtureRequest, harness_model: Any, tmp_path: Path, export: str
) -> None:
    build, options = EXPORTS[export]
    folder = tmp_path / "lm_eval_tasks"
    argv = ["export", "lm-eval", "--out", str(folder), "--dataset", str(request.getfixturevalue(build).repo_dir)]
    assert main([*argv, *options]) == 0
    written = {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in folder.glob("*.yaml")}
    tasks = sorted(name for name, config in written.items() if "group" not in config)
    groups = {name: config["task"] for name, config in written.items() if "group" in config}
    assert tasks and set().union(*groups.values()) == set(tasks)  # running the groups runs every task, no other
    try:
        results = _evaluate(harness_model, folder, sorted(groups))
    except Exception as group_failure:
        failures = {}
        for name in tasks:
            try:
                _evaluate(harness_model, folder, [name])
            except Exception as failure:
                failures[name] = f"{type(failure).__name__}: {str(failure)[:200]}"
        named = "; ".join(f"{name}: {why}" for name, why in failures.items())
        pytest.fail(f"lm_eval failed on the {export} export's groups ({group_failure!r}); alone: {named or 'none'}")
    missing = [name for name in tasks if not {"acc,none", "acc_norm,none"} <= set(results.get(name, {}))]
    assert not missing, f"no acc and acc_norm from lm_eval for {missing}"
    assert {name: results[name]["sample_len"] for name in tasks} == dict.fromkeys(tasks, 2)
