"""How fast is the GMET evaluator, against a one-item-at-a-time ``pipeline("fill-mask")`` loop?

Same model, same items, one model load each. Three timings:

* ``pipeline`` - ``transformers.pipeline("fill-mask", top_k=10)`` called once per item with
  the sentence's ``[MASK]`` mapped to the tokenizer's mask token: the loop people write.
  It returns the top-10 single tokens of one forward pass per item.
* ``ours, single-piece`` - our evaluator doing the pipeline's job (``max_pieces=1``, no
  answer candidates): top-10 single-token whole words, batched across items.
* ``ours, full`` - the evaluator as `nlue gmet` runs it: answers + top-10 + greedy
  completions up to 3 pieces, all ranked by PLL-word-l2r (several passes per item).

By default the model is built here with random weights and no download: ``--size tiny``
(4 layers, hidden 32) or ``--size base`` (12 layers, hidden 768, BERT-base shape, with
the small sample-trained vocabulary). ``--model`` takes any fill-mask checkpoint.

Run: ``python benchmarks/gmet_speed.py [--size tiny|base] [--family bert|roberta] [--items 150]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import transformers

from nlue.gmet.items import GmetItem, load_items
from nlue.gmet.mlm import MaskedLMPredictor
from nlue.gmet.mlm_pieces import masked_text, pick_device
from nlue.tiny_models import tiny_config, train_tokenizer


def build_model(out: Path, family: str, size: str) -> Path:
    from transformers import AutoModelForMaskedLM

    tokenizer = train_tokenizer(family)  # type: ignore[arg-type]
    overrides = {}
    if size == "base":
        overrides = {
            "hidden_size": 768,
            "num_hidden_layers": 12,
            "num_attention_heads": 12,
            "intermediate_size": 3072,
            "max_position_embeddings": 514,
        }
    config = tiny_config(family, len(tokenizer), tokenizer)  # type: ignore[arg-type]
    for key, value in overrides.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    model = AutoModelForMaskedLM.from_config(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def cycle_items(items: list[GmetItem], n: int) -> list[GmetItem]:
    """``n`` items: the sample's, repeated with fresh ids when more are asked for."""
    return [
        GmetItem(i, items[i % len(items)].sentence, items[i % len(items)].category, items[i % len(items)].theme,
                 items[i % len(items)].answers)
        for i in range(n)
    ]  # fmt: skip


def timed(function: Callable[[], object]) -> float:
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    started = time.perf_counter()
    function()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="fill-mask checkpoint (default: a model built here with random weights)")
    parser.add_argument("--size", choices=("tiny", "base"), default="tiny", help="size of the built model")
    parser.add_argument("--family", choices=("bert", "roberta"), default="bert", help="family of the built model")
    parser.add_argument("--items", type=int, default=150, help="items to score (the 150 sample items, cycled)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--repeats", type=int, default=3, help="timing rounds; the median is reported (default: 3)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    items = cycle_items(load_items(None), args.items)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.model or str(build_model(Path(tmp) / "model", args.family, args.size))
        predictor = MaskedLMPredictor.from_pretrained(
            path, device=device, batch_size=args.batch_size, show_progress=False
        )
        model, tokenizer = predictor.model, predictor.tokenizer
        params = sum(p.numel() for p in model.parameters()) / 1e6
        pipe = transformers.pipeline("fill-mask", model=model, tokenizer=tokenizer, device=device, top_k=10)
        texts = [masked_text(item.sentence, tokenizer) for item in items]

        def pipeline_loop() -> None:
            for text in texts:
                pipe(text)

        def ours(max_pieces: int, answers: bool) -> Callable[[], object]:
            def go() -> object:
                predictor.max_pieces, predictor.answer_candidates = max_pieces, answers
                return predictor.predict(items)

            return go

        # Warm up every path once (lazy imports, kernels, allocator).
        pipe(texts[0])
        predictor.max_pieces, predictor.answer_candidates = 3, True
        predictor.predict(items[:4])
        rounds: dict[str, list[float]] = {"pipe": [], "single": [], "full": []}
        full_sequences = 0
        for _ in range(args.repeats):  # interleaved, so that every method meets the same machine load
            rounds["pipe"].append(timed(pipeline_loop))
            rounds["single"].append(timed(ours(1, False)))
            before = predictor.forward_sequences
            rounds["full"].append(timed(ours(3, True)))
            full_sequences = predictor.forward_sequences - before
        t_pipe, t_single, t_full = (statistics.median(rounds[k]) for k in ("pipe", "single", "full"))
    n = len(items)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"model: {args.model or f'{args.size} {args.family} (random weights)'}, {params:.1f}M parameters, "
          f"vocab {len(tokenizer)}, device {device}, torch threads {torch.get_num_threads()}")  # fmt: skip
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average {load:.2f}; "
          f"torch {torch.__version__}, transformers {transformers.__version__}")  # fmt: skip
    print(f"median of {args.repeats} interleaved rounds; items: {n}; batch size {args.batch_size}; full mode ran {full_sequences} sequences "
          f"({full_sequences / n:.1f} per item) against the pipeline's 1 per item")  # fmt: skip
    print(f"{'method':<44}{'seconds':>9}{'items/s':>11}{'vs pipeline':>13}")
    for label, seconds in (
        ('pipeline("fill-mask"), one item at a time', t_pipe),
        ("ours, single-piece top-10 (same job)", t_single),
        ("ours, full (answers + greedy, PLL ranking)", t_full),
    ):
        print(f"{label:<44}{seconds:>9.3f}{n / seconds:>11.1f}{t_pipe / seconds:>12.1f}x")


if __name__ == "__main__":
    main()
