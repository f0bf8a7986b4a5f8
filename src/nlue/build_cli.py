"""`nlue build`: a Hub-ready Parquet dataset repo with its card, from the sample, a source folder, one
config's files, or task files that declare their data."""

from __future__ import annotations

import argparse
from pathlib import Path

from nlue.cli_lists import add_name_list, task_names
from nlue.cli_support import TASK_FILE_HELP, add_logging_options
from nlue.errors import NlueError


def add_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build",
        help="build a Hub-ready Parquet dataset repo with a card",
        description=(
            "Validate, normalise, de-duplicate and split source files into <out>/<name>/ "
            "(Parquet per config and split, plus README.md card). With no source, builds the "
            "embedded SAMPLE data. A report and a rejects file are written beside the repo."
        ),
    )
    src = p.add_argument_group("sources (default: the embedded sample data)")
    src.add_argument("--task-file", action="append", type=Path, default=[], metavar="FILE",
                     help=f"{TASK_FILE_HELP}; without --task, builds the files' tasks from the data they declare "
                     "(data:), --source's files winning for the splits they hold")  # fmt: skip
    src.add_argument("--source", type=Path, help="folder of <config>/<split>.<csv|tsv|json|jsonl|parquet>")
    src.add_argument("--task", help="build one config from the files given by --train/--validation/--test")
    for split in ("train", "validation", "test"):
        src.add_argument(f"--{split}", type=Path, action="append", metavar="FILE", help=f"{split} file (repeatable)")
    add_name_list(src, "--configs", valid=task_names(), what="config",
                  help="configs to build from --source or the sample (default: all)")  # fmt: skip
    maps = p.add_argument_group("other schemas (with --task)")
    maps.add_argument("--column-map", default="", help="FIELD=COLUMN pairs, e.g. text=review,label=sentiment")
    maps.add_argument(
        "--label-map",
        default="",
        help="SOURCE=TARGET pairs; TARGET is a label name or id, or 'drop'. "
        "Write --label-map=-1=negative,... when a key starts with '-'",
    )
    maps.add_argument(
        "--category-map",
        default="",
        help="GMET: SOURCE=Category pairs mapping a release's category values to the paper's 75 categories "
        "(an English name or its number 1-75 in `nlue tasks --gmet-categories` order), or a .csv/.json file "
        "of such pairs; also applies to the gmet folder of --source",
    )
    out = p.add_argument_group("output")
    out.add_argument("--out", type=Path, required=True, help="folder that receives <name>/ and its report")
    out.add_argument("--name", help="repo folder name (default: nlue; for tasks of your own, their benchmark's name)")
    out.add_argument("--repo-id", help="Hub id shown in the card's examples (default: the folder name)")
    out.add_argument("--license", help="license id for the card (default: apache-2.0 for the sample; for tasks of "
                     "your own, the one their task files declare; else other)")  # fmt: skip
    out.add_argument("--seed", type=int, default=42, help="seed for carving validation from train (default: 42)")
    out.add_argument(
        "--validation-fraction", type=float, default=0.1, help="share of train held out when a source has no validation"
    )
    out.add_argument("--max-shard-mb", type=float, default=256, help="Parquet shard size cap in MB (default: 256)")
    out.add_argument("--strict", action="store_true", help="stop at the first bad row instead of rejecting it")
    out.add_argument(
        "--drop-leaked-test",
        action="store_true",
        help="remove test items whose inputs also occur in train or validation (default: keep the test set "
        "as released and count them in the report and card)",
    )
    out.add_argument("--conflicts", choices=("majority", "keep-first"), default="majority",
                     help="an input given several labels keeps its majority label (a tie drops it) or its first")  # fmt: skip
    add_logging_options(p, quiet_help="no progress bars; warnings and errors only")
    p.set_defaults(func=cmd_build)


