"""How fast is our batched evaluator, against ``pipeline("text-classification")`` and ``Trainer.predict``?

Same BERT-base-size classifier (random weights, built here with no download), same
inputs, same batch size, same torch threads, one process. Timed paths:

* ``ours`` - :func:`nlue.training.predict.predict_logits`: tokenises once, sorts the
  items by token count, pads each batch to its own longest item, runs under
  ``torch.inference_mode`` and puts the rows back in the original order.
* ``pipeline`` - ``transformers.pipeline("text-classification", batch_size=B)`` fed the
  same pairs as ``{"text": premise, "text_pair": hypothesis}`` dicts, in the given order.
* ``Trainer.predict`` - on the tokenised dataset (tokenised before the clock starts), with
  its default collator (dynamic padding per batch) and ``per_device_eval_batch_size=B``.
* ``matmul`` - fp32 ``torch.mm`` of two 2048x2048 matrices, timed in the same rounds: the
  rate this machine's BLAS reaches on a large, square, compute-bound product.
* ``ours, int8`` (``--int8``) - our path on a copy of the model whose Linear layers are
  dynamically quantised to int8 (CPU only), with its agreement with the fp32 logits.

Model GFLOP/s: the forward FLOPs of what each path ran, divided by its seconds. Every
forward call is recorded by a hook (batch shape and each row's real length), so padded
positions are counted from what actually ran, not assumed. "useful" counts each item's
real tokens only; "executed" counts the padded batch as computed. FLOPs per sequence of
n tokens: per layer 2n(4d^2 + 2 d f) for the projections and the feed-forward, plus 4n^2 d
for the attention products; then the pooler (2 d^2) and the classifier (2 d C).
Embedding look-ups, softmax, layer norms and activations are not counted.

Inputs: ``--items`` (premise, hypothesis) pairs cut from the embedded Nepali sample
texts. Each pair's target length, [CLS]/[SEP]s included, is drawn from a log-normal
with median 40 tokens and sigma 0.55, clipped to 10-120 tokens (NLI-like: mostly short,
a long tail); the premise takes 55-80% of the text tokens. Lengths are counted with the
model's own tokenizer; their percentiles are printed.

Run: ``python benchmarks/eval_throughput.py [--items 2000] [--batch-size 32] [--repeats 3] [--int8]``
(``--quick``: a tiny model and a few items, a smoke test that finishes in seconds).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import random
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import transformers

from nlue.registry.tasks import TASKS
from nlue.tiny_models import sample_corpus, tiny_config, train_tokenizer
from nlue.training.modeling import classifier_config_kwargs
from nlue.training.predict import predict_logits, quantize_dynamic_int8

TASK = TASKS["mnli"]
BASE_SIZES = {
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
}
LENGTH_MEDIAN, LENGTH_SIGMA, LENGTH_MIN, LENGTH_MAX = 40, 0.55, 10, 120
GOALS = {"pipeline": 1.5, "trainer": 1.8, "matmul_share": 0.80}


def build_model(out: Path, quick: bool, vocab_size: int) -> Path:
    """A BERT classifier for MNLI (3 labels) with random weights and a sample-trained WordPiece vocabulary."""
    from transformers import AutoModelForSequenceClassification

    tokenizer = train_tokenizer("bert", vocab_size=vocab_size)
    config = tiny_config("bert", len(tokenizer), tokenizer, **classifier_config_kwargs(TASK))
    if not quick:
        for key, value in BASE_SIZES.items():
            setattr(config, key, value)
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_config(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def target_lengths(n: int, seed: int) -> list[int]:
    """Pair lengths (special tokens included): log-normal, median 40, sigma 0.55, clipped to 10-120."""
    rng = np.random.default_rng(seed)
    drawn = rng.lognormal(mean=math.log(LENGTH_MEDIAN), sigma=LENGTH_SIGMA, size=n)
    return np.clip(np.rint(drawn), LENGTH_MIN, LENGTH_MAX).astype(int).tolist()


def make_pairs(tokenizer: Any, n: int, seed: int) -> list[dict[str, str]]:
    """``n`` premise/hypothesis pairs of :func:`target_lengths`, cut from the sample's Nepali texts.

    Words are taken in turn from the shuffled sample texts (cycled) while the piece count
    stays within the target; a text never ends inside a word.
    """
    rng = random.Random(seed)
    texts = list(sample_corpus())
    rng.shuffle(texts)
    words = " ".join(texts).split()
    pieces: dict[str, int] = {}
    cursor = 0

    def take(budget: int) -> str:
        nonlocal cursor
        chosen: list[str] = []
        used = 0
        while True:
            word = words[cursor % len(words)]
            size = pieces.setdefault(word, len(tokenizer.tokenize(word)))
            if chosen and used + size > budget:
                return " ".join(chosen)
            chosen.append(word)
            used += size
            cursor += 1

    specials = tokenizer.num_special_tokens_to_add(pair=True)
    pairs = []
    for total in target_lengths(n, seed):
        body = max(total - specials, 2)
        first = max(1, round(body * rng.uniform(0.55, 0.80)))
        pairs.append({"premise": take(first), "hypothesis": take(max(1, body - first))})
    return pairs


def forward_flops(config: Any, lengths: Sequence[int]) -> float:
    """Forward FLOPs of a BERT-style classifier on sequences of ``lengths`` tokens (see the module doc)."""
    d, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    n = np.asarray(lengths, dtype=np.float64)
    per_layer = 2 * n * (4 * d * d + 2 * d * f) + 4 * n * n * d
    return float((layers * per_layer).sum() + len(n) * (2 * d * d + 2 * d * config.num_labels))


@dataclass
class Recorder:
    """What the model's forward calls ran: each row's real length and each batch's padded shape."""

    real: list[int] = field(default_factory=list)
    padded: list[int] = field(default_factory=list)

    def hook(self, module: Any, args: tuple, kwargs: dict) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        mask = kwargs.get("attention_mask")
        batch, width = ids.shape
        self.real += mask.sum(dim=1).tolist() if mask is not None else [width] * batch
        self.padded += [width] * batch

    def clear(self) -> None:
        self.real.clear()
        self.padded.clear()


