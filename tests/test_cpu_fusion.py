"""The fused CPU view (nlue.training.cpu_fusion): same logits as the model's own modules, the model left
untouched, the view rebuilt when the model changes, look-alike blocks refused, and the evaluator's rules
for when it is used."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from nlue.data.sample import sample_records
from nlue.lm.tiny import save_tiny_classifier
from nlue.registry.tasks import get_task
from nlue.training import cpu_fusion, predict
from nlue.training.predict import predict_logits, quantize_dynamic_int8

pytestmark = [
    pytest.mark.usefixtures("one_torch_thread"),
    pytest.mark.skipif(not cpu_fusion.available(), reason="this PyTorch build has no oneDNN fused linear"),
]

CASES = [("bert", "mnli"), ("bert", "stsb"), ("roberta", "sa")]


@pytest.fixture(scope="module")
def classifiers(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    root = tmp_path_factory.mktemp("fusion-models")
    return {case: save_tiny_classifier(root / "-".join(case), case[0], case[1], seed=5) for case in CASES}


def _load(path: Path) -> tuple[Any, Any]:
    return AutoModelForSequenceClassification.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def _examples(task_name: str, count: int = 24) -> list[dict[str, Any]]:
    rows = [record for spec, record in sample_records() if spec.name == task_name][:count]
    random.Random(2).shuffle(rows)
    return rows


def _fused_modules(view: Any) -> list[str]:
    return [type(module).__name__ for module in view.modules() if module.__module__ == cpu_fusion.__name__]


def _forward(model: Any, ids: torch.Tensor) -> torch.Tensor:
    with torch.inference_mode():
        return model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits


@pytest.mark.parametrize(("family", "task_name"), CASES, ids=["-".join(c) for c in CASES])
def test_fused_logits_equal_the_models_own(
    classifiers: dict[tuple[str, str], Path], family: str, task_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, tokenizer = _load(classifiers[family, task_name])
    task, examples = get_task(task_name), _examples(task_name)
    views: list[Any] = []
    monkeypatch.setattr(predict, "CPU_FUSION_MIN_TOKENS", 0)
    real_view = cpu_fusion.fused_view
    monkeypatch.setattr(cpu_fusion, "fused_view", lambda m: views.append(real_view(m)) or views[-1])

    fused = predict_logits(model, tokenizer, task, examples, batch_size=5)
    own = predict_logits(model, tokenizer, task, examples, batch_size=5, cpu_fusion=False)

    assert len(views) == 1 and views[0] is not None  # the fused call used a view, the other did not
    kinds = _fused_modules(views[0])
    # every layer's intermediate (GELU) and two output blocks (residual add), plus the plain projections
    layers = model.config.num_hidden_layers
    assert kinds.count("_FusedOutput") == 2 * layers
    assert kinds.count("_PackedLinear") >= 6 * layers  # q, k, v, intermediate, two outputs' dense
    np.testing.assert_allclose(fused, own, rtol=0, atol=1e-5)
    if task.kind.has_classes:
        assert (fused.argmax(-1) == own.argmax(-1)).all()


def test_the_model_is_left_as_it_was(classifiers: dict[tuple[str, str], Path]) -> None:
    model, _ = _load(classifiers["bert", "mnli"])
    types_before = [type(m) for m in model.modules()]
    state_before = {name: (t.data_ptr(), t.clone()) for name, t in model.state_dict().items()}
    view = cpu_fusion.fused_view(model)
    ids = torch.randint(5, 100, (3, 9))
    _forward(view, ids)
    assert [type(m) for m in model.modules()] == types_before
    assert not _fused_modules(model)
    for name, tensor in model.state_dict().items():
        pointer, value = state_before[name]
        assert tensor.data_ptr() == pointer and torch.equal(tensor, value), name
    # the view shares the model's embeddings and layer norms: no copies beyond the packed projections
    assert view.bert.embeddings is model.bert.embeddings
    layer, own_layer = view.bert.encoder.layer[0], model.bert.encoder.layer[0]
    assert layer.output.LayerNorm is own_layer.output.LayerNorm


def test_the_view_is_kept_until_the_model_changes(classifiers: dict[tuple[str, str], Path]) -> None:
    model, _ = _load(classifiers["bert", "mnli"])
    ids = torch.randint(5, 100, (2, 7))
    first = cpu_fusion.fused_view(model)
    assert cpu_fusion.fused_view(model) is first

    with torch.no_grad():  # an in-place change (an optimiser step does the same)
        model.bert.encoder.layer[0].intermediate.dense.weight.mul_(3.0)
    second = cpu_fusion.fused_view(model)
    assert second is not first
    torch.testing.assert_close(_forward(second, ids), _forward(model, ids), rtol=0, atol=1e-5)

    model.load_state_dict({k: v * 0.5 if v.is_floating_point() else v for k, v in model.state_dict().items()})
    third = cpu_fusion.fused_view(model)
    assert third is not second
    torch.testing.assert_close(_forward(third, ids), _forward(model, ids), rtol=0, atol=1e-5)

    model.classifier = torch.nn.Linear(model.classifier.in_features, model.classifier.out_features)
    fourth = cpu_fusion.fused_view(model)
    assert fourth is not third
    torch.testing.assert_close(_forward(fourth, ids), _forward(model, ids), rtol=0, atol=1e-5)


def test_a_model_in_training_mode_is_not_fused(classifiers: dict[tuple[str, str], Path]) -> None:
    model, _ = _load(classifiers["bert", "mnli"])
    assert cpu_fusion.fused_view(model.train()) is None  # dropout is live: nothing may be fused away
    assert cpu_fusion.fused_view(model.eval()) is not None


class _LookAlikeOutput(torch.nn.Module):
    """Has an output block's attributes but subtracts the residual: the probe must refuse it."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.dense = torch.nn.Linear(width, width)
        self.LayerNorm = torch.nn.LayerNorm(width)
        self.dropout = torch.nn.Dropout(0.1)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) - input_tensor)