def cmd_build(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from nlue.data.discover import task_sources_from_folder
    from nlue.data.mapping import FieldMapping, parse_category_map, parse_pairs
    from nlue.data.report import TaskSources
    from nlue.data.sample import sample_data_dir
    from nlue.registry.tasks import get_task

    split_files = {s: getattr(args, s) for s in ("train", "validation", "test") if getattr(args, s)}
    configs = args.configs  # checked against the registry while parsing
    if args.task_file and not args.task:
        return _build_declared(args, split_files)
    if args.task:
        if args.source or configs:
            raise NlueError("--task builds one config from --train/--validation/--test; do not combine it with "
                            "--source or --configs")  # fmt: skip
        if not split_files:
            raise NlueError("--task needs at least one of --train, --validation, --test")
        if args.category_map and not get_task(args.task).categories:
            raise NlueError(f"--category-map applies to gmet (a task with categories); --task is {args.task!r}")
        mapping = FieldMapping(
            parse_pairs(args.column_map, "--column-map"),
            parse_pairs(args.label_map, "--label-map"),
            parse_category_map(args.category_map) if args.category_map else {},
        )
        sources = [TaskSources(get_task(args.task), split_files, mapping)]
        is_sample = False
    else:
        if split_files:
            raise NlueError("--train/--validation/--test need --task")
        if args.column_map or args.label_map:
            raise NlueError("--column-map/--label-map apply to one config: use them with --task")
        root = args.source or sample_data_dir()
        is_sample = args.source is None
        sources = task_sources_from_folder(root, configs)
        if args.category_map:
            # The map applies to the tasks that declare categories (GMET).
            if not any(s.task.categories for s in sources):
                raise NlueError("--category-map applies to gmet, which this build does not include")
            categories = parse_category_map(args.category_map)
            sources = [
                replace(s, mapping=FieldMapping(categories=categories)) if s.task.categories else s for s in sources
            ]
    return _build(args, sources, is_sample)


def _build_declared(args: argparse.Namespace, split_files: dict[str, list[Path]]) -> int:
    """`nlue build --task-file FILE`: the files' tasks (or --configs) from their declared data and --source."""
    from nlue.data.declared_sources import declared_sources
    from nlue.data.discover import discover_sources
    from nlue.registry.task_file.activate import declared_tasks
    from nlue.registry.tasks import get_task

    if split_files or args.column_map or args.label_map:
        raise NlueError("--train/--validation/--test and --column-map/--label-map go with --task; a task file "
                        "declares its splits and their maps under data:")  # fmt: skip
    names = args.configs or [task.name for task in declared_tasks(args.task_file)]
    tasks = [get_task(name) for name in names]
    benchmarks = sorted({task.benchmark for task in tasks})
    if len(benchmarks) > 1:
        raise NlueError(f"the tasks {', '.join(names)} belong to the benchmarks {', '.join(benchmarks)}; one build is "
                        "one benchmark's dataset repo: build each separately (--configs), or declare one benchmark "
                        "file that lists them")  # fmt: skip
    found = discover_sources(args.source) if args.source else {}
    with declared_sources(tasks, found) as sources:
        return _build(args, sources, False)


def _build(args: argparse.Namespace, sources: list, is_sample: bool) -> int:
    from nlue.data.build import build_repo
    from nlue.data.report import BuildOptions
    from nlue.data.summary import build_summary
    from nlue.registry.task_file.load import is_user_task

    # A user's benchmark (tasks of task files) is named after itself and takes the licence its files declare.
    tasks = [source.task for source in sources]
    users = bool(tasks) and all(is_user_task(task) for task in tasks)
    licences = {task.license for task in tasks}
    name = tasks[0].benchmark if users else "nlue"
    license = licences.pop() if users and len(licences) == 1 else None
    options = BuildOptions(
        name=args.name or name,
        seed=args.seed,
        validation_fraction=args.validation_fraction,
        max_shard_bytes=int(args.max_shard_mb * 1024 * 1024),
        strict=args.strict,
        is_sample=is_sample,
        license=args.license or license or ("apache-2.0" if is_sample else "other"),
        repo_id=args.repo_id,
        show_progress=not args.quiet,
        drop_leaked_test=args.drop_leaked_test,
        conflicts=args.conflicts,
    )
    result = build_repo(sources, args.out, options)
    print(build_summary(result))
    return 0
