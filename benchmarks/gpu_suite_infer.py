"""The inference sections of ``benchmarks/gpu_suite.py``: the evaluator, LLM log-likelihood and generation,
GMET. They reuse the CPU benchmarks' own builders and references by import (``eval_throughput``,
``llm_throughput``, ``gmet_speed``), so that the GPU and CPU figures are measured the same way.
"""

from __future__ import annotations

import copy
import statistics
from pathlib import Path

import numpy as np
import torch
import transformers
from gpu_suite_common import Section, Settings, free_memory, gib, matmul_tflops, peak_gib, reset_peak, timed

LLM_SHAPES = {  # Llama-3.2-1B's and Llama-2-7B's shapes, their vocabularies included
    "1b": {"hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 8192, "max_position_embeddings": 2048, "vocab_size": 128_256},
    "7b": {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
           "intermediate_size": 11008, "max_position_embeddings": 2048, "vocab_size": 32_000},
}  # fmt: skip
LLM_ITEMS = {"1b": 100, "7b": 50}  # four requests each
LL_RELATIVE_TOLERANCE = 0.01  # bf16 vs fp32 log-likelihood, relative to the fp32 value
LL_PARITY_TOLERANCE = 0.05  # ours vs lm-eval, both bf16 (batch composition moves bf16 results a little)


def section_evaluator(settings: Settings) -> Section:
    """Our batched predict vs pipeline and Trainer.predict, bf16, and the share of the measured matmul rate."""
    import eval_throughput as ev
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

    from nlue.training.predict import predict_logits

    section = Section()
    items, batch = (48, 16) if settings.smoke else (4000, 64)
    path = ev.build_model(settings.work / "evaluator", settings.smoke, 30000)
    model = AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32).to(settings.device).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    pairs = ev.make_pairs(tokenizer, items, settings.seed)
    ev.spread_head(model, tokenizer, pairs[:256], settings.seed)
    half = copy.deepcopy(model).to(settings.half_dtype)  # the references run on half-precision weights
    recorder = ev.Recorder()
    for m in (model, half):
        m.register_forward_pre_hook(recorder.hook, with_kwargs=True)
    firsts, seconds = [p[ev.FIRST] for p in pairs], [p[ev.SECOND] for p in pairs]
    pipe = transformers.pipeline("text-classification", model=half, tokenizer=tokenizer, device=settings.device)
    pipe_inputs = [{"text": a, "text_pair": b} for a, b in zip(firsts, seconds, strict=True)]
    from datasets import Dataset

    encoded = Dataset.from_dict({ev.FIRST: firsts, ev.SECOND: seconds}).map(
        lambda b: tokenizer(b[ev.FIRST], b[ev.SECOND], truncation=True, max_length=128),
        batched=True, remove_columns=[ev.FIRST, ev.SECOND],
    )  # fmt: skip
    trainer = Trainer(model=half, processing_class=tokenizer, args=TrainingArguments(
        output_dir=str(settings.work / "evaluator-trainer"), per_device_eval_batch_size=batch, report_to="none",
        disable_tqdm=True, use_cpu=not settings.cuda))  # fmt: skip

    def rows_of(rows: range) -> list[dict[str, str]]:
        return [pairs[i] for i in rows]

    paths = {
        "ours": lambda rows: predict_logits(model, tokenizer, ev.TASK, rows_of(rows), batch_size=batch),
        "ours_half_weights": lambda rows: predict_logits(half, tokenizer, ev.TASK, rows_of(rows), batch_size=batch),
        "pipeline": lambda rows: pipe([pipe_inputs[i] for i in rows]),
        "pipeline_batched": lambda rows: pipe([pipe_inputs[i] for i in rows], batch_size=batch),
        "trainer": lambda rows: trainer.predict(encoded.select(rows)).predictions,
    }
    labels = {"ours": f"ours: predict_logits (fp32 weights{', bf16 autocast' if settings.cuda else ''})",
              "ours_half_weights": f"ours on {settings.half} weights", "pipeline": "pipeline, one item at a time",
              "pipeline_batched": f"pipeline, batch_size={batch}", "trainer": f"Trainer.predict, batch {batch}"}  # fmt: skip
    size = 512 if settings.smoke else 8192
    for function in paths.values():  # warm-up: kernels, allocator, lazy imports
        function(range(min(items, 2 * batch)))
    rates = [matmul_tflops(settings.device, settings.half_dtype, size)]
    seconds_of, useful, outputs = {}, {}, {}
    for name, function in paths.items():
        recorder.clear()
        seconds_of[name], outputs[name] = timed(lambda f=function: f(range(items)))
        useful[name] = ev.forward_flops(model.config, recorder.real)
        rates.append(matmul_tflops(settings.device, settings.half_dtype, size))
    matmul = statistics.median(rates)
    section.figures["matmul_tflops"] = {"median": matmul, "all": rates, "size": size, "dtype": settings.half}
    ours = np.asarray(outputs["ours"]).argmax(-1)
    for name in paths:
        rate = items / seconds_of[name]
        tflops = useful[name] / seconds_of[name] / 1e12
        section.figures[name] = {"seconds": seconds_of[name], "items_per_second": rate, "useful_tflops": tflops,
                                 "matmul_share": tflops / matmul}  # fmt: skip
        reference = items / seconds_of["ours"] if name != "ours" else None
        section.row(f"evaluator: {labels[name]}, ex/s", rate, "ex/s", reference, "ours" if reference else "",
                    f"{tflops / matmul:.1%} of the measured {settings.half} matmul rate ({matmul:.1f} TFLOP/s)")  # fmt: skip
        if name.startswith("pipeline"):
            got = np.array([model.config.label2id[row["label"]] for row in outputs[name]])
        else:
            got = np.asarray(outputs[name]).argmax(-1)
        agree = float((got == ours).mean())
        section.figures[name]["agreement_with_ours"] = agree
        if name != "ours":
            section.check(f"evaluator: {name} predicts ours' classes", agree >= 0.95, f"{agree:.1%} of {items} items")
    section.figures["ours_vs"] = {name: seconds_of[name] / seconds_of["ours"] for name in paths if name != "ours"}
    return section