@dataclass
class PathResult:
    seconds: list[float] = field(default_factory=list)
    useful_flops: float = 0.0
    executed_flops: float = 0.0
    real_tokens: int = 0
    padded_tokens: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def matmul_seconds(size: int, calls: int) -> float:
    """Seconds per fp32 ``torch.mm`` of two ``size`` x ``size`` matrices (median of ``calls``)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    out = torch.empty(size, size)
    torch.mm(a, b, out=out)  # warm-up
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        torch.mm(a, b, out=out)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run_path(function: Callable[[], Any], recorder: Recorder, config: Any, result: PathResult) -> Any:
    recorder.clear()
    started = time.perf_counter()
    output = function()
    result.seconds.append(time.perf_counter() - started)
    result.useful_flops = forward_flops(config, recorder.real)
    result.executed_flops = forward_flops(config, recorder.padded)
    result.real_tokens, result.padded_tokens = sum(recorder.real), sum(recorder.padded)
    return output


def spread(seconds: list[float]) -> str:
    return f"{min(seconds):.2f}-{max(seconds):.2f}"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, help="number of pairs (default 2000; 48 with --quick)")
    parser.add_argument("--batch-size", type=int, default=32, help="batch size of every path (default 32)")
    parser.add_argument("--repeats", type=int, help="interleaved timing rounds; medians are reported (default 3)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--vocab-size", type=int, default=30000, help="WordPiece vocabulary asked for (default 30000)")
    parser.add_argument("--int8", action="store_true", help="also time our path with dynamic int8 Linear layers")
    parser.add_argument("--quick", action="store_true", help="tiny model, few items, one round: a smoke test")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    items = args.items or (48 if args.quick else 2000)
    repeats = args.repeats or (1 if args.quick else 3)
    if args.threads:
        torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    matmul_size = 512 if args.quick else 2048

    from datasets import Dataset
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

    with tempfile.TemporaryDirectory() as tmp:
        path = build_model(Path(tmp) / "model", args.quick, args.vocab_size)
        model = AutoModelForSequenceClassification.from_pretrained(path).eval()
        tokenizer = AutoTokenizer.from_pretrained(path)
        config = model.config
        pairs = make_pairs(tokenizer, items, args.seed)
        lengths = [
            len(ids) for ids in tokenizer([p["premise"] for p in pairs], [p["hypothesis"] for p in pairs])["input_ids"]
        ]
        recorder = Recorder()
        model.register_forward_pre_hook(recorder.hook, with_kwargs=True)

        pipe = transformers.pipeline("text-classification", model=model, tokenizer=tokenizer, device="cpu")
        pipe_inputs = [{"text": p["premise"], "text_pair": p["hypothesis"]} for p in pairs]
        tokenised = Dataset.from_dict(
            {"premise": [p["premise"] for p in pairs], "hypothesis": [p["hypothesis"] for p in pairs]}
        )
        tokenised = tokenised.map(
            lambda batch: tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128),
            batched=True,
            remove_columns=["premise", "hypothesis"],
        )
        trainer = Trainer(
            model=model,
            args=TrainingArguments(
                output_dir=str(Path(tmp) / "trainer"),
                per_device_eval_batch_size=args.batch_size,
                report_to="none",
                disable_tqdm=True,
                use_cpu=True,
            ),
            processing_class=tokenizer,
        )
        quantised = quantize_dynamic_int8(model) if args.int8 else None
        if quantised is not None:
            quantised.register_forward_pre_hook(recorder.hook, with_kwargs=True)

        paths: dict[str, Callable[[], Any]] = {
            "ours": lambda: predict_logits(model, tokenizer, TASK, pairs, batch_size=args.batch_size),
            "pipeline": lambda: pipe(pipe_inputs, batch_size=args.batch_size),
            "trainer": lambda: trainer.predict(tokenised).predictions,
        }
        if quantised is not None:
            paths["int8"] = lambda: predict_logits(quantised, tokenizer, TASK, pairs, batch_size=args.batch_size)
        # Warm up every path once on a few items (lazy imports, allocator, kernels).
        warm = pairs[: 2 * args.batch_size]
        predict_logits(model, tokenizer, TASK, warm, batch_size=args.batch_size)
        pipe(pipe_inputs[: len(warm)], batch_size=args.batch_size)
        trainer.predict(tokenised.select(range(len(warm))))
        if quantised is not None:
            predict_logits(quantised, tokenizer, TASK, warm, batch_size=args.batch_size)

        results = {name: PathResult() for name in paths}
        matmul: list[float] = []
        outputs: dict[str, Any] = {}
        for _ in range(repeats):  # interleaved, so that every path meets the same machine load
            for name, function in paths.items():
                outputs[name] = run_path(function, recorder, config, results[name])
            matmul.append(matmul_seconds(matmul_size, 5 if args.quick else 10))
    matmul_rate = 2 * matmul_size**3 / statistics.median(matmul) / 1e9

    ours = outputs["ours"]
    pipe_labels = np.array([config.label2id[row["label"]] for row in outputs["pipeline"]])
    agreement = {
        "pipeline": float((pipe_labels == ours.argmax(-1)).mean()),
        "trainer": float((np.asarray(outputs["trainer"]).argmax(-1) == ours.argmax(-1)).mean()),
        "trainer_max_abs": float(np.abs(np.asarray(outputs["trainer"]) - ours).max()),
    }
    if "int8" in outputs:
        agreement["int8"] = float((outputs["int8"].argmax(-1) == ours.argmax(-1)).mean())
        agreement["int8_max_abs"] = float(np.abs(outputs["int8"] - ours).max())

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    params = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"model: {'tiny' if args.quick else 'BERT-base-size'} BERT classifier, random weights, {params:.1f}M parameters "
          f"({config.num_hidden_layers} layers, hidden {config.hidden_size}, {config.num_attention_heads} heads, "
          f"intermediate {config.intermediate_size}), vocab {len(tokenizer)} (WordPiece on the sample, "
          f"{args.vocab_size} asked), {config.num_labels} labels")  # fmt: skip
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch threads "
          f"{torch.get_num_threads()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"torch {torch.__version__}, transformers {transformers.__version__}")  # fmt: skip
    p = np.percentile(lengths, [5, 25, 50, 75, 95, 100])
    print(f"inputs: {items} mnli pairs; tokens per pair (specials included): mean {np.mean(lengths):.1f}, "
          f"p5 {p[0]:.0f}, p25 {p[1]:.0f}, p50 {p[2]:.0f}, p75 {p[3]:.0f}, p95 {p[4]:.0f}, max {p[5]:.0f}; "
          f"batch size {args.batch_size}; median of {repeats} interleaved rounds (spread = min-max seconds)")  # fmt: skip
    labels = {
        "ours": "ours: predict_logits (token-sorted)",
        "pipeline": 'pipeline("text-classification")',
        "trainer": "Trainer.predict",
        "int8": "ours, dynamic int8 Linear",
    }
    header = (f"{'path':<38}{'seconds':>9}{'spread':>13}{'items/s':>9}{'padding':>9}"
              f"{'useful GF/s':>13}{'exec GF/s':>11}{'useful %mm':>12}{'exec %mm':>10}")  # fmt: skip
    print(header)
    table: dict[str, dict[str, float]] = {}
    for name, result in results.items():
        seconds = result.median
        useful, executed = result.useful_flops / seconds / 1e9, result.executed_flops / seconds / 1e9
        padding = 1 - result.real_tokens / max(result.padded_tokens, 1)
        table[name] = {"seconds": seconds, "items_per_second": items / seconds, "useful_gflops": useful,
                       "executed_gflops": executed, "padding": padding}  # fmt: skip
        print(f"{labels[name]:<38}{seconds:>9.2f}{spread(result.seconds):>13}{items / seconds:>9.1f}{padding:>8.1%}"
              f"{useful:>13.1f}{executed:>11.1f}{useful / matmul_rate:>11.1%}{executed / matmul_rate:>10.1%}")  # fmt: skip
    mm_seconds = [2 * matmul_size**3 / s / 1e9 for s in matmul]
    print(f"{f'matmul: fp32 torch.mm {matmul_size}x{matmul_size}':<38}{'':>9}{'':>13}{'':>9}{'':>9}"
          f"{matmul_rate:>13.1f}{'':>11}{'100.0%':>12}   (spread {min(mm_seconds):.1f}-{max(mm_seconds):.1f} GFLOP/s)")  # fmt: skip

    vs_pipeline = table["pipeline"]["seconds"] / table["ours"]["seconds"]
    vs_trainer = table["trainer"]["seconds"] / table["ours"]["seconds"]
    share = table["ours"]["useful_gflops"] / matmul_rate
    executed_share = table["ours"]["executed_gflops"] / matmul_rate

    def verdict(value: float, goal: float) -> str:
        return "met" if value >= goal else "NOT met"

    print("goals:")
    print(f"  ours vs pipeline:        {vs_pipeline:.2f}x  (goal >= {GOALS['pipeline']}x: "
          f"{verdict(vs_pipeline, GOALS['pipeline'])})")  # fmt: skip
    print(f"  ours vs Trainer.predict: {vs_trainer:.2f}x  (goal >= {GOALS['trainer']}x: "
          f"{verdict(vs_trainer, GOALS['trainer'])})")  # fmt: skip
    print(f"  ours, share of matmul:   {share:.1%} useful, {executed_share:.1%} executed  "
          f"(goal >= {GOALS['matmul_share']:.0%} of useful: {verdict(share, GOALS['matmul_share'])})")  # fmt: skip
    print(f"agreement with ours: pipeline labels {agreement['pipeline']:.1%}, Trainer.predict labels "
          f"{agreement['trainer']:.1%} (max |logit diff| {agreement['trainer_max_abs']:.2e})")  # fmt: skip
    if "int8" in table:
        print(f"int8 vs fp32 (ours): {table['ours']['seconds'] / table['int8']['seconds']:.2f}x the speed, "
              f"identical argmax {agreement['int8']:.1%}, max |logit diff| {agreement['int8_max_abs']:.3f} "
              "(random weights: an accuracy change on a trained model must be measured on its test set)")  # fmt: skip
    return {"table": table, "matmul_gflops": matmul_rate, "vs_pipeline": vs_pipeline, "vs_trainer": vs_trainer,
            "matmul_share": share, "agreement": agreement, "lengths": lengths}  # fmt: skip


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        main()
