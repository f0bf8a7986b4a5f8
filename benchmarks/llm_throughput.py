"""How fast is the language-model engine, against the tools people would otherwise use?

Three figures, each printed beside its reference and their ratio:

1. **Log-likelihood requests/s** of :class:`nlue.lm.local.LocalCausalLM` against
   lm-evaluation-harness's ``hf`` backend (``lm_eval.models.huggingface.HFLM``): same local
   model folder, same requests, same batch size, CPU, float32. Every per-request
   log-likelihood and ``is_greedy`` of the two is compared; the largest difference is printed
   (goal: within 1e-4). Goal (issue 21): ours >= 5x lm-eval's on the exam items with the
   exam's instruction first, as the exported lm-eval task has them. Tokens computed per item
   are printed beside the ratio: lm-eval runs ``context + continuation`` per option; ours runs
   the instruction once per call (:mod:`nlue.lm.prefix_cache`) and each item's own tokens once.
2. **Generation tokens/s** of ``LocalCausalLM.generate`` (batched greedy, length-sorted,
   left-padded) against ``pipeline("text-generation")`` called one prompt at a time, greedy,
   on the same prompts with the same ``max_new_tokens``; the texts are compared too.
3. **HTTP requests/s** of :class:`nlue.lm.http.OpenAICompatibleLM` at concurrency 1 and 10
   against ``transformers serve`` on 127.0.0.1 (started and stopped here, with a time
   limit), with a plain ``openai`` client loop, one request at a time, as the reference;
   each path runs twice in mirrored order after a warm-up. Plain ``transformers serve``
   answers one request at a time, so concurrency cannot raise its rate;
   ``--serve-continuous-batching`` starts it with ``--continuous-batching``, which can.

Requests: ``--items`` four-option items from the Nepali sample exam (its test and demo
items). Past the 80 written items the options are rotated (A-D take the next option's text,
the key follows), so every item is a distinct question. An item's context is its exam body
(subject, level, question, options A-D, as the exam prompt lays it out) ending with the
answer-text cue; its four continuations are " " + each option's text, several tokens long:
lm-eval runs the question once per option there (it shares work only for one-token
continuations), ours once per item. ``--continuations letters`` scores " A".." D" after the
answer-key cue instead (our MCQ log-likelihood mode); where a letter is one token, lm-eval's
own one-token cache already runs each question once (the sample-trained vocabulary splits
" A" in two). The exam's system instruction comes first, as in the exported lm-eval task
(``--no-instruction`` leaves it out: contexts about 4x shorter, nothing shared across items).

Model: GPT-2-base shape (12 layers, hidden 768, 12 heads, inner 3072, 1024 positions) with
random weights and the small byte-level BPE vocabulary trained on the sample (about 1.6K
entries); ``--quick`` uses the 2-layer tiny model and a few items (the smoke test). The HTTP
part serves the tiny Llama-style model with a chat template in every mode.

Run: ``python benchmarks/llm_throughput.py [--items 200] [--batch-size 16] [--skip-http] [--quick]``
(``--serve-continuous-batching``, ``--continuations letters``, ``--threads N``: see ``--help``).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import platform
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import transformers

from nlue.data.sample import sample_split
from nlue.evals.mcq.prompts import item_body, prompt_spec
from nlue.lm.base import GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.local import LocalCausalLM
from nlue.lm.serve import transformers_serve
from nlue.lm.tiny import save_tiny_causal_lm
from nlue.registry.benchmarks import MCQ
from nlue.registry.kinds.mcq_text import KEY_LABEL, TEXT_LABEL
from nlue.registry.kinds.multiple_choice import item_options, key_letter

LETTERS = ("A", "B", "C", "D")
BASE_SHAPE = {"n_layer": 12, "n_embd": 768, "n_head": 12, "n_inner": 3072, "n_positions": 1024}
GOALS = {"loglikelihood": 5.0, "parity": 1e-4}
HTTP_NEW_TOKENS = 16
WARM_UP_REQUESTS = 5  # the first request alone left the next round twice as slow


def build_model(out: Path, quick: bool) -> Path:
    """A GPT-2 causal LM with random weights: base shape, or the 2-layer tiny one for ``quick``."""
    # the tiny one gets the base window too: the exam's instruction would not fit its 256 positions
    return save_tiny_causal_lm(out, "gpt2", **({"n_positions": BASE_SHAPE["n_positions"]} if quick else BASE_SHAPE))


def make_items(n: int) -> list[dict[str, Any]]:
    """``n`` distinct exam items: the Nepali sample's own, then the same with their options rotated."""
    exam = next(task for task in MCQ.tasks if task.language == "ne")  # the exam in the registry, by its language
    written = [item for split in exam.splits for item in sample_split(exam, split)]
    items = []
    for i in range(n):
        item, turn = written[i % len(written)], (i // len(written)) % len(LETTERS)
        texts = [item_options(item)[letter] for letter in LETTERS]
        rotated = dict(zip(LETTERS, texts[turn:] + texts[:turn], strict=True))
        key = LETTERS[(LETTERS.index(key_letter(item["correct_key"])) - turn) % len(LETTERS)]
        items.append({**item, "id": f"{item['id']}-r{turn}", "options": rotated, "correct_key": key})
    return items


def loglikelihood_requests(
    items: Sequence[dict[str, Any]], language: str = "ne", continuations: str = "options", instruction: bool = False
) -> list[LoglikelihoodRequest]:
    """Four requests per item, one per option (see the module docstring for the two continuation kinds)."""
    cue = TEXT_LABEL if continuations == "options" else KEY_LABEL
    head = f"{prompt_spec(language).instruction}\n\n" if instruction else ""
    requests = []
    for item in items:
        context = f"{head}{item_body(item, language)}\n{cue}"
        options = item_options(item)
        for letter in LETTERS:
            requests.append(
                LoglikelihoodRequest(context, f" {options[letter] if continuations == 'options' else letter}")
            )
    return requests


def timed(function: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, value


def lm_eval_loglikelihood(model: Any, requests: Sequence[LoglikelihoodRequest]) -> list[tuple[float, bool]]:
    from lm_eval.api.instance import Instance

    instances = [Instance("loglikelihood", {}, (r.context, r.continuation), i) for i, r in enumerate(requests)]
    return model.loglikelihood(instances, disable_tqdm=True)


def parity(ours: Sequence[Loglikelihood], reference: Sequence[tuple[float, bool]]) -> dict[str, Any]:
    """Largest |log-likelihood difference| and how many ``is_greedy`` verdicts agree."""
    if len(ours) != len(reference):
        raise ValueError(f"{len(ours)} answers of ours against {len(reference)} of the reference")
    diffs = [abs(mine.logprob - float(logprob)) for mine, (logprob, _) in zip(ours, reference, strict=True)]
    greedy = sum(mine.is_greedy == bool(flag) for mine, (_, flag) in zip(ours, reference, strict=True))
    worst = max(range(len(diffs)), key=diffs.__getitem__)
    return {"max_abs_diff": diffs[worst], "worst_request": worst, "greedy_agree": greedy, "requests": len(diffs)}


def slices(n: int, parts: int, step: int = 1) -> list[slice]:
    """``parts`` consecutive slices of ``range(n)`` whose bounds are multiples of ``step`` (an item's requests)."""
    units = n // step
    bounds = sorted({round(units * k / parts) * step for k in range(parts + 1)} | {n})
    return [slice(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]


def interleaved(paths: dict[str, Any], parts: Sequence[slice]) -> tuple[dict[str, float], dict[str, list[Any]]]:
    """Run every path on each slice in turn, the order flipped every slice: both meet the same machine load.

    Returns the seconds each path took in all and its answers, concatenated in slice order.
    """
    seconds = dict.fromkeys(paths, 0.0)
    answers: dict[str, list[Any]] = {name: [] for name in paths}
    for k, part in enumerate(parts):
        for name in list(paths)[:: 1 if k % 2 == 0 else -1]:
            took, got = timed(lambda f=paths[name], p=part: f(p))
            seconds[name] += took
            answers[name].extend(got)
    return seconds, answers


def bench_loglikelihood(path: Path, requests: Sequence[LoglikelihoodRequest], batch_size: int, parts: int) -> dict:
    """Both backends on ``requests`` after a warm-up, interleaved slice by slice; the parity check."""
    from lm_eval.models.huggingface import HFLM

    ours = LocalCausalLM(path, device="cpu", dtype="float32", batch_size=batch_size, show_progress=False)
    reference = HFLM(pretrained=str(path), device="cpu", batch_size=batch_size, dtype="float32")
    warm = list(requests[: 2 * batch_size])
    ours.loglikelihood(warm)
    lm_eval_loglikelihood(reference, warm)
    ours.scorer.prefixes.clear()  # the timed run computes (and counts) its instruction itself
    ours.scorer.tokens_run = ours.scorer.prefixes.tokens_run = 0
    seconds, answers = interleaved(
        {
            "ours": lambda part: ours.loglikelihood(requests[part]),
            "lm_eval": lambda part: lm_eval_loglikelihood(reference, requests[part]),
        },
        slices(len(requests), parts, len(LETTERS)),
    )
    pairs = [ours.encoder.encode(i, r) for i, r in enumerate(requests)]
    items = len(requests) / len(LETTERS)
    computed = ours.scorer.tokens_run + ours.scorer.prefixes.tokens_run  # pads not counted
    return {
        "tokens_per_item": {
            "ours": computed / items,
            "lm_eval": sum(len(p.context) + len(p.continuation) - 1 for p in pairs) / items,
        },
        "seconds": seconds,
        "parity": parity(answers["ours"], answers["lm_eval"]),
        "contexts": len({p.context for p in pairs}),
        "context_tokens": sum(len(p.context) for p in pairs) / len(pairs),
        "continuation_tokens": sum(len(p.continuation) for p in pairs) / len(pairs),
        "lm": ours,
    }


def bench_generation(lm: LocalCausalLM, prompts: Sequence[str], max_new_tokens: int) -> dict[str, Any]:
    """Batched greedy generation against a one-prompt-at-a-time text-generation pipeline, same model object."""
    pipe = transformers.pipeline("text-generation", model=lm.model, tokenizer=lm.tokenizer, device="cpu")
    options = {"max_new_tokens": max_new_tokens, "do_sample": False, "pad_token_id": lm.tokenizer.pad_token_id}
    requests = [GenerationRequest(prompt=p, max_new_tokens=max_new_tokens) for p in prompts]

    def one_at_a_time(part: slice) -> list[list[int]]:
        made = []
        for prompt in prompts[part]:
            ids = pipe(prompt, return_tensors=True, **options)[0]["generated_token_ids"]
            made.append(list(ids)[len(lm.tokenizer.encode(prompt)) :])  # the pipeline returns prompt + new tokens
        return made

    lm.generate(requests[:2])  # warm-up of both paths
    pipe(prompts[0], **options)
    seconds, answers = interleaved(
        {"ours": lambda part: lm.generate(requests[part]), "pipeline": one_at_a_time},
        slices(len(prompts), -(-len(prompts) // lm.batch_size)),  # one slice per batch of ours
    )
    ours, theirs = answers["ours"], answers["pipeline"]
    texts = [lm.tokenizer.decode(ids, skip_special_tokens=True) for ids in theirs]
    return {
        "seconds": seconds,
        "tokens": {"ours": sum(g.completion_tokens or 0 for g in ours), "pipeline": sum(map(len, theirs))},
        "same_text": sum(g.text == text for g, text in zip(ours, texts, strict=True)),
        "prompts": len(prompts),
        "batch_size": lm.batch_size,
    }


def bench_http(
    root: Path, prompts: Sequence[str], max_new_tokens: int, budget: float, continuous_batching: bool = False
) -> dict[str, Any]:
    """Requests/s at concurrency 1 and 10 against ``transformers serve``; the server is killed after ``budget`` s."""
    import openai

    from nlue.lm.http import OpenAICompatibleLM

    model = save_tiny_causal_lm(root / "serve-model", "llama")
    requests = [GenerationRequest(prompt=p, max_new_tokens=max_new_tokens) for p in prompts]
    rounds: dict[str, list[float]] = {}
    made: dict[str, int] = {}
    with transformers_serve(model, root / "serve.log", continuous_batching=continuous_batching) as (url, process):
        # A stuck server must not hold the benchmark: past the budget it is killed and every request fails.
        watchdog = threading.Timer(budget, process.kill)
        watchdog.start()
        try:
            client = openai.OpenAI(base_url=url, api_key="EMPTY", max_retries=0, timeout=60)

            def ask(prompt: str, client: Any = client) -> int:
                answer = client.chat.completions.create(
                    model=str(model), messages=[{"role": "user", "content": prompt}],
                    max_tokens=max_new_tokens, temperature=0.0, seed=42,
                )  # fmt: skip
                return answer.usage.completion_tokens if answer.usage else 0

            def ours(concurrency: int) -> int:
                lm = OpenAICompatibleLM(
                    str(model), url, concurrency=concurrency, timeout=60, max_retries=1, backoff_base=0.1,
                    show_progress=False,
                )  # fmt: skip
                return sum(g.completion_tokens or 0 for g in lm.generate(requests))

            paths = {
                "plain": lambda: sum(ask(p) for p in prompts),
                "ours_c1": lambda: ours(1),
                "ours_c10": lambda: ours(10),
            }
            # The server's first requests pay for lazy imports and kernels (with continuous batching, for starting
            # its scheduler: over a minute on a busy machine), so the warm-up may wait as long as the budget.
            patient = client.with_options(timeout=budget)
            for prompt in prompts[:WARM_UP_REQUESTS]:
                ask(f"{prompt} ", patient)
            for name in [*paths, *reversed(paths)]:  # each path twice, in mirrored order, against drifting load
                took, tokens = timed(paths[name])
                rounds.setdefault(name, []).append(took)
                made[name] = made.get(name, 0) + tokens
        finally:
            watchdog.cancel()
    seconds = {name: sum(times) for name, times in rounds.items()}
    return {"seconds": seconds, "rounds": rounds, "tokens": made, "requests": 2 * len(prompts),
            "max_new_tokens": max_new_tokens, "continuous_batching": continuous_batching}  # fmt: skip


def _row(figure: str, ours: float, reference: float, label: str, goal: str = "") -> str:
    ratio = ours / reference if reference else float("nan")
    return f"{figure:<34}{ours:>10.2f}{reference:>11.2f}  {label:<48}{ratio:>7.2f}x  {goal}"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, help="four-option items (default 200; 6 with --quick)")
    parser.add_argument("--batch-size", type=int, default=16, help="batch size of both log-likelihood backends")
    parser.add_argument("--continuations", choices=("options", "letters"), default="options")
    parser.add_argument("--language", choices=("ne", "en"), default="ne", help="language of the prompt's labels")
    parser.add_argument(
        "--no-instruction", dest="instruction", action="store_false", help="leave out the exam's system instruction"
    )
    parser.add_argument("--slices", type=int, help="log-likelihood slices timed in turn (default 8; 1 with --quick)")
    parser.add_argument("--gen-prompts", type=int, help="prompts to generate from (default 16; 4 with --quick)")
    parser.add_argument("--max-new-tokens", type=int, help="tokens generated per prompt (default 16; 8 with --quick)")
    parser.add_argument("--http-requests", type=int, help="requests per HTTP round (default 20; 6 with --quick)")
    parser.add_argument("--http-budget", type=float, default=300.0, help="seconds the HTTP rounds may take in all")
    parser.add_argument("--skip-http", action="store_true", help="leave out the transformers serve part")
    parser.add_argument(
        "--serve-continuous-batching", action="store_true", help="start transformers serve with --continuous-batching"
    )
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--quick", action="store_true", help="tiny model, few items: a smoke test")
    args = parser.parse_args(argv)
    items_n = args.items or (6 if args.quick else 200)
    gen_n = args.gen_prompts or (4 if args.quick else 16)
    new_tokens = args.max_new_tokens or (8 if args.quick else 16)
    http_n = args.http_requests or (6 if args.quick else 20)
    parts = args.slices or (1 if args.quick else 8)
    if min(items_n, gen_n, new_tokens, http_n, args.batch_size, parts) < 1:
        parser.error("--items, --gen-prompts, --max-new-tokens, --http-requests, --batch-size, --slices must be >= 1")
    if args.threads:
        torch.set_num_threads(args.threads)

    load_before, started = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3, time.monotonic()
    items = make_items(items_n)
    requests = loglikelihood_requests(items, args.language, args.continuations, args.instruction)
    prompts = [f"{item_body(item, args.language)}\n{KEY_LABEL}" for item in make_items(gen_n)]
    with tempfile.TemporaryDirectory() as tmp:
        path = build_model(Path(tmp) / "model", args.quick)
        ll = bench_loglikelihood(path, requests, args.batch_size, parts)
        lm = ll.pop("lm")
        params = sum(p.numel() for p in lm.model.parameters()) / 1e6
        gen = bench_generation(lm, prompts, new_tokens)
        http = None
        if not args.skip_http:  # distinct prompts: a request asked twice in one call is answered once
            chats = [f"{item_body(item, args.language)}\n{KEY_LABEL}" for item in make_items(http_n)]
            try:
                http = bench_http(Path(tmp), chats, HTTP_NEW_TOKENS, args.http_budget, args.serve_continuous_batching)
            except Exception as exc:  # the other figures still stand; say why this one is missing
                print(f"HTTP part failed, no HTTP figures: {type(exc).__name__}: {exc}", file=sys.stderr)

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    cfg = lm.model.config
    print(f"model: GPT-2 {'tiny' if args.quick else 'base shape'}, random weights, {params:.1f}M parameters "
          f"({cfg.n_layer} layers, hidden {cfg.n_embd}, {cfg.n_positions} positions), vocab {len(lm.tokenizer)}; "
          f"float32 on CPU, torch threads {torch.get_num_threads()}")  # fmt: skip
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average (1/5/15 min) "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} at the start, {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} at the end of {time.monotonic() - started:.0f} s; torch {torch.__version__}, "
          f"transformers {transformers.__version__}")  # fmt: skip
    print(f"log-likelihood: {items_n} items, {len(requests)} requests ({args.continuations}, {args.language} labels"
          f"{', with instruction' if args.instruction else ''}), {ll['contexts']} distinct contexts, mean "
          f"{ll['context_tokens']:.0f} context + {ll['continuation_tokens']:.1f} continuation tokens; batch size "
          f"{args.batch_size}; timed in {parts} slice(s), the two backends in turn: ours {ll['seconds']['ours']:.1f} s, "
          f"lm-eval {ll['seconds']['lm_eval']:.1f} s")  # fmt: skip
    print(f"{'figure':<34}{'ours':>10}{'reference':>11}  {'reference is':<48}{'ratio':>8}  goal")
    n = len(requests)
    ll_rate = {k: n / v for k, v in ll["seconds"].items()}
    speedup = ll_rate["ours"] / ll_rate["lm_eval"]
    verdict = "met" if speedup >= GOALS["loglikelihood"] else "NOT met"
    per_item = ll["tokens_per_item"]
    print(_row("log-likelihood requests/s", ll_rate["ours"], ll_rate["lm_eval"], f"lm-eval HFLM, batch {args.batch_size}",
               f">= {GOALS['loglikelihood']:g}x: {verdict}"))  # fmt: skip
    print(
        _row("tokens computed per item", per_item["ours"], per_item["lm_eval"], "lm-eval HFLM (context + option, x4)")
    )
    gen_rate = {k: gen["tokens"][k] / gen["seconds"][k] for k in gen["seconds"]}
    print(_row("generation tokens/s", gen_rate["ours"], gen_rate["pipeline"],
               'pipeline("text-generation"), 1 prompt at a time'))  # fmt: skip
    if http is not None:
        rate = {k: http["requests"] / v for k, v in http["seconds"].items()}
        print(_row("HTTP requests/s, concurrency 1", rate["ours_c1"], rate["plain"], "openai client loop, 1 at a time"))
        print(_row("HTTP requests/s, concurrency 10", rate["ours_c10"], rate["ours_c1"], "ours at concurrency 1"))
    check = ll["parity"]
    print(f"parity with lm-eval: max |log-likelihood diff| {check['max_abs_diff']:.2e} over {check['requests']} "
          f"requests (goal <= {GOALS['parity']:.0e}: {'met' if check['max_abs_diff'] <= GOALS['parity'] else 'NOT met'}); "
          f"is_greedy agrees on {check['greedy_agree']}/{check['requests']}")  # fmt: skip
    print(f"generation: {gen['prompts']} prompts x {new_tokens} new tokens, ours batch {gen['batch_size']}; "
          f"{gen['tokens']['ours']} vs {gen['tokens']['pipeline']} tokens made; identical texts "
          f"{gen['same_text']}/{gen['prompts']}")  # fmt: skip
    if http is not None:
        mode = "with --continuous-batching" if http["continuous_batching"] else "one request at a time"
        print(f"HTTP: transformers serve {mode} (tiny Llama-style model, chat), {http['requests'] // 2} distinct requests x "
              f"{http['max_new_tokens']} new tokens, each path run twice in mirrored order (plain, c1, c10, c10, c1, "
              f"plain); seconds per round: "
              f"{', '.join(f'{k} ' + '+'.join(f'{t:.1f}' for t in v) for k, v in http['rounds'].items())}")  # fmt: skip
    return {"loglikelihood": {**ll, "requests_per_second": ll_rate, "speedup": speedup}, "generation":
            {**gen, "tokens_per_second": gen_rate}, "http": http}  # fmt: skip


def quiet() -> None:
    """Offline, and no library chatter: the table is the output (a command-line run only; tests keep their logs)."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(name, "1")  # every model is a local folder; nothing may be fetched
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()  # weight loading and saving bars would bury the table
    for noisy in ("lm_eval", "transformers", "httpx", "nlue.lm"):
        logging.getLogger(noisy).setLevel(logging.ERROR)


if __name__ == "__main__":
    quiet()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
