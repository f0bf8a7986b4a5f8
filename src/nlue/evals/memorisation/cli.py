"""`nlue memorisation --model M --dataset D`: has a local causal LM seen the test items? (ours; no paper checks)

    nlue memorisation --model ./my-model --dataset build/mcq
    nlue memorisation --model Qwen/Qwen3-4B --dataset build/nlue --tasks sa,rte --limit 200
    nlue memorisation --model ./my-model --dataset sample --k 10 --out probes.json

Every test item is scored by Min-K%++ (Zhang et al., arXiv 2404.02936), Min-K% (Shi et al., arXiv 2310.16789)
and its mean token log-probability, and so is a control text: the item's own words shuffled. Per task: the
AUC of items against controls with a bootstrap interval, and the share of items above the controls' 95th
percentile. An exam's questions are also given to the model by their first half: how often it writes the
second half word for word, and how close it comes, beside the same against other questions (chance). The
probes need the model's whole next-token distribution, so they run on a local model (folder or Hub id)
only. Item-by-item scores go to <results-dir>/memorisation/<model>/<dataset>.json;
docs/guides/memorisation.md says what each number can and cannot show.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.cli_lists import add_name_list, task_names
from nlue.cli_support import (
    add_logging_options,
    add_settings_options,
    add_task_file_option,
    command_parser,
    run_with_parser,
    settings_from,
)
from nlue.errors import NlueError
from nlue.evals.memorisation.control_pools import SAMPLE, SHUFFLED, Pool, file_pool, in_script_share, sample_pool
from nlue.evals.memorisation.probes_file import default_path, probes_document, write_probes
from nlue.evals.memorisation.run import ProbeSettings, probe_task
from nlue.results import RESULTS_DIR_HELP, default_results_dir
from nlue.text.safe import terminal_safe
from nlue.text_table import text_table

logger = logging.getLogger(__name__)

ENDPOINT_REFUSAL = (
    "--endpoint: the memorisation probes need the model's whole next-token distribution at every position (the "
    "mean and spread of log p over the vocabulary); an OpenAI-compatible server returns a few top "
    "log-probabilities at most, so Min-K%++ cannot be computed from it. Run the model here: --model with its "
    "folder or Hub id, without --endpoint"
)
READING = """\
reading: an AUC well above 0.5 (its interval clear of 0.5) and far more than 5% of items above the controls' 95th
  percentile say the model finds these items more familiar than text of their kind it cannot have read: it has
  likely read them (or text very like them). An exam question completed word for word far more often than
  chance says the same. A low score does NOT show the items are unseen: a model may have read them and not kept
  them, read them translated (the English original leaves no trace in Nepali or Urdu text), or be too small to
  keep anything. Nothing here is calibrated on Nepali or Urdu models; compare models on the same items."""
FEW_CONTROL_TEXTS = 100
SHUFFLED_NOTE = ("controls: the items' own words shuffled; any fluent model prefers real word order, so items "
                 "score above these controls whether seen or not: a floor, not a test")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    from nlue.lm.options import add_model_options

    parser = command_parser("nlue memorisation", __doc__)
    group = add_model_options(parser, endpoint=False, batch_size=8, model_help="a local causal LM: folder or Hub id")
    group.add_argument("--endpoint", help="refused: a server gives too few log-probabilities for Min-K%%++")
    parser.add_argument("--dataset", required=True,
                        help="built dataset: folder, Hub id, or 'sample' (the embedded NLUE sample)")  # fmt: skip
    add_name_list(parser, "--tasks", valid=task_names(), what="task", help="only these tasks (default: every one)")
    parser.add_argument("--split", default="test", help="the split probed (%(default)s)")
    parser.add_argument("--limit", type=int, help="only the first N items of each task (the file's name ends -limitN)")
    add_settings_options(parser, ProbeSettings, {"bootstrap_resamples": ["--bootstrap"]})
    parser.add_argument("--controls", default=SAMPLE, metavar="sample|shuffled|FILE",
                        help="what items are held against: nlue's own sample texts of the task (default), the "
                        "item's words shuffled (a floor: any fluent model prefers real order), or a text/JSONL file "
                        "of texts the model cannot have read")  # fmt: skip
    parser.add_argument("--no-completion", action="store_true", help="skip the exam completion probe")
    parser.add_argument("--results-dir", type=Path, help=RESULTS_DIR_HELP)
    parser.add_argument("--out", type=Path, help="write the file here instead")
    add_task_file_option(parser)
    add_logging_options(parser)
    return parser


def check_arguments(args: argparse.Namespace) -> ProbeSettings:
    """The settings, or exit 2 with what was wrong (before any model loads)."""
    if args.endpoint:
        raise NlueError(ENDPOINT_REFUSAL)
    if args.backend not in ("auto", "transformers"):
        raise NlueError(f"--backend {args.backend}: the probes run a local causal LM (--backend transformers)")
    settings = settings_from(args, ProbeSettings)
    if not 0 < settings.k <= 100:
        raise NlueError(f"--k {settings.k:g}: expected a percentage above 0, at most 100")
    if settings.min_words < 2 or settings.bootstrap_resamples < 0:
        raise NlueError("--min-words must be 2 or more and --bootstrap-resamples 0 or more")
    if args.limit is not None and args.limit < 1:
        raise NlueError(f"--limit must be at least 1, got {args.limit}")
    return settings


def require_causal(model: str) -> None:
    """Refuse a checkpoint that is no causal LM (a masked LM, a classifier) before it loads."""
    from nlue.lm.backends import model_family

    try:
        from transformers import AutoConfig

        architectures = getattr(AutoConfig.from_pretrained(model), "architectures", None) or []
    except (OSError, ValueError):
        return  # not there, or no config: the loader says so
    causal = [a for a in architectures if a.endswith(("ForCausalLM", "LMHeadModel"))]
    if model_family(model) == "masked" or (architectures and not causal):
        raise NlueError(f"--model {model}: {', '.join(architectures) or 'a masked LM'} is no causal LM; the probes "
                        "need one that predicts each next token (a *ForCausalLM checkpoint)")  # fmt: skip


def _pool(controls: str, task: Any, items: Sequence[Any], shared: Pool | None) -> Pool | None:
    """The task's control pool: its sample texts less the probed items, the control file's, or None (shuffled)."""
    if controls == SHUFFLED:
        return None
    if controls == SAMPLE:
        return sample_pool(task, items)
    from nlue.text.profiles import profile_of

    profile = profile_of(task)
    share = in_script_share(shared or [], profile.script)
    if share is not None and share < 0.5:
        logger.warning("--controls %s: only %.0f%% of its texts are mostly in %s's script (%s); controls in another "
                       "script say nothing about these items", controls, 100 * share, task.name, profile.name)  # fmt: skip
    return shared


def _controls_name(controls: str) -> str:
    return controls if controls in (SAMPLE, SHUFFLED) else f"file:{Path(controls).name}"


def _cell(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(tasks: Mapping[str, Mapping[str, Any]]) -> str:
    rows = [("task", "items", "compared", "ctrl texts", "Min-K%++ AUC [95% CI]", "above ctrl p95", "Min-K% AUC", "log p AUC",
             "exam exact (chance)", "exam overlap (chance)")]  # fmt: skip
    for name, entry in tasks.items():
        s, c = entry["summary"], (entry["completion"] or {}).get("summary")
        m = s["minkpp"]
        interval = f" [{_cell(m['auc_ci_low'])}, {_cell(m['auc_ci_high'])}]" if m["auc_ci_low"] is not None else ""
        rows.append((name, str(s["items"]), str(s["compared"]), str(s["control_texts"]), _cell(m["auc"]) + interval, _cell(m["above_p95"]),
                     _cell(s["mink"]["auc"]), _cell(s["loglik"]["auc"]),
                     f"{_cell(c['exact'])} ({_cell(c['control_exact'])})" if c else "-",
                     f"{_cell(c['overlap'])} ({_cell(c['control_overlap'])})" if c else "-"))  # fmt: skip
    return text_table(rows)


def run(args: argparse.Namespace) -> int:
    from nlue.data.access import is_sample
    from nlue.data.sample import SAMPLE_DATA_NOTE
    from nlue.evals.contamination.items import dataset_tasks, task_items
    from nlue.evals.mcq.run import exam_names
    from nlue.lm.answer_cache import answers_line
    from nlue.lm.factory import load_model
    from nlue.lm.options import model_spec_from_args, open_answer_store

    settings = check_arguments(args)
    dataset = args.dataset
    tasks = dataset_tasks(None if dataset == "sample" else dataset, args.tasks, args.split)
    require_causal(args.model)
    shared = None if args.controls in (SAMPLE, SHUFFLED) else file_pool(Path(args.controls))
    exams = set(exam_names())
    entries: dict[str, Any] = {}
    with open_answer_store(args) as journal:
        model = load_model(dataclasses.replace(model_spec_from_args(args, journal=journal), backend="transformers"))
        for task in tasks:
            items = task_items(dataset, task, args.split)[: args.limit]
            logger.info("%s: %d items", task.name, len(items))
            pool = _pool(args.controls, task, items, shared)
            entries[task.name] = probe_task(model, task, items, pool, settings, batch_size=model.batch_size,
                                            exam=task.name in exams and not args.no_completion,
                                            show_progress=not getattr(args, "quiet", False))  # fmt: skip
    described = {"id": dataset, "split": args.split, "is_sample": is_sample(None if dataset == "sample" else dataset)}
    document = probes_document(model.describe().to_dict(), described,
                               {**dataclasses.asdict(settings), "limit": args.limit,
                                "controls": _controls_name(args.controls)}, entries)  # fmt: skip
    out = args.out or default_path(args.results_dir or default_results_dir(), args.model, dataset, args.limit,
                                   args.split, args.tasks)  # fmt: skip
    write_probes(out, document)
    print(terminal_safe(table(entries), limit=None))
    for name, entry in entries.items():
        few, compared = entry["summary"]["control_texts"], entry["summary"]["compared"]
        if args.controls != SHUFFLED and 0 < few < FEW_CONTROL_TEXTS:
            note = (f"{name}: {compared} items against controls made of {few} texts; with so few, how the controls "
                    "differ from the items (topic, length, style) can move the AUC as much as memory does, and the "
                    "interval does not show that: a conclusion needs hundreds of each (--controls FILE: texts the "
                    "model cannot have read)")  # fmt: skip
            print(terminal_safe(textwrap.fill(note, width=115, subsequent_indent="  ")))
    print(READING)
    if described["is_sample"]:
        print(SAMPLE_DATA_NOTE)
    if args.controls == SHUFFLED:
        print(SHUFFLED_NOTE)
    print(answers_line(journal))
    print(terminal_safe(f"written: {out}"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue memorisation` with ``argv`` (without the `memorisation` word); return the exit status."""
    return run_with_parser("memorisation", build_parser, argv, run)
