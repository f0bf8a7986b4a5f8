"""How fast is our batched evaluator, against ``pipeline("text-classification")`` and ``Trainer.predict``?

Same BERT-base-size classifier (random weights, built here with no download), same
inputs, same torch threads, one process. Timed paths:

* ``ours`` - :func:`nlue.training.predict.predict_logits`: tokenises once, sorts the
  items by token count, pads each batch to its own longest item, runs under
  ``torch.inference_mode`` through the fused CPU view (:mod:`nlue.training.cpu_fusion`:
  packed weights, GELU and residual adds inside oneDNN's linear calls) and puts the rows
  back in the original order. The view is built (weights packed) in the first timed round
  and reused by the later ones, as by any later call on an unchanged model.
* ``ours, own modules`` - the same call with ``cpu_fusion=False``: the model's own eager
  modules, to show what the fusion adds and that it changes no prediction.
* ``pipeline`` - ``transformers.pipeline("text-classification")`` with its default
  batching (one item per forward call: the baseline the goal is set against), fed the
  pairs as ``{"text": premise, "text_pair": hypothesis}`` dicts in the given order.
* ``pipeline, batched`` - the same pipeline called with ``batch_size=B``: a stronger
  baseline than the default, reported beside it.
* ``Trainer.predict`` - on the tokenised dataset (tokenised before the clock starts), with
  its default collator (dynamic padding per batch) and ``per_device_eval_batch_size=B``.
* ``matmul`` - fp32 ``torch.mm`` of two 2048x2048 matrices, timed right before and right
  after every timed path run: the rate this machine's BLAS reaches on a large, square,
  compute-bound product under the load of that moment (the machine may be shared).
* ``ours, int8`` (``--int8``) - our path on a copy of the model whose Linear layers are
  dynamically quantised to int8 (CPU only), with its agreement with the fp32 predictions.

Model GFLOP/s: the forward FLOPs of what each path ran, divided by its seconds. Every
forward call is recorded by a hook (batch shape and each row's real length), so padded
positions are counted from what actually ran, not assumed. "useful" counts each item's
real tokens only; "executed" counts the padded batch as computed. FLOPs per sequence of
n tokens: per layer 2n(4d^2 + 2 d f) for the projections and the feed-forward, plus 4n^2 d
for the attention products; then the pooler (2 d^2) and the classifier (2 d C).
Embedding look-ups, softmax, layer norms and activations are not counted. A run's share
of the matmul rate is its useful GFLOP/s over the mean of the two matmul rates measured
around it; ratios between paths are taken within a round (the same load) and the median
over rounds is reported.

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
import sys
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

from nlue.lm.modeling import classifier_config_kwargs
from nlue.lm.tiny import sample_corpus, tiny_config, train_tokenizer
from nlue.registry.tasks import TRAINABLE_TASKS, get_task
from nlue.training.cpu_fusion import fused_view
from nlue.training.predict import cpu_fusion_applies, predict_logits, quantize_dynamic_int8

# The premise/hypothesis task with the most classes (MNLI), picked from the registry.
TASK = max(
    (get_task(name) for name in TRAINABLE_TASKS),
    key=lambda t: (t.kind.has_classes and len(t.text_fields) == 2, t.num_labels),
)
FIRST, SECOND = TASK.text_fields
BASE_SIZES = {
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
}
LENGTH_MEDIAN, LENGTH_SIGMA, LENGTH_MIN, LENGTH_MAX = 40, 0.55, 10, 120
GOALS = {"pipeline": 1.5, "trainer": 1.8, "matmul_share": 0.80}
LABELS = {
    "ours": "ours: predict_logits (token-sorted)",
    "ours_own_modules": "ours, own modules (cpu_fusion=False)",
    "pipeline": 'pipeline("text-classification")',
    "pipeline_batched": "pipeline, batch_size=B",
    "trainer": "Trainer.predict, batch B",
    "int8": "ours, dynamic int8 Linear",
}


def build_model(out: Path, quick: bool, vocab_size: int) -> Path:
    """A BERT classifier for :data:`TASK` with random weights and a sample-trained WordPiece vocabulary."""
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
        pairs.append({FIRST: take(first), SECOND: take(max(1, body - first))})
    return pairs


def spread_head(model: Any, tokenizer: Any, pairs: Sequence[dict[str, str]], seed: int) -> None:
    """Redraw the classifier so that each class wins for about a third of ``pairs`` (in place).

    A randomly initialised BERT gives nearly the same pooled vector to every input, so its
    classifier picks one class for every item and every agreement figure below would be a
    trivial 100%. The new head scores the pooled vectors along random directions,
    standardised over ``pairs``: classes then split the items, and a method that disturbs the
    logits (int8) shows in the agreement. Speed is unaffected (same shapes). Against a trained
    model's margins this is a harsh test: its classes are far further apart.
    """
    pooled: list[torch.Tensor] = []
    handle = model.classifier.register_forward_pre_hook(lambda module, args: pooled.append(args[0].detach()))
    try:
        predict_logits(model, tokenizer, TASK, pairs, batch_size=32)
    finally:
        handle.remove()
    features = torch.cat(pooled)
    generator = torch.Generator().manual_seed(seed)
    weight = torch.randn(model.config.num_labels, features.shape[1], generator=generator)
    scores = features @ weight.T
    mean, std = scores.mean(dim=0), scores.std(dim=0).clamp_min(1e-12)
    with torch.no_grad():
        model.classifier.weight.copy_(weight / std[:, None])
        model.classifier.bias.copy_(-mean / std)


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
    """One path's timed runs (one per round), the matmul rates around each, and what its last run computed."""

    seconds: list[float] = field(default_factory=list)
    matmul_around: list[float] = field(default_factory=list)
    useful_flops: float = 0.0
    executed_flops: float = 0.0
    real_tokens: int = 0
    padded_tokens: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def shares(self) -> list[float]:
        """Useful GFLOP/s of each run over the matmul rate measured around it."""
        return [self.useful_flops / s / 1e9 / mm for s, mm in zip(self.seconds, self.matmul_around, strict=True)]