class _TanhIntermediate(torch.nn.Module):
    """An intermediate block with the tanh approximation of GELU, which oneDNN's exact GELU is not."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.dense = torch.nn.Linear(width, 2 * width)
        self.intermediate_act_fn = torch.nn.GELU(approximate="tanh")

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.intermediate_act_fn(self.dense(hidden_states))


class _Stack(torch.nn.Module):
    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.up = _TanhIntermediate(width)
        self.down = torch.nn.Linear(2 * width, width)
        self.out = _LookAlikeOutput(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.down(self.up(x)), x)


def test_look_alike_blocks_keep_their_own_forward() -> None:
    torch.manual_seed(0)
    stack = _Stack().eval()
    view = cpu_fusion.fused_view(stack)
    assert view is not None
    # the blocks stay theirs; only their plain Linear layers are packed
    assert type(view.out) is _LookAlikeOutput and type(view.up) is _TanhIntermediate
    assert type(view.out.dense).__name__ == "_PackedLinear" and type(view.up.dense).__name__ == "_PackedLinear"
    assert type(view.up.intermediate_act_fn) is torch.nn.GELU
    x = torch.randn(4, 5, 16)
    with torch.inference_mode():
        torch.testing.assert_close(view(x), stack(x), rtol=0, atol=1e-5)


def test_layers_that_are_not_plain_linear_keep_their_forward(classifiers: dict[tuple[str, str], Path]) -> None:
    peft = pytest.importorskip("peft")
    model, _ = _load(classifiers["bert", "mnli"])
    adapted = peft.get_peft_model(model, peft.LoraConfig(r=2, target_modules=["query", "value"], task_type="SEQ_CLS"))
    for name, parameter in adapted.named_parameters():
        if "lora_B" in name:  # LoRA starts at zero; make the adapter change the outputs
            torch.nn.init.normal_(parameter, std=0.5)
    adapted.eval()
    view = cpu_fusion.fused_view(adapted)
    assert view is not None
    lora_query = view.base_model.model.bert.encoder.layer[0].attention.self.query
    assert type(lora_query).__module__.startswith("peft")
    ids = torch.randint(5, 100, (2, 8))
    torch.testing.assert_close(_forward(view, ids), _forward(adapted, ids), rtol=0, atol=1e-5)

    quantised = quantize_dynamic_int8(_load(classifiers["bert", "mnli"])[0])
    assert cpu_fusion.fused_view(quantised) is None  # int8 layers are no float32 nn.Linear


def test_when_the_evaluator_uses_the_view(
    classifiers: dict[tuple[str, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, tokenizer = _load(classifiers["bert", "mnli"])
    task, examples = get_task("mnli"), _examples("mnli")
    calls: list[Any] = []
    monkeypatch.setattr(cpu_fusion, "fused_view", lambda m: calls.append(m))

    predict_logits(model, tokenizer, task, examples)  # a few items: far under the token threshold
    assert calls == []
    monkeypatch.setattr(predict, "CPU_FUSION_MIN_TOKENS", 0)
    monkeypatch.setenv("NLUE_CPU_FUSION", "0")
    predict_logits(model, tokenizer, task, examples)
    assert calls == []
    monkeypatch.delenv("NLUE_CPU_FUSION")
    got = predict_logits(model, tokenizer, task, examples)  # fused_view answered None: the model's own modules
    assert calls == [model]
    np.testing.assert_allclose(got, predict_logits(model, tokenizer, task, examples, cpu_fusion=False), atol=0)


def test_no_view_without_the_operators(
    classifiers: dict[tuple[str, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _ = _load(classifiers["bert", "mnli"])
    monkeypatch.setattr(cpu_fusion, "available", lambda: False)
    assert cpu_fusion.fused_view(model) is None


def test_a_kept_view_does_not_keep_its_model_alive(classifiers: dict[tuple[str, str], Path]) -> None:
    import gc
    import weakref

    model, _ = _load(classifiers["bert", "mnli"])
    assert cpu_fusion.fused_view(model) is not None
    alive = weakref.ref(model)
    del model
    gc.collect()
    assert alive() is None  # the packed copies go with the model (an evaluation loop over tasks frees each)
