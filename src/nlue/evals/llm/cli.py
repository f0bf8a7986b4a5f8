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
of each label word. Results go to ``--results-dir`` (default ``build/results``), one folder per
run (ending in ``-limitN`` for a ``--limit`` run, which never replaces a full one; a results file
of another run is replaced only with ``--overwrite``); every answered request is kept in the answer
cache (default ``~/.cache/nlue/answers.sqlite``, shared by every run, keyed on what answered and on
the whole request), so the same command run again, after a crash or for a new report, asks only
what is missing; ``nlue cache report`` shows what it holds.

``--endpoint`` sends requests to an OpenAI-compatible server (vLLM, TGI, llama.cpp,
``transformers serve``, a hosted API); the key is read from the environment variable
``--api-key-env`` names (default OPENAI_API_KEY) and is never printed or stored.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_lists import add_name_list, task_names
from nlue.cli_support import (
    add_logging_options,
    add_task_file_option,
    command_parser,
    run_with_parser,
)
from nlue.errors import NlueError
from nlue.evals.llm.console import print_mcq, print_nlue
from nlue.evals.llm.label_generation import DEFAULT_LABEL_TOKENS
from nlue.evals.llm.nlue_llm import asked_by_llm_nlue
from nlue.evals.llm.prompt_language import PROMPT_LANGUAGE_CHOICES, PROMPT_LANGUAGE_HELP, prompt_languages
from nlue.evals.mcq.permute import GIVEN, OPTION_ORDERS
from nlue.evals.mcq.prompts import PAPER_SHOTS, SEED, render, show_prompt
from nlue.evals.mcq.run import MODES, PROMPT_LANGUAGES, exam_names
from nlue.lm.factory import AUTO_MODE
from nlue.lm.options import add_model_options, model_spec_from_args, note_old_journal, old_journal, open_answer_store
from nlue.registry.wordings import MAIN, WORDING_CHOICES
from nlue.results import OVERWRITE_HELP, RESULTS_DIR_HELP, default_results_dir


