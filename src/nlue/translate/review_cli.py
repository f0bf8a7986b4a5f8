"""`nlue translate review ...` and `nlue translate backtranslate`: the quality loop after a translation run.

nlue translate review export --task rte --out work              # review/sample.csv + RUBRIC.md
nlue translate review import --task rte --out work --sheets reviewer1.csv reviewer2.csv
nlue translate --task rte --source train.tsv ... --out work      # asks the batches sent back again
nlue translate backtranslate --task rte --out work --mt-model ./opus-mt-ne-en
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_support import (
    add_logging_options,
    command_parser,
    run_with_parser,
)
from nlue.data.translation_layout import backtranslation_dir, output_path, review_dir, work_dir
from nlue.errors import NlueError
from nlue.lm.backends import LANGUAGE_MODEL, TRANSLATOR
from nlue.lm.options import add_model_options, model_spec_from_args
from nlue.registry.tasks import TASKS, get_task
from nlue.registry.translation_sources import TRANSLATION_SOURCES
from nlue.translate.backtranslate import DEFAULT_MIN_ROWS, DEFAULT_SHARE, backtranslate
from nlue.translate.review import DEFAULT_MAX_UNACCEPTABLE, export_review, import_review


def _common(parser: argparse.ArgumentParser) -> None:
    tasks = [name for name in TASKS if name in TRANSLATION_SOURCES]
    parser.add_argument("--task", required=True, choices=tasks)
    parser.add_argument("--out", type=Path, required=True, help="the folder `nlue translate --out` wrote")
    parser.add_argument("--split", default="train", help="the split translated (%(default)s)")
    add_logging_options(parser)


def _sample(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--share", type=float, default=DEFAULT_SHARE, help="share of rows drawn (%(default)s)")
    parser.add_argument("--min-rows", type=int, default=DEFAULT_MIN_ROWS, help="at least this many (%(default)s)")
    parser.add_argument("--seed", type=int, default=42, help="seed of the draw (%(default)s)")


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue translate", __doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    review = sub.add_parser("review", help="export a review sample for native speakers, or import their verdicts")
    steps = review.add_subparsers(dest="step", required=True)
    export = steps.add_parser("export", help="write review/sample.csv and review/RUBRIC.md")
    _common(export)
    _sample(export)
    verdicts = steps.add_parser("import", help="read filled sheets; send back batches with too many bad rows")
    _common(verdicts)
    verdicts.add_argument("--sheets", type=Path, nargs="+", required=True, help="filled copies of sample.csv")
    verdicts.add_argument("--max-unacceptable", type=float, default=DEFAULT_MAX_UNACCEPTABLE,
                          help="a batch with a larger share of unacceptable reviewed rows is sent back (%(default)s)")  # fmt: skip
    back = sub.add_parser("backtranslate", help="back-translate a seeded sample with a second system; BLEU and chrF")
    _common(back)
    _sample(back)
    back.add_argument("--mt-model", help="a local Nepali-to-English translation checkpoint")
    back.add_argument("--src-lang", help="its source language code (NLLB: npi_Deva)")
    back.add_argument("--tgt-lang", help="its target language token (NLLB: eng_Latn, M2M: __en__)")
    add_model_options(back, roles=(LANGUAGE_MODEL, TRANSLATOR), required=False, journal=False,
                      model_help="with --endpoint: the model name the server knows")  # fmt: skip
    return parser


def _backtranslator(args: argparse.Namespace, folder: Path) -> tuple[Any, str, Any]:
    from nlue.lm.backends import TRANSLATOR
    from nlue.lm.factory import load_model, require
    from nlue.lm.options import note_old_journal, open_answer_store

    note_old_journal(folder / "journal.jsonl")
    journal = open_answer_store(args)
    if args.mt_model:
        spec = model_spec_from_args(args, journal=journal, model=args.mt_model, src_lang=args.src_lang,
                                    tgt_lang=args.tgt_lang)  # fmt: skip
        mt = load_model(spec, TRANSLATOR)
        return mt.translate_texts, mt.name, journal
    from nlue.translate.backtranslate import engine_back_translator

    lm = load_model(model_spec_from_args(args, journal=journal))
    require(lm, "generate", "back-translation")
    return engine_back_translator(lm), lm.name, journal


def run(args: argparse.Namespace) -> int:
    task = get_task(args.task)
    if args.split not in task.splits:
        raise NlueError(f"split {args.split!r} is not one of {task.name}'s splits ({', '.join(task.splits)})")
    output, work = output_path(args.out, task, args.split), work_dir(args.out, task, args.split)
    if args.action == "review" and args.step == "export":
        path = export_review(task, output, work, args.share, args.min_rows, args.seed)
        print(f"review sheet: {path}\nrubric: {review_dir(work) / 'RUBRIC.md'}")
        return 0
    if args.action == "review":
        summary = import_review(work, args.sheets, args.max_unacceptable)
        print(f"{summary['rows_reviewed']} rows reviewed, {summary['rows_unacceptable']} unacceptable; "
              f"batches sent back: {', '.join(summary['sent_back']) or 'none'}")  # fmt: skip
        if summary["sent_back"]:
            print("run the same nlue translate command again to translate them afresh")
        return 0
    if bool(args.mt_model) == bool(args.endpoint or args.model) or (args.endpoint and not args.model):
        raise NlueError("give either --mt-model (a local model) or --endpoint and --model (a server)")
    folder = backtranslation_dir(work)
    translate, system, journal = _backtranslator(args, folder)
    with journal:
        report = backtranslate(task, output, work, translate, system, args.share, args.min_rows, args.seed)
    print(json.dumps({"system": system, **report["scores"]}, ensure_ascii=False))
    print(f"report: {folder / 'report.json'}")
    from nlue.lm.answer_cache import answers_line

    print(answers_line(journal))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue translate review|backtranslate ...`; return the exit status."""
    return run_with_parser("translate", build_parser(), argv, run)
