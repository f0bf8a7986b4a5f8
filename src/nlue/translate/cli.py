"""`nlue translate`: translate an English GLUE-format source into Nepali rows that `nlue build` accepts.

    nlue translate --task rte --source glue/RTE/train.tsv --endpoint http://host:8000/v1 --model NAME --out work
    nlue translate --task rte --source glue/RTE/train.tsv --mt-model ./opus-mt-en-ne --out work
    nlue build --source work --configs rte --out build
    nlue translate review export|import ...; nlue translate backtranslate ...   (see `nlue translate review --help`)

Rows go out in class-wise batches (labels never sent), answers are parsed strictly and
count-checked (a failed batch is retried, then split, then its rows rejected with a
reason). Every answer is kept in the answer cache (``nlue cache report``): run the same command
again after an interruption and only what is missing is asked.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_support import (
    add_logging_options,
    run_with_parser,
)
from nlue.errors import NlueError
from nlue.lm.answer_cache import answers_line
from nlue.lm.backends import LANGUAGE_MODEL, TRANSLATOR
from nlue.lm.options import add_model_options, model_spec_from_args, note_old_journal, open_answer_store
from nlue.process_map import NUM_PROC_HELP, num_proc_arg
from nlue.registry.tasks import TASKS, get_task
from nlue.registry.translation_sources import TRANSLATION_SOURCES
from nlue.translate.batches import DEFAULT_BATCH_SIZE, DEFAULT_RETRIES
from nlue.translate.engine import DEFAULT_MAX_NEW_TOKENS, DEFAULT_TOKENS_PER_ROW
from nlue.translate.pipeline import resolve_split, run_paths, run_translation
from nlue.translate.quality import DEFAULT_MIN_DEVANAGARI
from nlue.translate.readers import choose_format

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue translate",
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tasks = [name for name in TASKS if name in TRANSLATION_SOURCES]
    parser.add_argument("--task", required=True, choices=tasks, help="the config to make")
    parser.add_argument("--source", type=Path, required=True, help="the English source file (GLUE TSV, JSONL)")
    parser.add_argument("--split", help="the split it holds (default: from the file name: train, dev/val, test)")
    parser.add_argument("--format", help="the source format's name, when the file fits several (default: detected)")
    parser.add_argument("--out", type=Path, required=True, help="source folder for `nlue build --source`")
    add_model_options(
        parser, roles=(LANGUAGE_MODEL, TRANSLATOR), required=False, timeout=300.0, journal=False, prices=True,
        model_help="with --endpoint: the model name the server knows", batch_flag="--mt-batch-size", batch_size=16,
    )  # fmt: skip
    parser.add_argument("--mt-model", help="a local sequence-to-sequence translation checkpoint (folder or Hub id)")
    batching = parser.add_argument_group("batching")
    batching.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="rows per request (%(default)s)")
    batching.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                          help="tries again of a batch whose answer fails, before it is split (%(default)s)")  # fmt: skip
    batching.add_argument("--limit", type=int, help="translate only the first N valid rows (a trial run)")
    batching.add_argument("--min-devanagari", type=float, default=DEFAULT_MIN_DEVANAGARI,
                          help="least share of Devanagari letters in a translated row (%(default)s; 0: keep rows "
                          "left in Latin letters; other scripts are always rejected)")  # fmt: skip
    batching.add_argument("--num-proc", type=num_proc_arg, default=1, metavar="N",
                          help=f"the checks of the translated rows: {NUM_PROC_HELP}")  # fmt: skip
    http = parser.add_argument_group("answer size (a server)")
    http.add_argument("--tokens-per-row", type=int, default=DEFAULT_TOKENS_PER_ROW, help="answer tokens per row")
    http.add_argument("--max-new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS, help="answer token cap")
    mt = parser.add_argument_group("local translation model (--mt-model)")
    mt.add_argument("--mt-max-new-tokens", type=int, default=256, help="tokens per translation (%(default)s)")
    mt.add_argument("--src-lang", help="source language code of a multilingual model (NLLB: eng_Latn)")
    mt.add_argument("--tgt-lang", help="target language token of a multilingual model (NLLB: npi_Deva, M2M: __ne__)")
    add_logging_options(parser, quiet_help="no progress bars; warnings and errors only")
    return parser


def _translator(args: argparse.Namespace, journal: Any) -> Any:
    from nlue.lm.backends import TRANSLATOR
    from nlue.lm.factory import load_model, require

    if args.mt_model:
        from nlue.translate.mt import MtTranslator

        spec = model_spec_from_args(
            args, journal=journal, model=args.mt_model, max_new_tokens=args.mt_max_new_tokens, src_lang=args.src_lang,
            tgt_lang=args.tgt_lang,
        )  # fmt: skip
        return MtTranslator(load_model(spec, TRANSLATOR))
    from nlue.translate.engine import EngineTranslator

    lm = load_model(model_spec_from_args(args, journal=journal))
    require(lm, "generate", "translation")
    return EngineTranslator(lm, tokens_per_row=args.tokens_per_row, max_new_tokens=args.max_new_tokens)


def run(args: argparse.Namespace) -> int:
    if bool(args.mt_model) == bool(args.endpoint or args.model):
        raise NlueError("give either --endpoint and --model (a server) or --mt-model (a local model)")
    if not args.mt_model and not (args.endpoint and args.model):
        raise NlueError("a server needs both --endpoint and --model")
    if not 0.0 <= args.min_devanagari <= 1.0:
        raise NlueError(f"--min-devanagari is a share from 0 to 1, got {args.min_devanagari}")
    if args.batch_size < 1 or args.retries < 0 or (args.limit is not None and args.limit < 1):
        raise NlueError("--batch-size and --limit must be at least 1, --retries at least 0")
    task = get_task(args.task)
    if not args.source.is_file():
        raise NlueError(f"--source {args.source}: file not found")
    split = resolve_split(args.source, args.split, task)
    choose_format(task, args.source, args.format)  # a file that is no source of the task fails before a model loads
    paths = run_paths(args.out, task, split)
    note_old_journal(paths.work / "journal.jsonl")
    with open_answer_store(args) as journal:
        translator = _translator(args, journal)
        report = run_translation(
            task, args.source, paths, translator, format_name=args.format,
            batch_size=args.batch_size, retries=args.retries, limit=args.limit, min_devanagari=args.min_devanagari,
            num_proc=args.num_proc,
        )  # fmt: skip
    rows = report["rows"]
    print(f"{paths.output}: {rows['written']} rows written of {rows['read']} read "
          f"({rows['rejected_on_read']} rejected on reading, {sum(rows['dropped_on_read'].values())} dropped, "
          f"{rows['rejected_in_translation']} failed translation, {rows['rejected_in_check']} failed the check, "
          f"{rows['rejected_by_script_filter']} failed the script filter)")  # fmt: skip
    print(f"rejects: {paths.rejects}\nreport: {paths.report}\n{answers_line(journal)}")
    usage = report["translator"].get("usage")
    if usage:
        cost = usage.get("estimated_cost")
        shown = "" if cost is None else f", ~{cost:.4f} est. cost"
        print(f"tokens this run: {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion{shown}")
    print(f"next: nlue build --source {args.out} --configs {task.name} --out <build folder>")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue translate` with ``argv`` (without the `translate` word); return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("review", "backtranslate"):  # the quality loop's own parser
        from nlue.translate.review_cli import main as review_main

        return review_main(argv)
    return run_with_parser("translate", build_parser(), argv, run)