def _model_options(parser: argparse.ArgumentParser) -> None:
    add_model_options(parser, batch_size=10, prices=True)  # the paper's batch size for local models


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shots", type=int, choices=PAPER_SHOTS, default=0, help="demonstrations (default 0)")
    parser.add_argument("--limit", type=int, help="only the first N test items (a quick look; not a score); the run "
                        "folder's name ends in -limitN, so it never takes the place of a full run")  # fmt: skip
    parser.add_argument("--results-dir", type=Path, help=RESULTS_DIR_HELP)
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument(
        "--name", "--results-name", dest="name", help="run folder prefix (default: the model folder or id)"
    )
    parser.add_argument("--bootstrap-resamples", "--bootstrap", type=int, default=1000,
                        help="resamples for the 95%% intervals and the paired test; 0 for none (%(default)s)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=SEED, help="demonstrations and resampling (%(default)s)")
    parser.add_argument("--dry-run", action="store_true",
                        help="count the requests the run would send and estimate their cost (with the prices; as "
                        "batches too with --batch-api); send nothing, write nothing")  # fmt: skip


def _wordings_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wordings", choices=WORDING_CHOICES, default=MAIN,
                        help="all: also ask every item in each other wording of the prompt (the task file's "
                        "prompts.<lang>.wordings) and report the primary metric per wording and its spread beside "
                        "the score (ours; default %(default)s: the main prompt alone)")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue llm", __doc__)
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="suite", required=True, metavar="SUITE")
    mcq = sub.add_parser("mcq", help="a multiple-choice exam (UrduMMLU protocol): generation or log-likelihood")
    mcq.set_defaults(action=run_mcq_command)
    _model_options(mcq)
    mcq.add_argument("--dataset", required=True, help="the exam's dataset: a built folder or a Hub id")
    mcq.add_argument("--task", required=True, choices=exam_names(), help="the exam")
    add_task_file_option(mcq)
    mcq.add_argument("--prompt-language", choices=PROMPT_LANGUAGE_CHOICES, default="en",
                     help="English, the exam's own language, or both and their gap (default %(default)s)")  # fmt: skip
    mcq.add_argument("--mode", choices=MODES, default="generate", help="default %(default)s")
    mcq.add_argument("--choices", choices=("letters", "texts"), default="letters",
                     help="loglik mode: score the letters A-D (lm-eval's way) or the option texts")  # fmt: skip
    mcq.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                     help="chat messages or plain text (default: chat when the model has a chat template)")  # fmt: skip
    mcq.add_argument("--max-new-tokens", type=int,
                     help="generate mode: tokens for the answer (default 256, the two-line answer; the paper's 4096 "
                     "for a reasoning model that thinks first), at most half a local model's window")  # fmt: skip
    mcq.add_argument("--option-orders", choices=OPTION_ORDERS, default=GIVEN,
                     help="cyclic: also ask every item under each rotation of its options (key moved with them) and "
                     "report accuracy per rotation, consistency and letter bias (ours; default %(default)s: as given)")  # fmt: skip
    _wordings_option(mcq)
    mcq.add_argument("--show-prompt", action="store_true",
                     help="print the first item's prompt(s) a run would ask and exit, no model call: with "
                     "--option-orders cyclic the main wording under each rotation, with --wordings all each other "
                     "wording in the given order, each labelled")  # fmt: skip
    mcq.add_argument("--no-chart", action="store_true", help="skip the PNG chart (no matplotlib needed)")
    _run_options(mcq)
    add_logging_options(mcq)
    nlue = sub.add_parser(
        "nlue", help="the NLUE classification tasks: log-likelihood of each label word, or generation"
    )
    nlue.set_defaults(action=run_nlue_command)
    _model_options(nlue)
    nlue.add_argument("--dataset", help="a built NLUE folder or Hub id (default: the embedded sample)")
    add_name_list(nlue, "--tasks", valid=task_names(asked_by_llm_nlue), what="task",
                  help="the tasks to ask (default: every NLUE task with a prompt; stsb by --mode generate only)")  # fmt: skip
    add_task_file_option(nlue)
    nlue.add_argument("--prompt-language", choices=PROMPT_LANGUAGE_CHOICES, default="en", help=PROMPT_LANGUAGE_HELP)
    nlue.add_argument("--mode", choices=(AUTO_MODE, *MODES), default=AUTO_MODE,
                      help="loglik: score each label word; generate: the model writes one, a strict parser reads it; "
                      "auto (default): loglik where the model gives log-likelihoods, else generate")  # fmt: skip
    nlue.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                      help="generate mode: chat messages or plain text (default: chat when the model has a chat "
                      "template, or behind a chat endpoint)")  # fmt: skip
    nlue.add_argument("--max-new-tokens", type=int,
                      help=f"generate mode: tokens for the answer (default {DEFAULT_LABEL_TOKENS}, a label word)")  # fmt: skip
    _wordings_option(nlue)
    nlue.add_argument("--show-prompt", action="store_true",
                      help="print each task's first prompt and exit, no model call (--mode auto shows the "
                      "log-likelihood one); with --wordings all its prompt in each wording, each labelled")  # fmt: skip
    _run_options(nlue)
    add_logging_options(nlue)
    return parser


# ------------------------------------------------------------------ the model
def open_model(args: argparse.Namespace, journal: Any, mode: str, what: str) -> Any:
    """The model the options name, through the model layer, checked for ``mode`` before any request."""
    from nlue.lm.factory import load_model, require

    model = load_model(model_spec_from_args(args, journal=journal))
    require(model, mode, what)
    return model


def _answer_store(args: argparse.Namespace) -> Any:
    note_old_journal(old_journal(args.results_dir, args.model))
    return open_answer_store(args)


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


