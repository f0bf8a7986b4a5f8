"""`nlue contamination --dataset D --corpus C`: which test items (or their English sources) a corpus holds.

    nlue contamination --dataset build/nlue --corpus oscar_ne.jsonl --num-proc 8
    nlue contamination --dataset build/nlue --corpus crawl/ --text-field content --sources translations/
    nlue contamination --dataset me/nlue --corpus uonlp/CulturaX --corpus-config ne --num-proc 16

Every test item is cut into word 13-grams (lowercased whitespace words, as lm-evaluation-harness) and into
character n-grams of its text normalised by the task's language profile; the corpus is streamed past them
(text: one document per line; JSONL, Parquet: --text-field; a folder of those; a Hub dataset, streamed).
An item is contaminated when one corpus document holds any of its word n-grams, or at least
--char-threshold of its character n-grams. With --sources (the <config>/<split>.translated.jsonl files
nlue translate wrote), the English text each item was translated from is checked too, as "source in
corpus". The findings go to <results-dir>/contamination/<dataset>/<corpus>.json (another split or some
tasks only: a file of its own, named after them), item by item, where
`nlue report` and the Space find them and score every run of the folder on the clean items too;
docs/guides/contamination.md says what each number means and what the check cannot see.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from nlue.cli_lists import add_name_list, task_names
from nlue.cli_support import (
    add_logging_options,
    add_settings_options,
    add_task_file_option,
    run_with_parser,
    settings_from,
)
from nlue.errors import NlueError
from nlue.evals.contamination.corpus import CorpusSpec
from nlue.evals.contamination.findings_file import default_path, findings_document, write_findings
from nlue.evals.contamination.items import dataset_tasks, english_sources, task_items
from nlue.evals.contamination.measures import Settings, build_indexes
from nlue.evals.contamination.scan import scan_corpus
from nlue.results import RESULTS_DIR_HELP, default_results_dir
from nlue.text.safe import terminal_safe

logger = logging.getLogger(__name__)

COLUMNS = (("task", None), ("items", "items"), ("by word n-grams", "by_word"), ("by char n-grams", "by_char"),
           ("contaminated", "contaminated"), ("not checked", "not_checked"), ("with source", "with_source"),
           ("source in corpus", "source_in_corpus"))  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue contamination",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dataset", required=True, help="built dataset: folder, Hub id, or 'sample' (the embedded one)"
    )
    parser.add_argument("--corpus", required=True, help="text/JSONL/Parquet file (.gz allowed), a folder, or a Hub id")
    add_name_list(parser, "--tasks", valid=task_names(), what="task", help="only these tasks (default: every one)")
    parser.add_argument("--split", default="test", help="the split checked (%(default)s)")
    parser.add_argument(
        "--text-field", default="text", help="the text field of JSONL/Parquet/Hub records (%(default)s)"
    )
    parser.add_argument(
        "--id-field", default="id", help="a record's id, named in the findings when present (%(default)s)"
    )
    parser.add_argument("--corpus-config", help="the Hub corpus's config (a language, for OSCAR, CulturaX, mC4)")
    parser.add_argument("--corpus-split", default="train", help="the Hub corpus's split (%(default)s)")
    parser.add_argument("--sources", type=Path, action="append", default=[], metavar="PATH",
                        help="nlue translate's <config>/<split>.translated.jsonl files or their folder: the English "
                        "source of each item is checked too (repeatable)")  # fmt: skip
    add_settings_options(parser, Settings)
    parser.add_argument("--num-proc", type=int, default=1, help="worker processes (0: every core; %(default)s)")
    parser.add_argument("--results-dir", type=Path, help=RESULTS_DIR_HELP)
    parser.add_argument("--out", type=Path, help="write the findings here instead")
    add_task_file_option(parser)
    add_logging_options(parser)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    settings = settings_from(args, Settings)
    if settings.word_n < 1 or settings.min_words < 1 or settings.char_n < 2 or settings.max_documents < 0:
        raise NlueError("--word-n and --min-words must be 1 or more, --char-n 2 or more, --max-documents 0 or more")
    if not 0 < settings.char_threshold <= 1:
        raise NlueError(f"--char-threshold {settings.char_threshold}: expected a share above 0, at most 1")
    return settings


def table(counts: dict[str, dict[str, int]]) -> str:
    rows = [tuple(title for title, _ in COLUMNS)]
    rows += [(task, *(str(c[key]) for _, key in COLUMNS[1:])) for task, c in counts.items()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def run(args: argparse.Namespace) -> int:
    from nlue.data.access import is_sample

    settings = _settings(args)
    num_proc = (os.cpu_count() or 1) if args.num_proc == 0 else args.num_proc
    if num_proc < 0:
        raise NlueError(f"--num-proc {args.num_proc}: expected 0 (every core) or more")
    dataset = args.dataset
    tasks = dataset_tasks(None if dataset == "sample" else dataset, args.tasks, args.split)
    sources = english_sources(args.sources, tasks) if args.sources else {}
    items = [item for task in tasks for item in task_items(dataset, task, args.split, sources.get(task.name))]
    if args.sources and not any(item.sources for item in items):
        logger.warning("--sources: no item's text matched a translated row; no source is checked")
    indexes = build_indexes(items, settings)
    spec = CorpusSpec(args.corpus, args.text_field, args.id_field, args.corpus_config, args.corpus_split)
    started = time.perf_counter()
    findings = scan_corpus(
        spec, indexes, len(items), settings, num_proc, show_progress=not getattr(args, "quiet", False)
    )
    seconds = time.perf_counter() - started
    described = {"id": dataset, "split": args.split, "is_sample": is_sample(None if dataset == "sample" else dataset)}
    document = findings_document(items, findings, {k: v.gram_counts for k, v in indexes.items()}, settings,
                                 described, args.corpus)  # fmt: skip
    results_dir = args.results_dir or default_results_dir()
    out = args.out or default_path(results_dir, dataset, args.corpus, args.corpus_config, args.split, args.tasks)
    write_findings(out, document)
    counts = {task: entry["counts"] for task, entry in document["tasks"].items()}
    print(terminal_safe(table(counts), limit=None))
    rate = findings.documents / seconds if seconds > 0 else 0.0
    print(terminal_safe(f"corpus: {findings.documents} documents, {findings.characters} characters in {seconds:.1f} s "
                        f"({rate:,.0f} documents/s, {num_proc} process(es))"))  # fmt: skip
    print(f"contaminated: one document holds any word {settings.word_n}-gram of the item, or at least "
          f"{settings.char_threshold:g} of its character {settings.char_n}-grams; n-grams see no paraphrase "
          "and no translation (only --sources checks the English originals)")  # fmt: skip
    print(terminal_safe(f"written: {out}"))
    if args.out is None:  # beside the runs: the report and the Space rescore them on the clean items
        print(terminal_safe(f"scores on the clean items: nlue report {results_dir} (and the Space on that folder)"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue contamination` with ``argv`` (without the `contamination` word); return the exit status."""
    return run_with_parser("contamination", build_parser, argv, run)
