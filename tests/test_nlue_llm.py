"""NLUE classification on a causal LM by log-likelihood, and its lm-evaluation-harness export.

The parity test runs both on the same tiny local model: nlue's evaluator through its own
engine, lm-eval's `hf` backend on the exported YAMLs. Per-task accuracy and acc_norm must
agree within 1e-4.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlue.evals.export.lm_eval import export_lm_eval, exportable, task_config
from nlue.evals.llm.nlue_llm import nlue_tasks, render_prompt, run_nlue_llm, score_labels, task_metrics
from nlue.registry.tasks import TASK_NAMES, TASKS

PARITY_TASKS = ("sa", "mnli", "qadsm", "wg")

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nlue.lm.tiny import save_tiny_causal_lm

    return save_tiny_causal_lm(tmp_path_factory.mktemp("lm") / "gpt2", "gpt2", seed=3)


def test_every_classification_task_is_exportable_and_gmet_and_stsb_are_not() -> None:
    assert [t for t in TASK_NAMES if exportable(TASKS[t])] == [
        "sa", "cola", "wg", "qqp", "mrpc", "qadsm", "mnli", "qnli", "rte", "cr",
    ]  # fmt: skip


def test_prompts_render_the_fields_without_the_label() -> None:
    item = {"premise": "घाम लाग्यो।", "hypothesis": "पानी पर्‍यो।", "label": 2}
    text = render_prompt(TASKS["mnli"], item, "ne")
    assert "आधार वाक्य: घाम लाग्यो।" in text and "परिकल्पना: पानी पर्‍यो।" in text and text.endswith("उत्तर:")
    assert "खण्डन" not in text.split("\n", 1)[1]  # the answer is never in what the model reads
    config = task_config(TASKS["mnli"], "ne", "me/nlue")
    assert config["doc_to_choice"] == ["पुष्टि", "तटस्थ", "खण्डन"] and config["doc_to_target"] == "{{ label }}"


def test_export_writes_tasks_and_groups(tmp_path: Path) -> None:
    paths = export_lm_eval(tmp_path, "me/nlue", languages=("en", "ne")).files  # offline: configs unchecked
    names = {p.name for p in paths}
    assert "nlue_sa_ne.yaml" in names and "nlue_nlue_en.yaml" in names and "nlue_stsb_en.yaml" not in names
    group = yaml.safe_load((tmp_path / "nlue_nlue_ne.yaml").read_text(encoding="utf-8"))
    assert len(group["task"]) == 10 and "nlue_gmet_ne" not in group["task"]


@pytest.mark.parametrize("language", ["en", "ne"])
def test_our_scores_equal_lm_evaluation_harness(sample_build, tiny_lm: Path, tmp_path: Path, language: str) -> None:
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    from nlue.data.access import load_task
    from nlue.lm.local import LocalCausalLM

    dataset = str(sample_build.repo_dir)
    export_lm_eval(tmp_path / "yaml", dataset, PARITY_TASKS, (language,))
    theirs = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={tiny_lm},dtype=float32",
        tasks=[f"nlue_{t}_{language}" for t in PARITY_TASKS],
        num_fewshot=0,
        batch_size=8,
        device="cpu",
        task_manager=TaskManager(include_path=str(tmp_path / "yaml"), include_defaults=False),  # ours alone indexed
    )["results"]
    model = LocalCausalLM(tiny_lm, device="cpu", dtype="float32", batch_size=8, show_progress=False)
    for name in PARITY_TASKS:
        task = TASKS[name]
        test = load_task(dataset, task)["test"]
        scores = score_labels(model, task, list(test), language)
        ours = task_metrics(task, scores, test[str(task.label_field)], None, 0)
        reference = theirs[f"nlue_{name}_{language}"]
        assert ours["accuracy"] == pytest.approx(reference["acc,none"], abs=1e-4), name
        assert ours["acc_norm_chars"] == pytest.approx(reference["acc_norm,none"], abs=1e-4), name


def test_run_writes_llm_results_the_leaderboard_reads(sample_build, tiny_lm: Path, tmp_path: Path) -> None:
    from nlue.boards.leaderboard import result_rows
    from nlue.lm.local import LocalCausalLM

    model = LocalCausalLM(tiny_lm, device="cpu", dtype="float32", batch_size=8, show_progress=False)
    results = run_nlue_llm(
        model, str(sample_build.repo_dir), nlue_tasks(["sa", "rte"], "ne"), "ne", 2, tmp_path / "results",
        "tiny-gpt2__ne-2shot",
        bootstrap_resamples=50,
    )  # fmt: skip
    assert set(results) == {"sa", "rte"}
    saved = json.loads((tmp_path / "results" / "tiny-gpt2__ne-2shot" / "sa.json").read_text(encoding="utf-8"))
    assert saved["kind"] == "few-shot" and saved["hyperparameters"]["shots"] == 2
    assert {"macro_f1", "macro_f1_ci_low", "acc_norm_chars", "acc_norm_bytes"} <= set(saved["metrics"])
    (row,) = result_rows(tmp_path / "results").rows
    assert set(row.task_scores) == {"sa", "rte"} and row.kinds == ("few-shot",) and row.modes == ("loglik",)
    assert row.kind == "few-shot · log-likelihood"  # the mode is shown, never left for the reader to guess
