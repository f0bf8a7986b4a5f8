"""`nlue llm ...`: evaluate a generative language model, local or behind an OpenAI-compatible server.

    nlue llm mcq --model Qwen/Qwen3-4B-Instruct-2507 --dataset build/mcq --task mcq_ne --prompt-language both --shots 0
    nlue llm mcq --endpoint http://127.0.0.1:8000/v1 --model served-name --dataset build/mcq --task mcq_ur
    nlue llm mcq --model ./my-model --dataset build/mcq --task mcq_ne --mode loglik --shots 5
    nlue llm mcq --model ./my-model --dataset build/mcq --task mcq_ne --show-prompt --shots 3
    nlue llm nlue --model ./my-model --dataset build/nlue --tasks sa rte --prompt-language ne --shots 1

``mcq`` runs a multiple-choice exam (generation with strict two-line parsing, or
``--mode loglik``): accuracy over all items and over parseable items, the invalid rate by
category, per domain / subdomain / level tables with 95% intervals, a PNG chart, every raw
output in ``raw_outputs.jsonl`` and, with both prompt languages, the native minus English
gap with a paired test. ``nlue`` scores the NLUE classification tasks by the log-likelihood
of each label word. Results go to ``--results-dir`` (default ``results``), one folder per
run; every answered request is journalled (default ``<results-dir>/journals/<model>.jsonl``),
so the same command run again after a crash asks only what is missing.

``--endpoint`` sends requests to an OpenAI-compatible server (vLLM, TGI, llama.cpp,
``transformers serve``, a hosted API); the key is read from the environment variable
``--api-key-env`` names (default OPENAI_API_KEY) and is never printed or stored.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_support import (
    add_logging_options,
    run_with_parser,
)
from nlue.errors import NlueError
from nlue.evals.mcq.prompts import PAPER_SHOTS, SEED, render, show_prompt
from nlue.evals.mcq.run import MODES, PROMPT_LANGUAGES, exam_names
from nlue.evals.nlue_llm import LANGUAGES
from nlue.registry.tasks import TASK_NAMES, TASKS


def _model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument("--model", required=True, help="a local folder or Hub id; with --endpoint, the served name")
    group.add_argument("--endpoint", help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    group.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the API key (%(default)s)")
    group.add_argument("--concurrency", type=int, default=10, help="requests in flight (%(default)s, the paper's)")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per HTTP request (%(default)s)")
    group.add_argument("--device", help="local model: cuda, cpu, mps (default: the best there is)")
    group.add_argument("--dtype", default="auto", help="local model: auto (bf16 on CUDA), float32, bfloat16, float16")
    group.add_argument("--batch-size", type=int, default=10, help="local model: batch size (%(default)s, the paper's)")
    group.add_argument("--journal", type=Path, help="answer journal (default <results-dir>/journals/<model>.jsonl)")


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shots", type=int, choices=PAPER_SHOTS, default=0, help="demonstrations (default 0)")
    parser.add_argument("--limit", type=int, help="only the first N test items (a quick look; not a score)")
    parser.add_argument("--results-dir", type=Path, default=Path("results"), help="default: %(default)s")
    parser.add_argument(
        "--name", "--results-name", dest="name", help="run folder prefix (default: the model folder or id)"
    )
    parser.add_argument("--bootstrap-resamples", "--bootstrap", type=int, default=1000,
                        help="resamples for the 95%% intervals and the paired test; 0 for none (%(default)s)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=SEED, help="demonstrations and resampling (%(default)s)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue llm",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="suite", required=True, metavar="SUITE")
    mcq = sub.add_parser("mcq", help="a multiple-choice exam (UrduMMLU protocol): generation or log-likelihood")
    mcq.set_defaults(action=run_mcq_command)
    _model_options(mcq)
    mcq.add_argument("--dataset", required=True, help="the exam's dataset: a built folder or a Hub id")
    mcq.add_argument("--task", required=True, choices=exam_names(), help="the exam")
    mcq.add_argument("--prompt-language", choices=[*PROMPT_LANGUAGES, "both"], default="en",
                     help="English prompt, the exam's own language, or both and their gap (default %(default)s)")  # fmt: skip
    mcq.add_argument("--mode", choices=MODES, default="generate", help="default %(default)s")
    mcq.add_argument("--choices", choices=("letters", "texts"), default="letters",
                     help="loglik mode: score the letters A-D (lm-eval's way) or the option texts")  # fmt: skip
    mcq.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                     help="chat messages or plain text (default: chat when the model has a chat template)")  # fmt: skip
    mcq.add_argument("--max-new-tokens", type=int, help="generation cap (default: the paper's 4096, within the window)")
    mcq.add_argument("--show-prompt", action="store_true", help="print the first prompt(s) and exit; no model call")
    mcq.add_argument("--no-chart", action="store_true", help="skip the PNG chart (no matplotlib needed)")
    _run_options(mcq)
    add_logging_options(mcq)
    nlue = sub.add_parser("nlue", help="the NLUE classification tasks, by log-likelihood of each label word")
    nlue.set_defaults(action=run_nlue_command)
    _model_options(nlue)
    nlue.add_argument("--dataset", help="a built NLUE folder or Hub id (default: the embedded sample)")
    nlue.add_argument("--tasks", nargs="+", choices=[t for t in TASK_NAMES if TASKS[t].prompts], metavar="TASK",
                      help="default: every NLUE task with label words")  # fmt: skip
    nlue.add_argument("--prompt-language", choices=LANGUAGES, default="en", help="default %(default)s")
    _run_options(nlue)
    add_logging_options(nlue)
    return parser


# ------------------------------------------------------------------ the model
def _journal_path(args: argparse.Namespace) -> Path:
    from nlue.results import model_slug

    return args.journal or args.results_dir / "journals" / f"{model_slug(args.model)}.jsonl"


def build_model(args: argparse.Namespace, journal: Any) -> Any:
    """The local backend, or the HTTP one with ``--endpoint`` (failed generations come back as invalid outputs)."""
    progress = not getattr(args, "quiet", False)
    if args.endpoint:
        from nlue.lm.http import OpenAICompatibleLM

        return OpenAICompatibleLM(
            args.model, args.endpoint, api_key_env=args.api_key_env, concurrency=args.concurrency,
            timeout=args.timeout, failed_generations="return", journal=journal, show_progress=progress,
        )  # fmt: skip
    from nlue.lm.local import LocalCausalLM

    return LocalCausalLM(
        args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size, journal=journal,
        show_progress=progress,
    )  # fmt: skip


def _chat_for_preview(args: argparse.Namespace) -> bool:
    """Chat or plain text without loading the model: the flag, the endpoint, or the tokenizer's chat template."""
    if args.chat is not None:
        return args.chat
    if args.endpoint:
        return True
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(args.model).chat_template is not None
    except (OSError, ValueError) as exc:
        raise NlueError(f"cannot load a tokenizer from {args.model!r} to tell chat from plain text: {exc}") from exc


