"""Loading a LoRA classifier (issue 29, item 29): the head comes from the adapter, so transformers' report that
it is missing from the base is not printed; a weight that neither holds is still named; any task's labels load."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

pytest.importorskip("peft")

from nlue.lm.checkpoints import load_classifier
from nlue.registry.tasks import TASKS


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny masked LM: the kind of base a LoRA classifier is trained on (no classifier head, no pooler)."""
    from nlue.lm.tiny import save_tiny_encoder

    return save_tiny_encoder(tmp_path_factory.mktemp("base") / "encoder")


def _adapter(encoder: Path, out: Path, task: str, modules_to_save: list[str]) -> tuple[Path, torch.nn.Module]:
    """A LoRA classifier adapter for ``task`` saved as `nlue train --lora` saves one, and its model in memory."""
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    base = AutoModelForSequenceClassification.from_pretrained(
        encoder, **TASKS[task].kind.classifier_config(TASKS[task])
    )
    config = LoraConfig(task_type=TaskType.SEQ_CLS, r=2, target_modules=["query", "value"],
                        modules_to_save=modules_to_save)  # fmt: skip
    model = get_peft_model(base, config)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(encoder).save_pretrained(out)
    (out / "nlue_results.json").write_text(json.dumps({"task": task}), encoding="utf-8")
    return out, model.eval()


def _logits(model: torch.nn.Module, tokenizer, text: str) -> torch.Tensor:
    with torch.no_grad():
        return model(**tokenizer(text, return_tensors="pt")).logits


def test_a_lora_classifier_loads_without_a_missing_weight_report(encoder: Path, tmp_path: Path, capfd, caplog):
    """issue 29, item 29: the base's head and pooler come from the adapter: no "classifier.weight | MISSING"
    report, no warning, and the model predicts as the one that was saved (a three-label task included)."""
    folder, saved = _adapter(encoder, tmp_path / "mnli", "mnli", ["classifier", "bert.pooler"])
    capfd.readouterr()
    caplog.clear()  # building the adapter here loaded the base once, with its report
    caplog.set_level(logging.WARNING)
    model, tokenizer = load_classifier(str(folder))
    printed = capfd.readouterr()
    assert "LOAD REPORT" not in printed.err + printed.out and "MISSING" not in printed.err + printed.out
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert model.config.id2label == TASKS["mnli"].id2label  # the task's labels, in the registry's order
    text = "हिजो पानी परेको थियो।"
    torch.testing.assert_close(_logits(model, tokenizer, text), _logits(saved, tokenizer, text))


def test_a_weight_in_neither_the_base_nor_the_adapter_is_named(encoder: Path, tmp_path: Path, capfd, caplog):
    """issue 29, item 29: a real missing weight stays visible: the pooler, saved by neither, is named."""
    folder, _ = _adapter(encoder, tmp_path / "sa", "sa", ["classifier"])  # the pooler is not saved
    caplog.clear()
    caplog.set_level(logging.WARNING)
    load_classifier(str(folder))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "weights in neither the base model" in warned[0]
    assert "bert.pooler.dense.weight" in warned[0] and "classifier.weight" not in warned[0]
    assert "the predictions are not those of the trained model" in warned[0]
