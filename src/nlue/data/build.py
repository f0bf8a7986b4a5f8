"""The builder: raw source files -> a Hub-ready `datasets` Parquet repo with a card.

One pass per split streams rows through validation and normalisation, removes exact
duplicates from train and validation and validation items that leak from train, and
writes Parquet shards. The test split is kept as released: its items that also occur in
train or validation, and its own repeats, are counted, not removed, unless the user asks
(``drop_leaked_test``); near-duplicates and inputs shared field by field are counted too
(:mod:`nlue.data.overlap`). Everything goes to a staging folder that replaces the output
only when the whole build succeeded, so a failed build leaves nothing behind. A build
that is killed (and so cannot clean up) leaves its staging folder; the next build into
the same place removes it, recognising it by an owner marker (:mod:`nlue.data.staging`).
A build killed while it swaps its output in leaves a journal, and the next build (or a
load) finishes the swap (:mod:`nlue.data.swap`).

Each config is built by :class:`nlue.data.config_builder.ConfigBuilder`, or, for kinds whose
row rules apply column-wise (classification, regression), by its columnar form
:class:`nlue.data.columnar_builder.ColumnarConfigBuilder`, which gives the same outputs a
batch of Arrow rows at a time; sources are found
by :mod:`nlue.data.discover`, rows checked by :mod:`nlue.data.rows` (the task kind's
rules), validation carved by :mod:`nlue.data.carve`, the card written by
:mod:`nlue.data.card`.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from nlue.data.columnar import supports_columnar
from nlue.data.columnar_builder import ColumnarConfigBuilder
from nlue.data.config_builder import ConfigBuilder
from nlue.data.label_votes import CONFLICT_RULES
from nlue.data.ownership import check_replaceable, write_build_marker
from nlue.data.report import (
    ENGINES,
    REJECTS_SUFFIX,
    REPORT_SUFFIX,
    BuildOptions,
    BuildResult,
    ConfigReport,
    TaskSources,
)
from nlue.data.rows import check_mapping
from nlue.data.source_file import regular_file_state
from nlue.data.staging import remove_stale_build_folders, write_owner_marker
from nlue.data.swap import card_digest, finish_interrupted_swap, folders_in_swap, swap_into_place
from nlue.errors import NlueError
from nlue.registry.task_file.carry import write_carried_task_files
from nlue.registry.tasks import TASKS, benchmark_of

logger = logging.getLogger(__name__)


def build_repo(sources: Sequence[TaskSources], out_dir: Path, options: BuildOptions) -> BuildResult:
    """Build every config in ``sources`` into ``out_dir/<name>`` (+ report and rejects beside it)."""
    from nlue.data.card import write_dataset_card  # the card imports huggingface_hub; keep import local

    if not sources:
        raise NlueError("nothing to build: no configs given")
    if options.engine not in ENGINES:
        raise NlueError(f"unknown build engine {options.engine!r}; expected one of {', '.join(ENGINES)}")
    if options.conflicts not in CONFLICT_RULES:
        raise NlueError(f"unknown --conflicts rule {options.conflicts!r}; expected one of {', '.join(CONFLICT_RULES)}")
    if not 0.0 < options.validation_fraction < 1.0:
        raise NlueError(f"--validation-fraction must be between 0 and 1, got {options.validation_fraction}")
    for task_sources in sources:  # refused before any file is read: a mapping that cannot apply, and
        for mapping in task_sources.mappings:
            check_mapping(task_sources.task, mapping)
        for split_files in task_sources.files.values():
            for path in split_files:
                regular_file_state(path)  # a missing file, or a pipe or device that would hang the read
    out_dir.mkdir(parents=True, exist_ok=True)
    # A build killed while it swapped its output in left a journal: finish that swap first, so
    # that this build replaces a whole output (and its staging folder is not swept as stale).
    finished = finish_interrupted_swap(out_dir, options.name)
    if finished is not None:
        logger.warning("%s", finished)
    check_replaceable(out_dir, options.name)  # before any source is read: never replace what is not ours
    # Staging folders only ever hold an unfinished build, so a dead one can go before this
    # build needs the disk space; retired (".old-") folders may hold the only copy of the
    # previous output when a move was cut short, so they go only after this build is in place.
    remove_stale_build_folders(out_dir, options.name, ("staging",), keep=folders_in_swap(out_dir, options.name))
    staging = Path(tempfile.mkdtemp(prefix=f".{options.name}.staging-", dir=out_dir))
    try:
        write_owner_marker(staging)
        repo = staging / options.name
        repo.mkdir()
        rejects_path = staging / f"{options.name}{REJECTS_SUFFIX}"
        configs: dict[str, ConfigReport] = {}
        rejects = 0
        with rejects_path.open("w", encoding="utf-8") as rejects_file:
            for task_sources in sorted(sources, key=lambda s: list(TASKS).index(s.task.name)):
                builder_type = ConfigBuilder
                if options.engine == "columnar" and supports_columnar(task_sources.task):
                    builder_type = ColumnarConfigBuilder
                builder = builder_type(task_sources, repo / task_sources.task.name, options, rejects_file)
                configs[task_sources.task.name] = builder.build()
                rejects += builder.rejects_written
        # The user's task files go with their data (shipped tasks are the package's): whoever reads the repo
        # later knows its tasks (nlue.registry.task_file.carry).
        tasks = [cfg.task for cfg in configs.values()]
        carried = write_carried_task_files(repo, tasks, benchmark_of(tasks[0]))
        write_dataset_card(repo, configs, options, carried)
        write_build_marker(repo, options.name, card_digest(repo))
        report_path = staging / f"{options.name}{REPORT_SUFFIX}"
        report = {
            "name": options.name,
            "seed": options.seed,
            "validation_fraction": options.validation_fraction,
            "is_sample": options.is_sample,
            "drop_leaked_test": options.drop_leaked_test,
            "conflicts": options.conflicts,
            "rejects": rejects,
            "task_files": carried,
            "card_sha256": card_digest(repo),  # which repo this report describes
            "configs": {name: cfg.to_dict() for name, cfg in configs.items()},
        }
        report_path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        check_replaceable(out_dir, options.name)  # again: something may have been put there while we built
        swap_into_place(staging, out_dir, options.name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    remove_stale_build_folders(out_dir, options.name, ("old",), keep=folders_in_swap(out_dir, options.name))
    return BuildResult(
        repo_dir=out_dir / options.name,
        report_path=out_dir / f"{options.name}{REPORT_SUFFIX}",
        rejects_path=out_dir / f"{options.name}{REJECTS_SUFFIX}",
        configs=configs,
        rejects=rejects,
    )