def _prompt_variants(args: argparse.Namespace, task: Any, language: str, item: dict) -> list[tuple[str, Any, dict]]:
    """What ``--show-prompt`` shows of one item: what a run asks, labelled. The main wording under each option order
    (``--option-orders cyclic``), each other wording (``--wordings all``) in the given order, as a run asks them
    (the orders are measured on the main wording, the wordings in the given order); one unlabelled prompt when
    neither option is given."""
    from nlue.evals.llm.wordings import require_wordings
    from nlue.evals.mcq.permute import CYCLIC, option_count, rotate_item
    from nlue.registry.kinds.mcq_text import LETTERS
    from nlue.registry.wordings import worded_task, wording_names

    require_wordings([task], language, args.wordings)
    names = wording_names(task, language) if args.wordings != MAIN else (MAIN,)
    k = option_count(item)
    rotations = range(k) if args.option_orders == CYCLIC else range(1)
    variants = []
    for name in names:
        for rotation in rotations if name == MAIN else range(1):
            label = f" · wording {name}" if args.wordings != MAIN else ""
            if args.option_orders == CYCLIC:
                label += (
                    f" · rotation {rotation} (order shown {''.join(LETTERS[(j + rotation) % k] for j in range(k))})"
                )
            variants.append((label, worded_task(task, language, name), rotate_item(item, rotation)))
    return variants


def show_prompts(args: argparse.Namespace) -> int:
    from nlue.evals.mcq.loglik import TARGET_DELIMITER, loglik_context, option_strings
    from nlue.evals.mcq.run import exam_task, load_exam, resolve_language, without_gold

    task = exam_task(args.task)
    items, pool = load_exam(args.dataset, task, args.shots, args.limit or 1)
    chat = _chat_for_preview(args) if args.mode == "generate" else False
    for role in _languages(args):
        language = resolve_language(task, role)
        for item in items:
            for label, worded, shown in _prompt_variants(args, task, language, item):
                visible = without_gold(shown, worded)
                form = "chat messages" if chat else "plain text"
                print(f"===== {task.name} · item {item.get('id')} · {language} prompt · {args.shots}-shot · {form}"
                      f"{label} =====")  # fmt: skip
                if args.mode == "generate":
                    print(show_prompt(render(visible, language, args.shots, pool, chat, args.seed, task=worded)))
                else:
                    print(loglik_context(visible, language, args.shots, pool, args.choices, args.seed, worded))
                    options = ", ".join(repr(TARGET_DELIMITER + o) for o in option_strings(visible, args.choices))
                    print(f"----- continuations scored: {options}")
    return 0


def run_mcq_command(args: argparse.Namespace) -> int:
    if args.show_prompt:
        return show_prompts(args)
    if args.dry_run:
        from nlue.evals.llm.dry_run import dry_run

        return dry_run(args, _mcq_runs)
    from nlue.lm.answer_cache import answers_line

    with _answer_store(args) as journal:
        _mcq_runs(args, open_model(args, journal, args.mode, f"the {args.task} exam"))
    print(answers_line(journal))
    return 0


def _mcq_runs(args: argparse.Namespace, model: Any) -> None:
    from nlue.evals.mcq.run import run_mcq

    for role in _languages(args):
        run = run_mcq(
            model, args.dataset, args.task, role, args.shots, args.results_dir, args.name, mode=args.mode,
            chat=args.chat, max_new_tokens=args.max_new_tokens, choices=args.choices, limit=args.limit,
            bootstrap_resamples=args.bootstrap_resamples, seed=args.seed, chart=not args.no_chart,
            overwrite=args.overwrite, option_orders=args.option_orders, wordings=args.wordings,
        )  # fmt: skip
        print_mcq(run)


# ------------------------------------------------------------------ nlue
def run_nlue_command(args: argparse.Namespace) -> int:
    from nlue.evals.llm.nlue_llm import native_language, nlue_tasks
    from nlue.evals.llm.wordings import require_wordings
    from nlue.lm.answer_cache import answers_line
    from nlue.lm.factory import load_model

    if args.limit is not None and args.limit < 1:
        raise NlueError(f"--limit must be at least 1, got {args.limit}")
    languages = prompt_languages(args.prompt_language, native_language(args.tasks))
    asked_mode = None if args.mode == AUTO_MODE else args.mode
    for language in languages:  # tasks without a prompt, or none left for the mode, are refused before a model loads
        require_wordings(nlue_tasks(args.tasks, language, asked_mode, warn=False), language, args.wordings)
    if args.show_prompt:
        return show_nlue_prompts(args, languages)
    if args.dry_run:
        from nlue.evals.llm.dry_run import dry_run

        return dry_run(args, _nlue_runs)
    with _answer_store(args) as journal:
        _nlue_runs(args, load_model(model_spec_from_args(args, journal=journal)))
    print(answers_line(journal))
    return 0