def matmul_gflops(size: int, calls: int) -> float:
    """GFLOP/s of fp32 ``torch.mm`` on two ``size`` x ``size`` matrices (median of ``calls`` after a warm-up)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    out = torch.empty(size, size)
    torch.mm(a, b, out=out)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        torch.mm(a, b, out=out)
        times.append(time.perf_counter() - started)
    return 2 * size**3 / statistics.median(times) / 1e9


def run_path(
    function: Callable[[], Any], recorder: Recorder, config: Any, result: PathResult, matmul: Callable[[], float]
) -> Any:
    """Time one run of ``function`` between two matmul measurements; record what its forward calls computed."""
    before = matmul()
    recorder.clear()
    started = time.perf_counter()
    output = function()
    result.seconds.append(time.perf_counter() - started)
    result.matmul_around.append((before + matmul()) / 2)
    result.useful_flops = forward_flops(config, recorder.real)
    result.executed_flops = forward_flops(config, recorder.padded)
    result.real_tokens, result.padded_tokens = sum(recorder.real), sum(recorder.padded)
    return output


def paired_ratio(results: dict[str, PathResult], slower: str, faster: str) -> tuple[float, float, float]:
    """Median, min and max over rounds of ``slower``'s seconds over ``faster``'s in the same round."""
    ratios = [s / f for s, f in zip(results[slower].seconds, results[faster].seconds, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def verdict(value: float, goal: float) -> str:
    return "met" if value >= goal else "NOT met"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, help="number of pairs (default 2000; 48 with --quick)")
    parser.add_argument("--batch-size", type=int, default=32, help="B: batch size of every batched path (default 32)")
    parser.add_argument("--repeats", type=int, help="interleaved timing rounds; medians are reported (default 3)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--vocab-size", type=int, default=30000, help="WordPiece vocabulary asked for (default 30000)")
    parser.add_argument("--int8", action="store_true", help="also time our path with dynamic int8 Linear layers")
    parser.add_argument("--quick", action="store_true", help="tiny model, few items, one round: a smoke test")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.items = args.items or (48 if args.quick else 2000)
    args.repeats = args.repeats or (1 if args.quick else 3)
    if args.items < 1 or args.repeats < 1 or args.batch_size < 1:
        parser.error("--items, --repeats and --batch-size must be at least 1")
    return args


def measure(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Build the model and inputs, run every path ``args.repeats`` times interleaved, return the raw results."""
    from datasets import Dataset
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

    path = build_model(workdir / "model", args.quick, args.vocab_size)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    pairs = make_pairs(tokenizer, args.items, args.seed)
    firsts, seconds = [p[FIRST] for p in pairs], [p[SECOND] for p in pairs]
    lengths = [len(ids) for ids in tokenizer(firsts, seconds)["input_ids"]]
    spread_head(model, tokenizer, pairs[:256], args.seed)
    recorder = Recorder()
    model.register_forward_pre_hook(recorder.hook, with_kwargs=True)

    pipe = transformers.pipeline("text-classification", model=model, tokenizer=tokenizer, device="cpu")
    pipe_inputs = [{"text": a, "text_pair": b} for a, b in zip(firsts, seconds, strict=True)]
    tokenised = Dataset.from_dict({FIRST: firsts, SECOND: seconds}).map(
        lambda batch: tokenizer(batch[FIRST], batch[SECOND], truncation=True, max_length=128),
        batched=True,
        remove_columns=[FIRST, SECOND],
    )
    trainer = Trainer(
        model=model,
        args=TrainingArguments(
            output_dir=str(workdir / "trainer"),
            per_device_eval_batch_size=args.batch_size,
            report_to="none",
            disable_tqdm=True,
            use_cpu=True,
        ),
        processing_class=tokenizer,
    )
    batch = args.batch_size
    paths: dict[str, Callable[[Sequence[int]], Any]] = {
        "ours": lambda rows: predict_logits(model, tokenizer, TASK, [pairs[i] for i in rows], batch_size=batch),
        "ours_own_modules": lambda rows: predict_logits(
            model, tokenizer, TASK, [pairs[i] for i in rows], batch_size=batch, cpu_fusion=False
        ),
        "pipeline": lambda rows: pipe([pipe_inputs[i] for i in rows]),
        "pipeline_batched": lambda rows: pipe([pipe_inputs[i] for i in rows], batch_size=batch),
        "trainer": lambda rows: trainer.predict(tokenised.select(rows)).predictions,
    }
    if args.int8:
        quantised = quantize_dynamic_int8(model)
        quantised.register_forward_pre_hook(recorder.hook, with_kwargs=True)
        paths["int8"] = lambda rows: predict_logits(quantised, tokenizer, TASK, [pairs[i] for i in rows], batch)
    everything = range(len(pairs))
    for function in paths.values():  # warm-up on a few items: lazy imports, allocator, kernels
        function(range(min(len(pairs), 2 * batch)))

    size = 512 if args.quick else 2048
    calls = 3 if args.quick else 5
    results = {name: PathResult() for name in paths}
    outputs: dict[str, Any] = {}
    for round_number in range(1, args.repeats + 1):  # interleaved, so that every path meets the same machine load
        for name, function in paths.items():
            outputs[name] = run_path(
                lambda function=function: function(everything),
                recorder,
                model.config,
                results[name],
                lambda: matmul_gflops(size, calls),
            )
            # Progress on stderr, so that a long run interrupted on a busy machine still leaves its figures.
            print(f"round {round_number}/{args.repeats} {LABELS[name]}: {results[name].seconds[-1]:.2f} s, "
                  f"matmul around it {results[name].matmul_around[-1]:.1f} GFLOP/s, "
                  f"load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)  # fmt: skip
    return {"model": model, "tokenizer": tokenizer, "lengths": lengths, "results": results, "outputs": outputs,
            "matmul_size": size}  # fmt: skip


def agreement_with_ours(outputs: dict[str, Any], config: Any) -> dict[str, float]:
    """Share of items where each path's predicted class equals ours, and the largest logit differences."""
    ours = outputs["ours"].argmax(-1)
    found: dict[str, float] = {}
    for name in ("pipeline", "pipeline_batched"):
        labels = np.array([config.label2id[row["label"]] for row in outputs[name]])
        found[name] = float((labels == ours).mean())
    # The paths that return logits: same class, and the largest logit difference.
    for name, key in (("trainer", "trainer"), ("ours_own_modules", "own_modules"), ("int8", "int8")):
        if name in outputs:
            logits = np.asarray(outputs[name])
            found[key] = float((logits.argmax(-1) == ours).mean())
            found[f"{key}_max_abs"] = float(np.abs(logits - outputs["ours"]).max())
    return found


def report(args: argparse.Namespace, measured: dict[str, Any]) -> dict[str, Any]:
    """Print the table, the goals and the agreement; return the same figures as a dict."""
    model, tokenizer, lengths = measured["model"], measured["tokenizer"], measured["lengths"]
    results: dict[str, PathResult] = measured["results"]
    config, items = model.config, args.items
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    params = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"model: {'tiny' if args.quick else 'BERT-base-size'} BERT classifier, random weights, {params:.1f}M parameters "
          f"({config.num_hidden_layers} layers, hidden {config.hidden_size}, {config.num_attention_heads} heads, "
          f"intermediate {config.intermediate_size}), vocab {len(tokenizer)} (WordPiece on the sample, "
          f"{args.vocab_size} asked), {config.num_labels} labels")  # fmt: skip
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch threads "
          f"{torch.get_num_threads()}, load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"torch {torch.__version__}, transformers {transformers.__version__}")  # fmt: skip
    p = np.percentile(lengths, [5, 25, 50, 75, 95, 100])
    print(f"inputs: {items} {TASK.name} pairs; tokens per pair (specials included): mean {np.mean(lengths):.1f}, "
          f"p5 {p[0]:.0f}, p25 {p[1]:.0f}, p50 {p[2]:.0f}, p75 {p[3]:.0f}, p95 {p[4]:.0f}, max {p[5]:.0f}; "
          f"B = {args.batch_size}; median of {args.repeats} interleaved rounds (spread = min-max)")  # fmt: skip
    print(f"{'path':<38}{'seconds':>9}{'spread':>15}{'items/s':>9}{'padding':>9}"
          f"{'useful GF/s':>13}{'exec GF/s':>11}{'useful %mm':>12}{'exec %mm':>10}")  # fmt: skip
    table: dict[str, dict[str, float]] = {}
    for name, result in results.items():
        seconds = result.median
        share = statistics.median(result.shares())
        useful, executed = result.useful_flops / seconds / 1e9, result.executed_flops / seconds / 1e9
        padding = 1 - result.real_tokens / max(result.padded_tokens, 1)
        table[name] = {"seconds": seconds, "items_per_second": items / seconds, "useful_gflops": useful,
                       "executed_gflops": executed, "padding": padding, "matmul_share": share,
                       "executed_matmul_share": share * result.executed_flops / result.useful_flops}  # fmt: skip
        print(f"{LABELS[name]:<38}{seconds:>9.2f}{f'{min(result.seconds):.2f}-{max(result.seconds):.2f}':>15}"
              f"{items / seconds:>9.1f}{padding:>8.1%}{useful:>13.1f}{executed:>11.1f}"
              f"{share:>11.1%}{table[name]['executed_matmul_share']:>10.1%}")  # fmt: skip
    rates = [mm for result in results.values() for mm in result.matmul_around]
    matmul_rate = statistics.median(rates)
    size = measured["matmul_size"]
    print(f"{f'matmul: fp32 torch.mm {size}x{size}':<38}{'':>9}{'':>13}{'':>9}{'':>9}{matmul_rate:>13.1f}{'':>11}"
          f"{'100.0%':>12}   (spread {min(rates):.1f}-{max(rates):.1f} GFLOP/s over the runs)")  # fmt: skip

    vs_pipeline = paired_ratio(results, "pipeline", "ours")
    vs_batched = paired_ratio(results, "pipeline_batched", "ours")
    vs_trainer = paired_ratio(results, "trainer", "ours")
    share = table["ours"]["matmul_share"]
    print("goals (ratios: median over rounds of the same round's seconds, min-max in brackets):")
    print(f"  ours vs pipeline (default batching): {vs_pipeline[0]:.2f}x [{vs_pipeline[1]:.2f}-{vs_pipeline[2]:.2f}]"
          f"  (goal >= {GOALS['pipeline']}x: {verdict(vs_pipeline[0], GOALS['pipeline'])})")  # fmt: skip
    print(f"  ours vs pipeline, batch_size=B:      {vs_batched[0]:.2f}x [{vs_batched[1]:.2f}-{vs_batched[2]:.2f}]"
          f"  (same goal: {verdict(vs_batched[0], GOALS['pipeline'])})")  # fmt: skip
    print(f"  ours vs Trainer.predict:             {vs_trainer[0]:.2f}x [{vs_trainer[1]:.2f}-{vs_trainer[2]:.2f}]"
          f"  (goal >= {GOALS['trainer']}x: {verdict(vs_trainer[0], GOALS['trainer'])})")  # fmt: skip
    print(f"  ours, share of the matmul rate:      {share:.1%} useful, {table['ours']['executed_matmul_share']:.1%} "
          f"executed  (goal >= {GOALS['matmul_share']:.0%} useful: {verdict(share, GOALS['matmul_share'])})")  # fmt: skip

    agreement = agreement_with_ours(measured["outputs"], config)
    classes = np.bincount(measured["outputs"]["ours"].argmax(-1), minlength=config.num_labels) / items
    print(f"agreement with ours: pipeline labels {agreement['pipeline']:.1%} (batched {agreement['pipeline_batched']:.1%}), "
          f"Trainer.predict labels {agreement['trainer']:.1%} (max |logit diff| {agreement['trainer_max_abs']:.2e}); "
          f"our predicted classes: {', '.join(f'{c:.0%}' for c in classes)}")  # fmt: skip
    fusion = paired_ratio(results, "ours_own_modules", "ours")
    tokens = int(sum(lengths))
    used = cpu_fusion_applies("cpu", tokens) and fused_view(model) is not None
    print(f"CPU fusion (ours vs ours, own modules): {fusion[0]:.3f}x [{fusion[1]:.3f}-{fusion[2]:.3f}], same predicted "
          f"class on {agreement['own_modules']:.1%} of items (max |logit diff| {agreement['own_modules_max_abs']:.2e}); "
          f"the fused view {'was' if used else 'was NOT'} used ({tokens:,} tokens in the call)")  # fmt: skip
    if "int8" in table:
        speed = paired_ratio(results, "ours", "int8")[0]
        print(f"int8 vs fp32 (ours): {speed:.2f}x the speed, same predicted class on {agreement['int8']:.1%} of items "
              f"(max |logit diff| {agreement['int8_max_abs']:.3f}): on any labels, accuracy can move by at most "
              f"{1 - agreement['int8']:.1%} (random weights: measure a trained model on its test set)")  # fmt: skip
    return {"table": table, "matmul_gflops": matmul_rate, "vs_pipeline": vs_pipeline[0],
            "vs_pipeline_batched": vs_batched[0], "vs_trainer": vs_trainer[0], "matmul_share": share,
            "vs_own_modules": fusion[0], "fused": used,
            "agreement": agreement, "lengths": lengths}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        measured = measure(args, Path(tmp))
    return report(args, measured)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        main()