def build_causal(settings: Settings, name: str) -> Path:
    """A Llama-shaped causal LM with random weights, made on the device in the half precision (tiny in smoke)."""
    from transformers import AutoModelForCausalLM

    from nlue.lm.tiny import save_tiny_causal_lm, tiny_causal_config, train_causal_tokenizer

    out = settings.work / "llm" / name
    if settings.smoke:
        return save_tiny_causal_lm(out, "llama", seed=settings.seed)
    tokenizer = train_causal_tokenizer("llama")
    shape = {**LLM_SHAPES[name], "vocab_size": max(LLM_SHAPES[name]["vocab_size"], len(tokenizer))}
    config = tiny_causal_config("llama", tokenizer, **shape)
    torch.manual_seed(settings.seed)
    with torch.device(settings.device):  # 7B parameters: seconds on a GPU, many minutes on a CPU
        model = AutoModelForCausalLM.from_config(config, dtype=settings.half_dtype)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    del model
    free_memory()
    return out


def section_llm(settings: Settings, names: list[str]) -> Section:
    """Log-likelihood and generation of ours vs lm-eval's hf backend; bf16 log-likelihoods against fp32."""
    import llm_throughput as lt
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from nlue.lm.base import GenerationRequest
    from nlue.lm.local import LocalCausalLM

    section = Section()
    dtype = "bfloat16" if settings.cuda else "float32"
    for name in names:
        path = build_causal(settings, name)
        items = lt.make_items(6 if settings.smoke else LLM_ITEMS[name])
        requests = lt.loglikelihood_requests(items)
        prompts = [r.context for r in requests[:: len(lt.LETTERS)]][: 4 if settings.smoke else 16]
        new_tokens = 8 if settings.smoke else 32
        batch = 16
        reset_peak()
        ours = LocalCausalLM(path, device=settings.device, dtype=dtype, batch_size=batch, show_progress=False)
        ours.loglikelihood(requests[:batch])  # warm-up
        ll_seconds, ll_ours = timed(lambda ours=ours, r=requests: ours.loglikelihood(r))
        generation = [GenerationRequest(prompt=p, max_new_tokens=new_tokens) for p in prompts]
        ours.generate(generation[:2])
        gen_seconds, made = timed(lambda ours=ours, g=generation: ours.generate(g))
        ours_tokens = sum(g.completion_tokens or 0 for g in made)
        tokenizer = ours.tokenizer
        peak = peak_gib()
        del ours
        free_memory()
        reference = HFLM(pretrained=str(path), device=settings.device, batch_size=batch, dtype=dtype)
        lt.lm_eval_loglikelihood(reference, requests[:batch])
        ref_seconds, ll_ref = timed(lambda ref=reference, r=requests: lt.lm_eval_loglikelihood(ref, r))
        until = {"until": ["\n\n\n\n"], "max_gen_toks": new_tokens, "do_sample": False}
        instances = [Instance("generate_until", {}, (p, until), i) for i, p in enumerate(prompts)]
        reference.generate_until(instances[:2], disable_tqdm=True)
        ref_gen_seconds, texts = timed(lambda r=reference, i=instances: r.generate_until(i, disable_tqdm=True))
        ref_tokens = sum(len(tokenizer.encode(t, add_special_tokens=False)) for t in texts)  # re-encoded: approximate
        del reference
        free_memory()
        fp32 = LocalCausalLM(path, device=settings.device, dtype="float32", batch_size=batch, show_progress=False)
        ll_fp32 = fp32.loglikelihood(requests)
        del fp32
        free_memory()
        n = len(requests)
        parity = lt.parity(ll_ours, ll_ref)
        relative = max(
            abs(a.logprob - b.logprob) / max(abs(b.logprob), 1e-6) for a, b in zip(ll_ours, ll_fp32, strict=True)
        )
        section.figures[name] = {
            "requests": n, "loglikelihood_seconds": {"ours": ll_seconds, "lm_eval": ref_seconds},
            "generation": {"prompts": len(prompts), "max_new_tokens": new_tokens, "ours_tokens": ours_tokens,
                           "lm_eval_tokens_reencoded": ref_tokens, "ours_seconds": gen_seconds,
                           "lm_eval_seconds": ref_gen_seconds,
                           "same_text": sum(g.text == t for g, t in zip(made, texts, strict=True))},
            "parity_with_lm_eval": parity, "max_relative_diff_vs_fp32": relative, "peak_gib_ours": peak,
        }  # fmt: skip
        section.row(f"LLM {name} ({dtype}): log-likelihood requests/s", n / ll_seconds, "req/s", n / ref_seconds,
                    "lm-eval hf", f"{n} requests, batch {batch}; peak {gib(peak)}")  # fmt: skip
        section.row(f"LLM {name} ({dtype}): generation tokens/s", ours_tokens / gen_seconds, "tok/s",
                    ref_tokens / ref_gen_seconds, "lm-eval hf generate_until",
                    f"{len(prompts)} prompts x {new_tokens} new tokens, greedy")  # fmt: skip
        section.row(f"LLM {name}: log-likelihood, {dtype} vs fp32, max relative diff", relative, "",
                    note=f"tolerance {LL_RELATIVE_TOLERANCE}")  # fmt: skip
        section.check(f"LLM {name}: {dtype} log-likelihoods within {LL_RELATIVE_TOLERANCE:.0%} of fp32",
                      relative <= LL_RELATIVE_TOLERANCE, f"max relative diff {relative:.2e}")  # fmt: skip
        tolerance = LL_PARITY_TOLERANCE if settings.cuda else lt.GOALS["parity"]
        section.check(f"LLM {name}: ours matches lm-eval hf on the same requests",
                      parity["max_abs_diff"] <= tolerance, f"max |diff| {parity['max_abs_diff']:.2e} (tolerance "
                      f"{tolerance}), is_greedy agrees {parity['greedy_agree']}/{parity['requests']}")  # fmt: skip
        section.check(f"LLM {name}: generation made tokens", ours_tokens > 0, f"{ours_tokens} tokens")
    return section