def show_nlue_prompts(args: argparse.Namespace, languages: Sequence[str]) -> int:
    """Each task's first test item as the run would ask it, in every wording asked; no model is loaded."""
    from nlue.evals.llm.nlue_generate import generation_prompts
    from nlue.evals.llm.nlue_llm import TARGET_DELIMITER, demonstrations, nlue_tasks, render_prompt, task_splits
    from nlue.registry.wordings import worded_task, wording_names

    mode = "loglik" if args.mode == AUTO_MODE else args.mode
    chat = _chat_for_preview(args) if mode == "generate" else False
    for language in languages:
        for task in nlue_tasks(args.tasks, language, mode, warn=False):
            test, pool = task_splits(args.dataset, task, args.shots, 1)
            names = wording_names(task, language) if args.wordings != MAIN else (MAIN,)
            for name in names:
                worded = worded_task(task, language, name)
                label = f" · wording {name}" if args.wordings != MAIN else ""
                form = ("chat messages" if chat else "plain text") if mode == "generate" else "log-likelihood"
                print(f"===== {task.name} · first test item · {language} prompt · {args.shots}-shot · "
                      f"{form}{label} =====")  # fmt: skip
                if mode == "generate":
                    (prompt,) = generation_prompts(worded, [test[0]], pool, language, args.shots, args.seed)
                    print(f"[user]\n{prompt}" if chat else prompt)  # a label prompt is one user message
                else:
                    print(demonstrations(worded, pool, language, args.shots, args.seed)
                          + render_prompt(worded, test[0], language))  # fmt: skip
                    words = worded.kind.llm_template(worded, language)[1]
                    print(f"----- continuations scored: {', '.join(repr(TARGET_DELIMITER + w) for w in words)}")
    return 0


def _nlue_runs(args: argparse.Namespace, model: Any) -> None:
    from nlue.evals.llm.nlue_generate import run_nlue_generation
    from nlue.evals.llm.nlue_llm import native_language, nlue_tasks, run_nlue_llm
    from nlue.evals.llm.wordings import run_suffix
    from nlue.evals.mcq.run import model_base_name
    from nlue.lm.factory import choose_mode
    from nlue.run_identity import limit_suffix

    languages = prompt_languages(args.prompt_language, native_language(args.tasks))
    mode = choose_mode(model, args.mode, "the NLUE tasks")
    chat = model.describe().chat if args.chat is None else args.chat
    for language in languages:
        name = f"{args.name or model_base_name(model)}__{language}-{args.shots}shot"
        common = {"bootstrap_resamples": args.bootstrap_resamples, "seed": args.seed, "limit": args.limit,
                  "overwrite": args.overwrite, "wordings": args.wordings}  # fmt: skip
        tasks = nlue_tasks(args.tasks, language, mode, warn=language == languages[0])
        name += ("-generate" if mode == "generate" else "") + run_suffix(args.wordings) + limit_suffix(args.limit)
        if mode == "generate":
            cap = args.max_new_tokens or DEFAULT_LABEL_TOKENS
            results = run_nlue_generation(model, args.dataset, tasks, language, args.shots, args.results_dir, name,
                                          chat=chat, max_new_tokens=cap, **common)  # fmt: skip
        else:
            results = run_nlue_llm(model, args.dataset, tasks, language, args.shots, args.results_dir, name,
                                   **common)  # fmt: skip
        print_nlue(results, mode)
        print(f"results: {args.results_dir / name}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue llm` with ``argv`` (without the `llm` word); return the exit status."""
    return run_with_parser("llm", build_parser, argv, _run)


def _run(args: argparse.Namespace) -> int:
    if getattr(args, "results_dir", None) is None:  # read at run time: $NLUE_RESULTS_DIR may be set meanwhile
        args.results_dir = default_results_dir()
    return args.action(args)
