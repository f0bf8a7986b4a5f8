"""The batched evaluator (nlue.training.predict): same logits as one-at-a-time prediction, input order kept,
batches made by token count, and the optional int8 copy close to fp32."""

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
from nlue.errors import NlueError
from nlue.lm.tiny import save_tiny_classifier
from nlue.registry.inputs import text_pair
from nlue.registry.tasks import TaskSpec, get_task
from nlue.training.predict import logits_to_predictions, predict_logits, quantize_dynamic_int8

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# (family, task): single sentence, premise/hypothesis, the wg fill-in pair, three fields joined, regression.
CASES = [("bert", "sa"), ("bert", "mnli"), ("bert", "wg"), ("bert", "qadsm"), ("bert", "stsb"), ("roberta", "mnli")]


@pytest.fixture(scope="module")
def classifiers(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    root = tmp_path_factory.mktemp("predict-models")
    return {case: save_tiny_classifier(root / "-".join(case), case[0], case[1], seed=3) for case in CASES}


def _load(path: Path, padding_side: str = "right") -> tuple[Any, Any]:
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.padding_side = padding_side
    return model, tokenizer


def _examples(task: TaskSpec, count: int = 24) -> list[dict[str, Any]]:
    rows = [record for spec, record in sample_records() if spec.name == task.name][:count]
    random.Random(1).shuffle(rows)  # the sample file's order would leave lengths partly sorted already
    return rows


def _one_at_a_time(model: Any, tokenizer: Any, task: TaskSpec, examples: list[dict[str, Any]]) -> np.ndarray:
    """The reference: each item alone, no padding at all, straight through the model."""
    rows = []
    with torch.no_grad():
        for example in examples:
            first, second = text_pair(task, example)
            encoded = tokenizer(first, second, truncation=True, max_length=128, return_tensors="pt")
            rows.append(model(**encoded).logits[0].numpy())
    return np.stack(rows)


@pytest.mark.parametrize(("family", "task_name"), CASES, ids=["-".join(c) for c in CASES])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_batched_logits_equal_one_at_a_time(
    classifiers: dict[tuple[str, str], Path], family: str, task_name: str, padding_side: str
) -> None:
    task = get_task(task_name)
    model, tokenizer = _load(classifiers[family, task_name], padding_side)
    examples = _examples(task)
    expected = _one_at_a_time(model, tokenizer, task, examples)
    for batch_size in (1, 5, 64):
        got = predict_logits(model, tokenizer, task, examples, batch_size=batch_size)
        assert got.dtype == np.float32 and got.shape == (len(examples), task.num_labels)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    assert tokenizer.padding_side == padding_side  # the caller's tokenizer is left as it was


def test_left_padding_would_change_a_bert_model_logits(classifiers: dict[tuple[str, str], Path]) -> None:
    """Why the evaluator pads on the right: with BERT's absolute positions, left padding moves the logits."""
    task = get_task("mnli")
    model, tokenizer = _load(classifiers["bert", "mnli"], "left")
    examples = _examples(task, 8)
    first, second = zip(*(text_pair(task, e) for e in examples), strict=True)
    encoded = tokenizer(list(first), list(second), padding=True, return_tensors="pt")
    with torch.no_grad():
        left_padded = model(**encoded).logits.numpy()
    assert np.abs(left_padded - _one_at_a_time(model, tokenizer, task, examples)).max() > 1e-4


def test_rows_come_back_in_the_order_given(classifiers: dict[tuple[str, str], Path]) -> None:
    task = get_task("mnli")
    model, tokenizer = _load(classifiers["bert", "mnli"])
    examples = _examples(task, 40)
    base = predict_logits(model, tokenizer, task, examples, batch_size=7)
    assert len({row.tobytes() for row in base}) == len(examples)  # distinct rows, so a mix-up shows
    permutation = np.random.default_rng(5).permutation(len(examples))
    shuffled = predict_logits(model, tokenizer, task, [examples[i] for i in permutation], batch_size=7)
    np.testing.assert_allclose(shuffled, base[permutation], rtol=0, atol=1e-5)
    doubled = predict_logits(model, tokenizer, task, examples + examples[:3], batch_size=7)
    np.testing.assert_allclose(doubled[-3:], base[:3], rtol=0, atol=1e-5)


@pytest.mark.parametrize("task_name", ["sa", "stsb"])
def test_empty_input_gives_an_empty_array(classifiers: dict[tuple[str, str], Path], task_name: str) -> None:
    task = get_task(task_name)
    model, tokenizer = _load(classifiers["bert", task_name])
    got = predict_logits(model, tokenizer, task, [])
    assert got.shape == (0, task.num_labels) and got.dtype == np.float32
    assert logits_to_predictions(task, got).shape == (0,)


@pytest.mark.parametrize("batch_size", [0, -4, 2.5, True, "8", None])
def test_a_bad_batch_size_is_refused_with_a_message(classifiers: dict[tuple[str, str], Path], batch_size: Any) -> None:
    task = get_task("sa")
    model, tokenizer = _load(classifiers["bert", "sa"])
    with pytest.raises(NlueError, match=r"batch_size must be a whole number of at least 1, got"):
        predict_logits(model, tokenizer, task, _examples(task, 3), batch_size=batch_size)


class RecordingModel(torch.nn.Module):
    """Passes every call through to the wrapped model and keeps what each batch looked like."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner
        self.batches: list[dict[str, Any]] = []

    def forward(self, **inputs: Any) -> Any:
        ids, lengths = inputs["input_ids"], inputs["attention_mask"].sum(dim=1).tolist()
        real = [tuple(row[:n].tolist()) for row, n in zip(ids, lengths, strict=True)]
        self.batches.append({"width": ids.shape[1], "lengths": lengths, "ids": real})
        return self.inner(**inputs)


def test_batches_are_made_by_token_count_not_by_characters(classifiers: dict[tuple[str, str], Path]) -> None:
    """Items whose character order is the reverse of their token order: the batches must follow the tokens."""
    task = get_task("sa")
    model, tokenizer = _load(classifiers["bert", "sa"])
    vocabulary = tokenizer.get_vocab()
    # A long word that is one token, and a mark that is one token in two characters.
    words = [w for w in vocabulary if not w.startswith(("##", "[")) and tokenizer.tokenize(w) == [w]]
    long_word = max(words, key=len)
    assert len(long_word) >= 6
    assert tokenizer.tokenize("।") == ["।"]
    texts = [" ".join([long_word] * (12 - j) + ["।"] * (3 * j)) for j in range(12)]
    random.Random(2).shuffle(texts)
    encoded = tokenizer(texts)["input_ids"]
    tokens = [len(ids) for ids in encoded]
    characters = [len(t) for t in texts]
    by_tokens = sorted(range(12), key=lambda i: -tokens[i])
    by_characters = sorted(range(12), key=lambda i: -characters[i])
    assert len(set(tokens)) == 12 and by_characters == by_tokens[::-1]  # the two orders really differ

    recording = RecordingModel(model)
    got = predict_logits(recording, tokenizer, task, [{"text": t} for t in texts], batch_size=4)
    assert [b["lengths"] for b in recording.batches] == [[tokens[i] for i in by_tokens[k : k + 4]] for k in (0, 4, 8)]
    assert [set(b["ids"]) for b in recording.batches] == [
        {tuple(encoded[i]) for i in by_tokens[k : k + 4]} for k in (0, 4, 8)
    ]
    # Each batch is padded to its own longest item, not to the longest overall.
    assert [b["width"] for b in recording.batches] == [max(b["lengths"]) for b in recording.batches]
    np.testing.assert_allclose(
        got, _one_at_a_time(model, tokenizer, task, [{"text": t} for t in texts]), rtol=0, atol=1e-5
    )


def _fit(model: Any, tokenizer: Any, task: TaskSpec, rows: list[dict[str, Any]], steps: int) -> Any:
    """Train ``model`` on ``rows`` (full batch, AdamW) so that its predictions have real margins.

    A randomly initialised classifier gives nearly the same logits to every input, and int8
    rounding then flips near-ties at random: agreement would measure nothing.
    """
    first, second = zip(*(text_pair(task, row) for row in rows), strict=True)
    encoded = tokenizer(list(first), None if second[0] is None else list(second), padding=True, return_tensors="pt")
    labels = torch.tensor([row[task.label_field] for row in rows])
    torch.manual_seed(0)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        model(**encoded, labels=labels).loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    return model.eval()


def test_int8_copy_runs_on_cpu_and_mostly_agrees_with_fp32(classifiers: dict[tuple[str, str], Path]) -> None:
    task = get_task("sa")
    model, tokenizer = _load(classifiers["bert", "sa"])
    rows = _examples(task, 50)
    labels = np.array([row[task.label_field] for row in rows])
    model = _fit(model, tokenizer, task, rows, steps=60)
    fp32 = predict_logits(model, tokenizer, task, rows, batch_size=16)
    assert len(set(fp32.argmax(-1))) == task.num_labels and (fp32.argmax(-1) == labels).mean() >= 0.8

    quantised = quantize_dynamic_int8(model)
    assert type(quantised.bert.encoder.layer[0].output.dense).__module__.startswith("torch.ao.nn.quantized")
    assert isinstance(model.bert.encoder.layer[0].output.dense, torch.nn.Linear)  # the fp32 model is untouched
    int8 = predict_logits(quantised, tokenizer, task, rows, batch_size=16)
    difference = float(np.abs(int8 - fp32).max())
    agreement = float((int8.argmax(-1) == fp32.argmax(-1)).mean())
    accuracy = {"fp32": float((fp32.argmax(-1) == labels).mean()), "int8": float((int8.argmax(-1) == labels).mean())}
    print(f"int8 vs fp32 on {len(rows)} sa items: same class {agreement:.1%}, max |logit diff| {difference:.4f}, "
          f"accuracy {accuracy['fp32']:.1%} -> {accuracy['int8']:.1%}")  # fmt: skip
    assert 0 < difference < 0.1  # quantised (so not identical), and close
    assert agreement >= 0.9 and abs(accuracy["int8"] - accuracy["fp32"]) <= 0.1
    np.testing.assert_array_equal(predict_logits(model, tokenizer, task, rows, batch_size=16), fp32)


def test_int8_refuses_a_model_that_is_not_on_cpu(classifiers: dict[tuple[str, str], Path]) -> None:
    model, _ = _load(classifiers["bert", "sa"])
    with pytest.raises(NlueError, match="CPU only; the model is on meta"):
        quantize_dynamic_int8(model.to("meta"))
