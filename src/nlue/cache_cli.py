"""`nlue cache`: what the answer cache holds, and making it smaller.

    nlue cache report                                rows and bytes per model, answerer and kind
    nlue cache prune --older-than 90 --dry-run       what answers unused for 90 days would go
    nlue cache prune --model openai:my-served-model  every answer of one model name
    nlue cache import build/results/journals/*.jsonl the answers of an older nlue's journals

Every LLM command (nlue llm, nlue translate, nlue idioms eval) keeps each answer in the cache,
``answers.sqlite`` in the cache dir: --cache-dir, else $NLUE_ANSWER_CACHE, else $NLUE_CACHE, else $XDG_CACHE_HOME/nlue,
else ~/.cache/nlue. A rerun, a new report or a second sweep over the same cells asks nothing
already answered. Pruning only costs requests asked again; it never changes a result.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from nlue.cli_support import add_logging_options, command_parser, run_with_parser
from nlue.errors import NlueError


def _where(parser: argparse.ArgumentParser, journal_help: str) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--cache-dir", type=Path, help="the cache's folder (default: as the LLM commands find it)")
    group.add_argument("--journal", type=Path, metavar="FILE", help=journal_help)


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue cache", __doc__)
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    report = sub.add_parser("report", help="rows and bytes per model, answerer and kind; oldest and newest; total")
    _where(report, "a cache of a run's own (--journal FILE of an LLM command)")
    add_logging_options(report)
    prune = sub.add_parser("prune", help="remove answers (by age, model, kind) and give their space back")
    _where(prune, "a cache of a run's own (--journal FILE of an LLM command)")
    prune.add_argument("--older-than", type=float, metavar="DAYS", help="answers not used for DAYS days")
    prune.add_argument("--model", metavar="NAME", help="answers of one model name, as the report shows it")
    prune.add_argument("--kind", help="answers of one request kind: loglikelihood, generate, translate")
    prune.add_argument("--all", action="store_true", help="every answer (when no other filter is given)")
    prune.add_argument("--dry-run", action="store_true", help="say what would be removed; remove nothing")
    add_logging_options(prune)
    imported = sub.add_parser("import", help="add the answers of older nlue journals (JSON lines) to the cache")
    imported.add_argument("journals", nargs="+", type=Path, metavar="JOURNAL", help="journal files (.jsonl)")
    _where(imported, "import into this file (a cache of a run's own) instead of the shared cache")
    add_logging_options(imported)
    return parser


def _open(args: argparse.Namespace, *, create: bool) -> object:
    from nlue.lm.answer_cache import AnswerCache, cache_path

    path = args.journal or cache_path(args.cache_dir)
    if not create and not path.is_file():
        raise NlueError(f"no answer cache at {path}: nothing has been asked yet (or give --cache-dir/--journal)")
    return AnswerCache(path)


def run(args: argparse.Namespace) -> int:
    from nlue.lm import cache_admin

    if args.action == "import":
        with _open(args, create=True) as cache:
            for journal in args.journals:
                done = cache_admin.import_journal(cache, journal)
                print(f"{journal}: {done.added} answers added to {cache.path}, {done.already} already there, "
                      f"{done.skipped} skipped (keyed as an older nlue did, so never found)")  # fmt: skip
        return 0
    if args.action == "report":
        with _open(args, create=False) as cache:
            print(cache_admin.report_text(cache))
        return 0
    filters = {"model": args.model, "kind": args.kind, "older_than_days": args.older_than}
    if all(value is None for value in filters.values()) and not args.all:
        raise NlueError("say what to prune: --older-than DAYS, --model NAME, --kind KIND, or --all for everything")
    with _open(args, create=False) as cache:
        done = cache_admin.prune(cache, dry_run=args.dry_run, **filters)
        rows = sum(g.rows for g in done.groups)
        if not done.groups:
            print(f"nothing to prune in {cache.path}")
            return 0
        print("\n".join(cache_admin.groups_text(done.groups)))
        if args.dry_run:
            print(f"would remove {rows} answers from {cache.path} (--dry-run: nothing removed)")
        else:
            print(f"removed {done.removed} answers from {cache.path}; the file went from "
                  f"{cache_admin.human_bytes(done.bytes_before)} to {cache_admin.human_bytes(done.bytes_after)}")  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue cache report|prune|import ...`; return the exit status."""
    return run_with_parser("cache", build_parser, argv, run)