def section_gmet(settings: Settings) -> Section:
    """GMET full mode (top-10 + greedy completions, PLL) against the one-item-at-a-time fill-mask pipeline."""
    import gmet_speed as gs

    from nlue.gmet.items import load_items
    from nlue.lm.masked.pieces import masked_text
    from nlue.lm.masked.predictor import MaskedLMPredictor

    section = Section()
    n = 12 if settings.smoke else 300
    items = gs.cycle_items(load_items(None), n)
    path = gs.build_model(settings.work / "gmet", "bert", "tiny" if settings.smoke else "base")
    predictor = MaskedLMPredictor.from_pretrained(str(path), device=settings.device, batch_size=64, show_progress=False)
    pipe = transformers.pipeline("fill-mask", model=predictor.model, tokenizer=predictor.tokenizer,
                                 device=settings.device, top_k=10)  # fmt: skip
    texts = [masked_text(item.sentence, predictor.tokenizer) for item in items]
    predictor.answer_candidates = False
    pipe(texts[0])
    predictor.predict(items[:4])
    before = predictor.forward_sequences
    ours_seconds, predictions = timed(lambda: predictor.predict(items))
    passes = (predictor.forward_sequences - before) / n
    pipe_seconds, _ = timed(lambda: [pipe(text) for text in texts])
    dtype = str(next(predictor.model.parameters()).dtype).removeprefix("torch.")
    section.figures.update({"items": n, "ours_seconds": ours_seconds, "pipeline_seconds": pipe_seconds,
                            "passes_per_item": passes, "dtype": dtype})  # fmt: skip
    section.row(f"GMET full mode ({dtype}), items/s", n / ours_seconds, "items/s", n / pipe_seconds,
                'pipeline("fill-mask") loop', f"{passes:.2f} forward sequences per item")  # fmt: skip
    section.check("GMET: every item got a top-10", all(len(p.top_k) > 0 for p in predictions), f"{n} items")
    return section
