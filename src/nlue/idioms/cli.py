"""`nlue idioms ...`: mine idiom contexts from a corpus, annotate them, draw the few-shot pool (neDIOM).

    nlue idioms mine --idioms idioms.txt --corpus oscar_ne.txt --out work/
    nlue idioms annotate-export --candidates work/candidates.jsonl --out sheets/ --annotators a1,a2
    nlue idioms annotate-import --candidates work/candidates.jsonl --sheets sheets/a1.csv sheets/a2.csv --out agreed/
    nlue idioms annotate-import ... --adjudication agreed/disagreements.csv   # once the adjudicator filled it in
    nlue idioms split --input agreed/items.jsonl --out sources/nediom
    nlue build --source sources --configs nediom --name nediom --out build

Every command writes its outputs whole or not at all (beside their place, then moved),
and a JSON report beside them. ``split`` writes ``train.jsonl`` (the few-shot pool) and
``test.jsonl``, a config folder ``nlue build --source`` reads.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_support import (
    accept_both_spellings,
    add_logging_options,
    configure_logging,
    parse_or_exit_code,
    run_command,
)
from nlue.data.sources import read_records
from nlue.errors import NlueError
from nlue.idioms.annotate import export_sheets, import_annotations, write_disagreements
from nlue.idioms.corpus import open_corpus
from nlue.idioms.mine import CANDIDATES_NAME, REPORT_NAME, mine, read_idioms
from nlue.idioms.split import draw_pool
from nlue.pipelines.mcq_cli import write_json
from nlue.registry.nediom import DEFAULT_POOL_SEED, SHOTS_PER_LABEL

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nlue idioms", description=__doc__.split("\n\n")[0])
    add_logging_options(parser, quiet_help="no progress bar; warnings and errors only")
    sub = parser.add_subparsers(dest="action", required=True)
    m = sub.add_parser(
        "mine", help="find idioms in their inflected forms (truncated prefix); write S1/S2/S3 candidates"
    )
    m.add_argument("--idioms", type=Path, required=True, help="one idiom per line, citation form (# comments)")
    m.add_argument(
        "--corpus",
        required=True,
        help="a .txt/.jsonl/.parquet file, a folder of Parquet, a saved dataset, or a Hub dataset id",
    )
    m.add_argument("--out", type=Path, required=True, help=f"folder for {CANDIDATES_NAME} and {REPORT_NAME}")
    m.add_argument("--text-column", default="text", help="the documents' column (JSONL, Parquet, datasets)")
    m.add_argument(
        "--line-documents",
        action="store_true",
        help=".txt: every line is a document (default: documents are separated by blank lines)",
    )
    m.add_argument("--corpus-config", help="a Hub dataset's config, e.g. ne for OSCAR-2201")
    m.add_argument("--corpus-split", default="train", help="a dataset's split (default: %(default)s)")
    m.add_argument(
        "--no-suppletive",
        dest="suppletive",
        action="store_false",
        help="the paper's single first letter for हुनु and जानु too (default: also their suppletive initials छ/थ/भ and ग)",
    )
    e = sub.add_parser("annotate-export", help="one annotation sheet (CSV) per annotator")
    e.add_argument("--candidates", type=Path, required=True, help=f"the {CANDIDATES_NAME} that mining wrote")
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--annotators", default="annotator_1,annotator_2", help="two or more names, comma-separated")
    i = sub.add_parser("annotate-import", help="labels I/L/NA and spans from the sheets: kappa, disagreements, items")
    i.add_argument("--candidates", type=Path, required=True)
    i.add_argument("--sheets", nargs="+", type=Path, required=True, help="the annotators' filled sheets (2 or more)")
    i.add_argument("--adjudication", type=Path, help="a filled copy of disagreements.csv (label, position)")
    i.add_argument("--out", type=Path, required=True, help="folder for items.jsonl, disagreements.csv and a report")
    s = sub.add_parser("split", help="draw the few-shot pool (train.jsonl) over whole idioms; the rest is test.jsonl")
    s.add_argument("--input", type=Path, required=True, help="items.jsonl from annotate-import")
    s.add_argument("--out", type=Path, required=True, help="a config folder: <sources>/<config>")
    s.add_argument("--per-label", type=int, default=max(SHOTS_PER_LABEL), help="pool items per label (%(default)s)")
    s.add_argument("--seed", type=int, default=DEFAULT_POOL_SEED)
    for command in (m, e, i, s):  # the logging flags after the action's name too
        add_logging_options(command, quiet_help="no progress bar; warnings and errors only")
    return parser  # fmt: skip


def _items(path: Path) -> list[dict[str, Any]]:
    items = [dict(record) for _, record in read_records(path)]
    if not items:
        raise NlueError(f"{path}: no items")
    return items


def run(args: argparse.Namespace) -> int:
    if args.action == "mine":
        corpus = open_corpus(args.corpus, args.text_column, args.line_documents, args.corpus_config, args.corpus_split)
        report = mine(read_idioms(args.idioms), corpus, args.out, args.suppletive, show_progress=not args.quiet)
        print(f"{report['documents']} documents, {report['candidates']} candidates for {report['idioms_found']} of "
              f"{report['idioms']} idioms ({report['repeats_dropped']} repeats dropped) -> {args.out}")  # fmt: skip
    elif args.action == "annotate-export":
        names = [n.strip() for n in args.annotators.split(",") if n.strip()]
        paths = export_sheets(_items(args.candidates), args.out, names)
        print("wrote " + ", ".join(map(str, paths)))
    elif args.action == "annotate-import":
        kept, disagreements, report = import_annotations(_items(args.candidates), args.sheets, args.adjudication)
        write_json(args.out / "items.jsonl", kept, lines=True)
        write_disagreements(args.out / "disagreements.csv", disagreements, report["annotators"])
        write_json(args.out / "annotation_report.json", report)
        agreement = report["agreement"]
        print(f"{report['kept']} items kept ({report['kept_labels']}), {report['dropped_na']} NA dropped, "
              f"{report['unresolved']} disagreements to adjudicate; {agreement['statistic']} {agreement['kappa']}, "
              f"unanimous {agreement['unanimous_labels']}, same span {agreement['span_agreement']} -> {args.out}")  # fmt: skip
    else:
        pool, test = draw_pool(_items(args.input), args.per_label, args.seed)
        write_json(args.out / "train.jsonl", pool, lines=True)
        write_json(args.out / "test.jsonl", test, lines=True)
        print(f"train (few-shot pool) {len(pool)}, test {len(test)} (seed {args.seed}) -> {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue idioms` with ``argv`` (without the `idioms` word); return the exit status."""
    args = parse_or_exit_code(accept_both_spellings(build_parser()), sys.argv[1:] if argv is None else argv)
    if isinstance(args, int):
        return args
    configure_logging(getattr(args, "verbose", False), getattr(args, "quiet", False))
    return run_command("idioms", lambda: run(args))