# ------------------------------------------------------------------ mcq
def _languages(args: argparse.Namespace) -> list[str]:
    return list(PROMPT_LANGUAGES) if args.prompt_language == "both" else [args.prompt_language]


def show_prompts(args: argparse.Namespace) -> int:
    from nlue.evals.mcq.loglik import TARGET_DELIMITER, loglik_context, option_strings
    from nlue.evals.mcq.run import exam_task, load_exam, resolve_language, without_gold

    task = exam_task(args.task)
    items, pool = load_exam(args.dataset, task, args.shots, args.limit or 1)
    chat = _chat_for_preview(args) if args.mode == "generate" else False
    for role in _languages(args):
        language = resolve_language(task, role)
        for item in items:
            visible = without_gold(item, task)
            form = "chat messages" if chat else "plain text"
            print(f"===== {task.name} · item {item.get('id')} · {language} prompt · {args.shots}-shot · {form} =====")
            if args.mode == "generate":
                print(show_prompt(render(visible, language, args.shots, pool, chat, args.seed)))
            else:
                print(loglik_context(visible, language, args.shots, pool, args.choices, args.seed))
                options = ", ".join(repr(TARGET_DELIMITER + o) for o in option_strings(visible, args.choices))
                print(f"----- continuations scored: {options}")
    return 0


def _percent(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:.1f}%"


