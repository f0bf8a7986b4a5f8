"""`nlue mcq ...`: curate scraped or OCR-extracted exam items, draw the demonstration pool, annotate.

    nlue mcq curate --task mcq_ur --input raw.jsonl more.csv --out curated/
    nlue mcq split --input curated/items.jsonl --out sources/mcq_ur --demo-size 200
    nlue mcq export-sheets --input curated/items.jsonl --out sheets/
    nlue mcq import-sheets --input curated/items.jsonl --sheets sheets/annotator_1.csv sheets/annotator_2.csv --out agreed/

Every command writes its outputs whole or not at all, and a JSON report beside them.
``split`` writes ``demo.jsonl`` and ``test.jsonl``, a config folder ``nlue build --source``
reads (``--configs mcq_ur``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.cli_support import (
    add_logging_options,
    run_with_parser,
)
from nlue.data.sources import read_records
from nlue.errors import NlueError
from nlue.pipelines.mcq_annotation import export_sheets, import_sheets
from nlue.pipelines.mcq_curation import (
    DEFAULT_POOL_SEED,
    DEFAULT_QUESTION_OVERLAP,
    DEFAULT_SHARED_OPTIONS,
    NearDuplicateRule,
    curate,
    overlapping,
    split_pool,
)
from nlue.registry.kinds.multiple_choice import MultipleChoiceKind
from nlue.registry.tasks import TASKS, get_task

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nlue mcq", description=__doc__.split("\n\n")[0])
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="action", required=True)
    exams = [name for name, task in TASKS.items() if isinstance(task.kind, MultipleChoiceKind)]
    cur = sub.add_parser("curate", help="check, normalise and de-duplicate raw items (report of drops by reason)")
    cur.add_argument("--task", required=True, choices=exams, help="the exam whose language and vocabularies apply")
    cur.add_argument("--input", nargs="+", type=Path, required=True, help="JSONL/JSON/CSV/TSV/Parquet files")
    cur.add_argument("--out", type=Path, required=True, help="folder for items.jsonl and curation_report.json")
    cur.add_argument("--numeric-keys", type=int, choices=(0, 1), help="keys given as 0- or 1-based numbers")
    cur.add_argument(
        "--question-overlap",
        type=float,
        default=DEFAULT_QUESTION_OVERLAP,
        help="near duplicates: least Jaccard overlap of question tokens (default %(default)s)",
    )
    cur.add_argument(
        "--shared-options",
        type=int,
        default=DEFAULT_SHARED_OPTIONS,
        help="near duplicates: least options in common, of 4 (default %(default)s)",
    )
    spl = sub.add_parser("split", help="draw the demonstration pool (demo.jsonl) and the test items (test.jsonl)")
    spl.add_argument("--input", type=Path, required=True)
    spl.add_argument("--out", type=Path, required=True, help="a config folder: <sources>/<config>")
    spl.add_argument("--demo-size", type=int, default=200, help="pool size (the paper's: %(default)s)")
    spl.add_argument("--seed", type=int, default=DEFAULT_POOL_SEED)
    exp = sub.add_parser("export-sheets", help="one annotation CSV per annotator (no keys shown)")
    exp.add_argument("--input", type=Path, required=True)
    exp.add_argument("--out", type=Path, required=True)
    exp.add_argument("--annotators", default="annotator_1,annotator_2", help="two names, comma-separated")
    imp = sub.add_parser("import-sheets", help="apply the two-annotator inclusion rule; agreement and kappa")
    imp.add_argument("--input", type=Path, required=True)
    imp.add_argument("--sheets", nargs=2, type=Path, required=True, metavar=("FIRST", "SECOND"))
    imp.add_argument("--out", type=Path, required=True)
    return parser  # fmt: skip


def _records(paths: Iterable[Path]) -> Iterable[tuple[str, int, Mapping[str, Any]]]:
    for path in paths:
        for row, record in read_records(path):
            yield str(path), row, record


def _items(path: Path) -> list[dict[str, Any]]:
    items = [dict(record) for _, _, record in _records([path])]
    if not items:
        raise NlueError(f"{path}: no items")
    return items


def write_json(path: Path, data: Any, lines: bool = False) -> Path:
    """Write JSON (or JSON lines) beside ``path`` and move it into place once complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            if lines:
                out.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in data)
            else:
                out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def run(args: argparse.Namespace) -> int:
    if args.action == "curate":
        rule = NearDuplicateRule(args.question_overlap, args.shared_options)
        items, report = curate(_records(args.input), get_task(args.task), numeric_keys=args.numeric_keys, rule=rule)
        write_json(args.out / "items.jsonl", items, lines=True)
        write_json(args.out / "curation_report.json", report.to_dict())
        print(f"{report.read} read, {report.kept} kept; dropped: {dict(report.dropped) or 'none'} -> {args.out}")
    elif args.action == "split":
        demo, test = split_pool(_items(args.input), args.demo_size, args.seed)
        assert not overlapping(demo, test)  # split_pool keeps a repeat with its pool item
        write_json(args.out / "demo.jsonl", demo, lines=True)
        write_json(args.out / "test.jsonl", test, lines=True)
        print(f"demo {len(demo)}, test {len(test)} (seed {args.seed}) -> {args.out}")
    elif args.action == "export-sheets":
        paths = export_sheets(_items(args.input), args.out, [n.strip() for n in args.annotators.split(",")])
        print("wrote " + ", ".join(map(str, paths)))
    else:
        kept, report = import_sheets(_items(args.input), *args.sheets)
        write_json(args.out / "items.jsonl", kept, lines=True)
        write_json(args.out / "annotation_report.json", report)
        agreement = report["agreement"]
        print(f"{report['retained']} of {report['annotated']} kept; dropped {report['dropped_by_reason']}; "
              f"observed agreement {agreement['observed']}, kappa (chance 1/4) {agreement['kappa_fixed_chance']}")  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue mcq` with ``argv`` (without the `mcq` word); return the exit status."""
    return run_with_parser("mcq", build_parser(), argv, run)
