"""Precision in the fine-tuning recipe: which flags win, what a machine cannot do, and float32 master weights.

Found while building the GPU suite (issue 25); none of these needs a GPU to show: the GPU's
answers to ``torch.cuda`` are stood in for where the choice depends on them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch

from nlue.errors import NlueError
from nlue.lm.tiny import save_tiny_classifier, save_tiny_encoder
from nlue.registry.tasks import TASKS
from nlue.training.args import LoraArguments, ModelArguments
from nlue.training.recipe import prepare_model, resolve_precision


@pytest.fixture
def bf16_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine whose (pretend) GPU supports bf16: only the decision is tested, nothing runs on it."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)


def test_auto_picks_bf16_on_a_bf16_gpu_and_nothing_on_cpu(bf16_gpu: None) -> None:
    assert resolve_precision("auto") == {"bf16": True, "fp16": False, "dataloader_pin_memory": True}


def test_an_explicit_fp16_flag_is_honoured_under_auto(bf16_gpu: None) -> None:
    """`nlue train --fp16` on an A100/H100 used to train in bf16: auto overwrote the flag."""
    assert resolve_precision("auto", fp16=True) == {"bf16": False, "fp16": True, "dataloader_pin_memory": True}
    assert resolve_precision("auto", bf16=True)["bf16"] is True


def test_contradicting_flags_are_the_users_to_fix() -> None:
    with pytest.raises(NlueError, match="--precision fp32 contradicts --bf16"):
        resolve_precision("fp32", bf16=True)
    with pytest.raises(NlueError, match="both set"):
        resolve_precision("auto", bf16=True, fp16=True)
    with pytest.raises(NlueError, match="must be one of"):
        resolve_precision("fp8")


def test_a_gpu_without_bf16_refuses_it_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: False)
    assert resolve_precision("auto")["fp16"] is True
    with pytest.raises(NlueError, match="no bf16 support"):
        resolve_precision("bf16")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only answers")
def test_cpu_bf16_is_autocast_with_use_cpu_and_fp16_is_refused() -> None:
    """transformers refuses bf16 without a GPU unless use_cpu is set: that was an internal error."""
    assert resolve_precision("auto") == {"bf16": False, "fp16": False, "dataloader_pin_memory": False}
    assert resolve_precision("bf16") == {"bf16": True, "fp16": False, "use_cpu": True, "dataloader_pin_memory": False}
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if not mps:
        with pytest.raises(NlueError, match="fp16 was asked for, but no GPU"):
            resolve_precision("fp16")


def test_a_half_precision_checkpoint_trains_with_float32_weights(tmp_path: Path) -> None:
    """transformers 5 loads a checkpoint in its saved dtype; training must not keep bf16 master weights."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    source = save_tiny_classifier(tmp_path / "fp32", "bert", "sa")
    half = tmp_path / "bf16"
    AutoModelForSequenceClassification.from_pretrained(source).to(torch.bfloat16).save_pretrained(half)
    AutoTokenizer.from_pretrained(source).save_pretrained(half)
    assert AutoModelForSequenceClassification.from_pretrained(half).dtype == torch.bfloat16  # the library's default
    for lora in (False, True):
        model, _ = prepare_model(ModelArguments(model_name_or_path=str(half)), LoraArguments(lora=lora), TASKS["sa"])
        assert {p.dtype for p in model.parameters()} == {torch.float32}


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path of --precision bf16")
def test_nlue_train_precision_bf16_runs_on_cpu(tmp_path: Path) -> None:
    from nlue.training.cli import run_hf_command

    model = save_tiny_encoder(tmp_path / "enc", "bert")
    out = tmp_path / "run"
    code = run_hf_command(
        "train",
        ["--model", str(model), "--task", "sa", "--output_dir", str(out), "--results_dir", str(tmp_path / "res"),
         "--precision", "bf16", "--max_steps", "2", "--eval_strategy", "no", "--save_strategy", "no",
         "--load_best_model_at_end", "False", "--early_stopping_patience", "0", "--bootstrap", "0",
         "--max_eval_samples", "8", "-q"],
    )  # fmt: skip
    assert code == 0
    result = json.loads((out / "nlue_results.json").read_text(encoding="utf-8"))
    assert result["hyperparameters"]["bf16"] is True and result["hyperparameters"]["fp16"] is False


def test_drop_last_drops_training_batches_only(tmp_path: Path) -> None:
    """--dataloader_drop_last is for training; the Trainer applied it to the test loader too (found by the GPU
    suite: a test split smaller than the evaluation batch came back with no predictions at all)."""
    from nlue.training.cli import run_hf_command

    model = save_tiny_encoder(tmp_path / "enc", "bert")
    out = tmp_path / "run"
    code = run_hf_command(
        "train",
        ["--model", str(model), "--task", "mnli", "--output_dir", str(out), "--results_dir", str(tmp_path / "res"),
         "--max_steps", "2", "--per_device_train_batch_size", "16", "--per_device_eval_batch_size", "5",
         "--dataloader_drop_last", "True", "--eval_strategy", "no", "--save_strategy", "no",
         "--load_best_model_at_end", "False", "--early_stopping_patience", "0", "--bootstrap", "0", "-q"],
    )  # fmt: skip
    assert code == 0
    (predictions,) = out.glob("*.predictions.jsonl")
    assert len(predictions.read_text(encoding="utf-8").splitlines()) == 12  # every sample test item, not 10