def _interval(metrics: dict[str, float], name: str) -> str:
    low, high = metrics.get(f"{name}_ci_low"), metrics.get(f"{name}_ci_high")
    return "" if low is None or high is None else f" [95% CI {_percent(low)}, {_percent(high)}]"


def print_mcq(run: Any) -> None:
    from nlue.evals.mcq.report import gap_text, text_tables

    result, details = run.result, run.result.details
    metrics = result.metrics
    sample = " (SAMPLE DATA: scores mean nothing about the model)" if result.dataset.get("is_sample") else ""
    print(f"\n{result.task} · {run.name} · {details['n_items']} items{sample}")
    print(f"accuracy over all items (invalid = wrong; the primary): {_percent(metrics['accuracy_all_items'])}"
          f"{_interval(metrics, 'accuracy_all_items')}")  # fmt: skip
    print(f"accuracy over parseable items ({details['parseable_items']} parsed): "
          f"{_percent(metrics['accuracy_parseable'])}{_interval(metrics, 'accuracy_parseable')}")  # fmt: skip
    counts = ", ".join(f"{k} {v}" for k, v in details["invalid_counts"].items() if v) or "none"
    print(f"invalid outputs: {details['invalid_percent']}% (the paper's Inv%); by category: {counts}")
    if "acc_norm_chars" in metrics:
        print(f"acc_norm by characters {_percent(metrics['acc_norm_chars'])}, "
              f"by bytes {_percent(metrics['acc_norm_bytes'])}")  # fmt: skip
    lenient = details.get("lenient")
    if lenient:
        print(f"lenient parse (a diagnostic, never in the numbers above): accuracy over all items "
              f"{_percent(lenient['accuracy_all_items'])}, invalid {lenient['invalid_percent']}%")  # fmt: skip
    print()
    print(text_tables(run.tables))
    if run.gap:
        print("\n" + gap_text(run.gap))
    print(f"\nresults: {run.result_path}")
    for name, path in run.files.items():
        print(f"  {name}: {path}")


def run_mcq_command(args: argparse.Namespace) -> int:
    if args.show_prompt:
        return show_prompts(args)
    from nlue.evals.mcq.run import run_mcq
    from nlue.lm.journal import Journal

    with Journal(_journal_path(args)) as journal:
        model = build_model(args, journal)
        for role in _languages(args):
            run = run_mcq(
                model, args.dataset, args.task, role, args.shots, args.results_dir, args.name, mode=args.mode,
                chat=args.chat, max_new_tokens=args.max_new_tokens, choices=args.choices, limit=args.limit,
                bootstrap_resamples=args.bootstrap_resamples, seed=args.seed, chart=not args.no_chart,
            )  # fmt: skip
            print_mcq(run)
    print(f"journal: {journal.path}")
    return 0


# ------------------------------------------------------------------ nlue
def run_nlue_command(args: argparse.Namespace) -> int:
    from nlue.evals.mcq.run import model_base_name
    from nlue.evals.nlue_llm import run_nlue_llm
    from nlue.lm.journal import Journal

    if args.limit is not None and args.limit < 1:
        raise NlueError(f"--limit must be at least 1, got {args.limit}")
    with Journal(_journal_path(args)) as journal:
        model = build_model(args, journal)
        name = f"{args.name or model_base_name(model)}__{args.prompt_language}-{args.shots}shot"
        results = run_nlue_llm(
            model, args.dataset, args.tasks, args.prompt_language, args.shots, args.results_dir, name,
            bootstrap_resamples=args.bootstrap_resamples, seed=args.seed, limit=args.limit,
        )  # fmt: skip
    for task, result in results.items():
        m = result.metrics
        print(f"{task}: macro-F1 {_percent(m['macro_f1'])}{_interval(m, 'macro_f1')}, accuracy "
              f"{_percent(m['accuracy'])}, acc_norm by characters {_percent(m['acc_norm_chars'])}, "
              f"by bytes {_percent(m['acc_norm_bytes'])}")  # fmt: skip
    print(f"results: {args.results_dir / name}; journal: {journal.path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue llm` with ``argv`` (without the `llm` word); return the exit status."""
    return run_with_parser("llm", build_parser(), argv, lambda args: args.action(args))
