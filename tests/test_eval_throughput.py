"""benchmarks/eval_throughput.py at tiny size: its FLOP count, its inputs, its recorder and one quick run."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import AutoModelForSequenceClassification

from nlue.lm.tiny import save_tiny_classifier

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "eval_throughput.py"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_throughput", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, bench: ModuleType) -> tuple[object, object]:
    from transformers import AutoTokenizer

    path = save_tiny_classifier(tmp_path_factory.mktemp("bench") / "m", "bert", bench.TASK.name)
    return AutoModelForSequenceClassification.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def test_the_benchmark_task_is_a_three_way_pair_task(bench: ModuleType) -> None:
    assert bench.TASK.kind.has_classes and bench.TASK.num_labels == 3 and len(bench.TASK.text_fields) == 2


@pytest.mark.parametrize("length", [7, 31, 64])
def test_forward_flops_match_torch_flop_counter(bench: ModuleType, tiny: tuple[object, object], length: int) -> None:
    """Our closed form against torch's own count of every matmul the model ran (no padding: batch of equal rows)."""
    # Eager attention: its two batched matmuls are what the counter sees (it has no formula for
    # the CPU flash-attention kernel that sdpa picks, which does the same products).
    model = AutoModelForSequenceClassification.from_config(tiny[0].config, attn_implementation="eager").eval()
    ids = torch.randint(5, model.config.vocab_size, (3, length))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    assert bench.forward_flops(model.config, [length] * 3) == counter.get_total_flops()


def test_target_lengths_are_log_normal_and_clipped(bench: ModuleType) -> None:
    lengths = np.array(bench.target_lengths(4000, seed=0))
    assert lengths.min() >= bench.LENGTH_MIN and lengths.max() <= bench.LENGTH_MAX
    assert abs(np.median(lengths) - bench.LENGTH_MEDIAN) <= 2
    assert abs(np.log(lengths).std() - bench.LENGTH_SIGMA) < 0.05
    assert bench.target_lengths(50, seed=3) == bench.target_lengths(50, seed=3)


def test_pairs_follow_their_target_lengths(bench: ModuleType, tiny: tuple[object, object]) -> None:
    _, tokenizer = tiny
    pairs = bench.make_pairs(tokenizer, 200, seed=1)
    first, second = bench.TASK.text_fields
    assert all(set(p) == {first, second} and p[first] and p[second] for p in pairs)
    got = np.array([len(tokenizer(p[first], p[second])["input_ids"]) for p in pairs])
    wanted = np.array(bench.target_lengths(200, seed=1))
    # A text never ends inside a word, so a pair can fall a few pieces short of its target, never over
    # (except a one-word text whose word alone is longer).
    assert np.mean(got <= wanted) > 0.95 and np.median(wanted - got) <= 2
    assert np.corrcoef(got, wanted)[0, 1] > 0.95


def test_recorder_counts_real_and_padded_tokens(bench: ModuleType, tiny: tuple[object, object]) -> None:
    model, _ = tiny
    recorder = bench.Recorder()
    handle = model.register_forward_pre_hook(recorder.hook, with_kwargs=True)
    try:
        mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
        with torch.no_grad():
            model(input_ids=torch.full((3, 5), 7), attention_mask=mask)
    finally:
        handle.remove()
    assert recorder.real == [4, 5, 2] and recorder.padded == [5, 5, 5]


def test_paired_ratio_is_taken_within_each_round(bench: ModuleType) -> None:
    results = {"a": bench.PathResult(seconds=[2.0, 9.0, 4.0]), "b": bench.PathResult(seconds=[1.0, 3.0, 1.0])}
    assert bench.paired_ratio(results, "a", "b") == (3.0, 2.0, 4.0)


def test_quick_run_reports_every_path_goal_and_agreement(
    bench: ModuleType, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nlue.training import predict

    monkeypatch.setattr(predict, "CPU_FUSION_MIN_TOKENS", 0)  # so that "ours" runs fused at this tiny size too
    found = bench.main(["--quick", "--items", "40", "--batch-size", "8", "--int8", "--threads", "1"])
    out = capsys.readouterr().out
    for label in bench.LABELS.values():
        assert label in out
    for goal in ("ours vs pipeline (default batching)", "ours vs Trainer.predict", "share of the matmul rate"):
        assert goal in out
    assert out.count(" met") + out.count("NOT met") >= 4 and "int8 vs fp32" in out
    table = found["table"]
    assert set(table) == {"ours", "ours_own_modules", "pipeline", "pipeline_batched", "trainer", "int8"}
    assert all(row["items_per_second"] > 0 and row["useful_gflops"] > 0 for row in table.values())
    # Sorting by length leaves less padding than the given order; one item per call leaves none.
    assert table["ours"]["padding"] < table["trainer"]["padding"] and table["pipeline"]["padding"] == 0
    assert table["pipeline_batched"]["padding"] == pytest.approx(table["trainer"]["padding"])
    assert found["matmul_gflops"] > 0 and math.isfinite(found["vs_pipeline"]) and math.isfinite(found["vs_trainer"])
    # Same fp32 model on every path: the same classes (the head spreads them) and logits equal up to rounding.
    agreement = found["agreement"]
    assert min(agreement["pipeline"], agreement["pipeline_batched"], agreement["trainer"]) >= 0.95
    # standardised logits (about -3..3): the fusion moves them by float rounding, amplified by the head
    assert agreement["own_modules"] == 1 and agreement["own_modules_max_abs"] < 1e-3 and "CPU fusion" in out
    assert found["fused"] and "the fused view was used" in out
    assert 0 <= agreement["int8"] <= 1 and agreement["int8_max_abs"] > 0
    assert len(found["lengths"]) == 40
